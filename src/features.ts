// The one wiring point: every capability of the service, in dependency order. A new feature adds its line here
// (and its config section in config.ts); see docs/architecture.md.
import { autoswapFeature } from './autoswap/index.ts';
import { companiesFeature } from './companies/index.ts';
import { depositsFeature } from './deposits/index.ts';
import { emailsFeature } from './emails/index.ts';
import { exportsFeature } from './exports/index.ts';
import type { CustodySource } from './chains/custody.ts';
import { loadConfig, type Config } from './config.ts';
import { declarationsOf } from './core/declarations.ts';
import type { Declared, Feature, Platform, Services, WebhookDoc } from './core/feature.ts';
import type { Job } from './core/jobs.ts';
import type { Db } from './db/client.ts';
import { defineEventTypeEnum } from './graphql/enums.ts';
import { graphqlSchema, printedSchema } from './graphql/schema.ts';
import type { Route } from './http/router.ts';
import { keysFeature } from './keys/index.ts';
import { auditFeature } from './audit/index.ts';
import { invoicesFeature } from './invoices/index.ts';
import { verifyLedger as verifyLedgerWith, type LedgerReport, type VerifyOptions } from './ledger/verify.ts';
import type { TagDoc } from './openapi/document.ts';
import { createApiReference, type ApiReference } from './openapi/reference.ts';
import { paymentLinksFeature } from './payment-links/index.ts';
import { paymentsFeature } from './payments/index.ts';
import { sandboxFeature } from './sandbox/index.ts';
import { webhooksFeature } from './webhooks/index.ts';
import { withdrawalsFeature } from './withdrawals/index.ts';

export const features = (config: Config): Feature[] => [
  companiesFeature(),
  keysFeature(),
  auditFeature(),
  invoicesFeature(config.invoices),
  paymentLinksFeature(config.paymentLinks),
  paymentsFeature(),
  sandboxFeature(),
  webhooksFeature(config.webhooks),
  // Before withdrawals: its credit hook takes a credit before the auto-withdrawal hook sees it (docs/autoswap.md).
  autoswapFeature(config.autoswap),
  withdrawalsFeature(config.withdrawals),
  depositsFeature(),
  exportsFeature(config.exports),
  emailsFeature(config.emails),
];

/** Every REST route of the public API listener (routes do not depend on the configuration: defaults do). */
export const apiRoutes: Route<Services>[] = features(loadConfig({})).flatMap((f) => f.routes ?? []);

/**
 * Every feature's event types, journal kinds, ledger accounts and checks, metrics subjects and outgoing purposes (declarations
 * do not depend on the configuration either); a name two features declare stops the start here.
 */
export const declared: Declared = declarationsOf(features(loadConfig({})));
defineEventTypeEnum(declared.eventTypes);

/** ledger:verify with every feature's checks and accounts (src/ledger/verify.ts runs the ledger's own checks, then these). */
export const verifyLedger = (db: Db, custody: CustodySource[] = [], options: Omit<VerifyOptions, 'checks' | 'accounts'> = {}): Promise<LedgerReport> =>
  verifyLedgerWith(db, custody, { ...options, checks: declared.ledgerChecks, accounts: declared.ledgerAccounts });

/** The groups of the API reference, in the order it shows them. */
const API_TAGS: TagDoc[] = [
  { name: 'Invoices', description: 'Fixed-amount invoices: create, fill (proceed), read; accept or refund a short payment (docs/payments.md).' },
  { name: 'Rates', description: 'The exchange rates proceed locks now: live sources checked against each other, or the static table in test mode (docs/rates.md).' },
  { name: 'Withdrawals', description: 'Payouts from the balance, one or many per call, and auto-withdrawal rules (docs/withdrawals.md).' },
  { name: 'Autoswap', description: 'Credits converted to the currency you keep, as they arrive: rules per payment currency (docs/autoswap.md).' },
  { name: 'Deposits', description: 'Static deposit addresses for your users, and the deposits to them (docs/deposits.md).' },
  { name: 'Webhooks', description: 'The webhook URL, the delivery log, redelivery and the event feed (docs/webhooks.md).' },
  { name: 'E-mails', description: 'E-mails to the paying client and to you: which are sent, and the log of what was sent (docs/emails.md).' },
  { name: 'PaymentLinks', description: 'Invoices without code: a link whose every opening makes a new invoice of the same content (docs/payment-links.md).' },
  { name: 'Merchant', description: 'Store settings, balances and underpayment limits (docs/api-decisions.md, "Store settings").' },
  { name: 'Keys', description: 'Restricted API keys with scopes, per mode (docs/security.md).' },
  { name: 'Sandbox', description: 'Simulated chain activity and the test clock, for test-mode tokens only (a live-mode token gets 403; docs/modes.md).' },
  { name: 'Exports', description: 'Reconciliation exports: the ledger and the invoices of a date range as streamed RFC 4180 CSV, and download links (docs/exports.md).' },
];

const API_DESCRIPTION = [
  'Crypto payments (invoices), payouts (withdrawals) and deposits to static addresses, with signed webhooks. The same operations exist in the GraphQL API at `/graphql`.',
  '',
  '- **Authentication**: `Authorization: Bearer <public token>` (the merchant\'s `pk_test_...` or `pk_live_...`). Reading an invoice needs none; filling one (proceed) takes one optionally.',
  '- **Test and live mode**: each token is one mode\'s and sees only that mode\'s objects (another mode\'s are 404); answers to authenticated calls carry `Payrail-Mode: test|live`. The sandbox operations take a test-mode token (403 otherwise).',
  '- **Errors** have one shape, the `Error` schema: `{"error": {"code", "message", "details", "requestId"}}`; `code` is stable, `details` names every offending field.',
  '- **Amounts** we compute are exact decimal strings. Amounts you send may be JSON numbers (read exactly, never through a float) or strings.',
  '- **Idempotency**: creating an invoice and withdrawing take an `Idempotency-Key` header; a retry with the same key answers the first result with `Idempotent-Replayed: true`.',
  '- Every answer carries `X-Request-Id`.',
].join('\n');

/** The webhook bodies the features send (the document's `webhooks`); autoswap's joins when its feature declares it. */
export const apiWebhooks: WebhookDoc[] = features(loadConfig({})).flatMap((f) => f.webhooks ?? []);

/** The OpenAPI document and the reference page of these routes (the public API's unless told otherwise). */
export const apiReference = (routes: Route<Services>[] = apiRoutes): ApiReference =>
  createApiReference(routes, { tags: API_TAGS, description: API_DESCRIPTION, webhooks: apiWebhooks });

export interface AssembledFeatures {
  services: Services;
  routes: Route<Services>[];
  jobs: Job[];
  close(): Promise<void>;
}

/** Builds every feature's services, in order, on the platform. */
export function assemble(config: Config, platform: Platform): AssembledFeatures {
  const list = features(config);
  const services = { db: platform.db, logger: platform.logger, bus: platform.bus } as Services;
  for (const feature of list) Object.assign(services, feature.services?.(platform, services));
  return {
    services,
    routes: list.flatMap((f) => f.routes ?? []),
    jobs: list.flatMap((f) => f.jobs?.(platform, services) ?? []),
    close: async () => {
      for (const f of list) await f.close?.();
    },
  };
}

export { graphqlSchema, printedSchema };
