import { defineConfig } from 'prisma/config';

// DATABASE_URL: postgresql://... (production) or pglite:<dataDir> (embedded, the default).
// `pglite:` URLs work through the wasm schema-engine shim (scripts/prisma-schema-engine.mjs).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: {
    url: process.env['DATABASE_URL'] ?? 'pglite:./data/pglite',
  },
});
