import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for front-end teams, our own tests and our own pages, generated from the committed schema.graphql.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: true,
  generates: {
    'generated/gql/': {
      documents: ['test/**/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        // ESM: the generated files import each other with `.js` (`./graphql.js`), as Node's ESM resolution and
        // TypeScript's nodenext require; true would write extensionless CommonJS-style imports (docs/graphql.md).
        emitLegacyCommonJSImports: false,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', Decimal: 'string', Metadata: 'Record<string, string>' },
      },
    },
    // The checkout page and the dashboard (src/web/client): documents as plain strings, so the browser needs no
    // GraphQL library to send them.
    'generated/gql-web/': {
      documents: ['src/web/client/**/*.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        documentMode: 'string',
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', Decimal: 'string', Metadata: 'Record<string, string>' },
      },
    },
  },
};

export default config;
