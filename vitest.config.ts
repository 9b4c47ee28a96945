import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// Pothos/Yoga load graphql's CJS build through Node; pin bare `graphql` imports in Vite-transformed
// files to that same file, or graphql sees two realms ("Cannot use GraphQLObjectType from another module").
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

export default defineConfig({
  resolve: {
    alias: [{ find: /^graphql$/, replacement: graphqlEntry }],
  },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores here and in CI: most of the suite waits on child processes and databases, so two files at once.
    maxWorkers: 2,
    isolate: false,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
