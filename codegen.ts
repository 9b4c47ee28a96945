import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for front-end teams and our own tests, generated from the committed schema.graphql.
const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/**/*.graphql'],
  ignoreNoDocuments: true,
  generates: {
    'generated/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        emitLegacyCommonJSImports: false,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', Decimal: 'string' },
      },
    },
  },
};

export default config;
