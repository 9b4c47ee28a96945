// @graphql-eslint's schema-recommended and schema-relay rule sets over the committed schema.graphql: zero findings.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import graphqlPlugin from '@graphql-eslint/eslint-plugin';
import { ESLint, type Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * Value objects with no identity of their own: each lives inside an object that has one (an invoice's content,
 * a page's info, an error's details), so caches store it under that parent. docs/graphql.md lists them.
 */
const VALUE_TYPES = [
  'ClientNotifications',
  'CompanyAssetSetting',
  // A key with its token, answered once by createApiKey: the key itself (an ApiKey node) is inside.
  'CreatedApiKey',
  // The dashboard overview's aggregates: computed figures, nothing a client caches by identity.
  'DailyReceived',
  'InvoiceOverview',
  'InvoiceStatusCount',
  // A tenant has one payout policy, read and set as a whole; likewise the sandbox swap venue's settings.
  'PayoutPolicy',
  'SandboxSwapVenue',
  'PendingPayoutPolicy',
  // An account has one store, read and changed as a whole (docs/api-decisions.md, "Store settings").
  'StoreSettings',
  'ErrorDetail',
  'ExchangeRate',
  'ExportLink',
  'InvoiceContent',
  'InvoiceItem',
  'MerchantNotifications',
  'Money',
  'PageInfo',
  'PaymentDetails',
  'RateDetails',
  'RatePrice',
  'RateSourcePrice',
  'SandboxClock',
  'WebhookTestResult',
  'WithdrawalQuote',
];

/** The mutation results the errors plugin generates around each payload. */
const GENERATED_WRAPPERS = '/(Result|Success)$/';

const configFor = (schema: string): Linter.Config[] => [
  {
    files: ['**/*.graphql'],
    languageOptions: { parser: graphqlPlugin.parser, parserOptions: { graphQLConfig: { schema } } },
    plugins: { '@graphql-eslint': graphqlPlugin as never },
    rules: {
      ...graphqlPlugin.configs['flat/schema-recommended'].rules,
      ...graphqlPlugin.configs['flat/schema-relay'].rules,
      // Field-level descriptions everywhere (`rootField` misses fields when a schema has several root types).
      '@graphql-eslint/require-description': [
        'error',
        {
          types: true,
          FieldDefinition: true,
          InputValueDefinition: true,
          EnumValueDefinition: true,
          DirectiveDefinition: true,
          ignoredSelectors: [`[type=ObjectTypeDefinition][name.value=${GENERATED_WRAPPERS}]`, `[type=UnionTypeDefinition][name.value=${GENERATED_WRAPPERS}]`],
        },
      ],
      '@graphql-eslint/strict-id-in-types': [
        'error',
        { acceptedIdNames: ['id'], acceptedIdTypes: ['ID'], exceptions: { types: VALUE_TYPES, suffixes: ['Result', 'Success', 'Connection', 'Edge', 'Error'] } },
      ],
      // Connections offer `nodes` beside `edges` (the conventions ask for it), so a list may wrap more than edges.
      '@graphql-eslint/relay-edge-types': ['error', { withEdgeSuffix: true, shouldImplementNode: true, listTypeCanWrapOnlyEdgeType: false }],
    },
  },
];

async function lint(file: string): Promise<string[]> {
  const eslint = new ESLint({ overrideConfigFile: true, overrideConfig: configFor(file), cwd: path.dirname(file) });
  const [result] = await eslint.lintFiles([file]);
  return result!.messages.map((m) => `${m.line}:${m.column} ${m.ruleId}: ${m.message}`);
}

const BAD_SCHEMA = `
"""Reads."""
type Query {
  """Things."""
  things(first: Int): ThingPage!
}

"""A page."""
type ThingPage {
  """Items."""
  items: [Thing!]!
}

"""A thing."""
type Thing {
  name: String!
}
`;

describe('schema.graphql lint', () => {
  it('has no findings under schema-recommended and schema-relay', async () => {
    expect(await lint(path.resolve('schema.graphql'))).toEqual([]);
  }, 60_000);

  it('finds what the conventions forbid (the configuration really checks)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-lint-'));
    const file = path.join(dir, 'bad.graphql');
    fs.writeFileSync(file, BAD_SCHEMA);
    const findings = (await lint(file)).join('\n');
    fs.rmSync(dir, { recursive: true });
    expect(findings).toContain('require-description'); // Thing.name
    expect(findings).toContain('strict-id-in-types'); // Thing has no id
    expect(findings).toContain('relay-page-info'); // a list with no PageInfo
  }, 60_000);
});
