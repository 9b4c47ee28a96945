// The one lookup of what a transfer pays, for every way a transfer arrives (a chain watcher's report, the sandbox's
// simulated one): the payment address, its company's time and, with an invoice's address, the invoice's snapshot
// the one-statement way books from (booking.ts). Whoever found the payee hands it to applyTransferReport, so a
// report costs the lookup and the booking statement, nothing more.
import DataLoader from 'dataloader';
import { Prisma, type PaymentAddress } from '../../generated/prisma/client.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type Network } from '../domain/assets.ts';
import { queryDirect } from '../db/direct.ts';
import { columnsOf, prepared } from '../db/prepared.ts';
import type { Mode } from '../domain/modes.ts';
import type { LifecycleDeps } from '../invoices/lifecycle.ts';
import { snapshotJoin, type SnapshotColumns } from './booking.ts';

/** A payment address with its company's time and its invoice's snapshot (`s_*`, null for a static address). */
export type Payee = PaymentAddress & SnapshotColumns & { now: Date };

/** How a transfer's payee is known: a chain names the address; the sandbox also by invoice, or by the merchant's address. */
export type PayeeKey =
  | { network: Network; to: string; tag: string | null; /** The asset sent: an address of it is preferred. */ asset?: string }
  | { invoiceId: string }
  | { companyId: string; to: string; tag: string | null };

const assetsOf = (network: Network) => PAYMENT_CURRENCIES.filter((c) => PAYMENT_CURRENCY_INFO[c].network === network);

const tagIs = (tag: string | null) => (tag === null ? Prisma.sql`a."tag" IS NULL` : Prisma.sql`a."tag" = ${tag}`);

/** The condition on `a` (PaymentAddress) of an address key; the asset lists let it use the (asset, address, tag) index. */
function keySql(key: Exclude<PayeeKey, { invoiceId: string }>): Prisma.Sql | null {
  const assets = 'network' in key ? assetsOf(key.network) : PAYMENT_CURRENCIES;
  if (assets.length === 0) return null;
  const company = 'companyId' in key ? Prisma.sql` AND a."companyId" = ${key.companyId}::uuid` : Prisma.empty;
  return Prisma.sql`(a."asset" IN (${Prisma.join(assets)}) AND a."address" = ${key.to} AND ${tagIs(key.tag)}${company})`;
}

const matches = (key: PayeeKey, row: Payee): boolean =>
  'invoiceId' in key
    ? row.invoiceId === key.invoiceId
    : row.address === key.to &&
      row.tag === key.tag &&
      ('network' in key ? PAYMENT_CURRENCY_INFO[row.asset as keyof typeof PAYMENT_CURRENCY_INFO]?.network === key.network : row.companyId === key.companyId);

/**
 * The payees of `keys` among `mode`'s merchants (simulated money never reaches a live address, nor real money a test
 * one), in one round trip however many keys: answers each key's payee, or null, in the keys' order.
 */
export async function findPayees(deps: Pick<LifecycleDeps, 'db' | 'clock' | 'credits'>, mode: Mode, keys: readonly PayeeKey[]): Promise<(Payee | null)[]> {
  // Invoice keys in one array, however many: a batch of them is one statement text (a named one).
  const invoiceIds = keys.flatMap((key) => ('invoiceId' in key ? [key.invoiceId] : []));
  const conditions = [
    ...(invoiceIds.length ? [Prisma.sql`a."invoiceId" = ANY(${invoiceIds}::text[])`] : []),
    ...keys.flatMap((key) => ('invoiceId' in key ? [] : [keySql(key)])).filter((c) => c !== null),
  ];
  if (conditions.length === 0) return keys.map(() => null);
  // Named for one condition (any number of invoice keys, or one address key): the hot lookups; mixed ones vary.
  const query = Prisma.sql`
    SELECT ${columnsOf(Prisma.PaymentAddressScalarFieldEnum, 'a')}, ${deps.clock.companyNowSql('a."companyId"')} AS "now", s.* FROM "PaymentAddress" a
    JOIN "Company" c ON c."id" = a."companyId" AND c."mode" = ${mode}::"Mode"
    ${snapshotJoin(deps)}
    WHERE ${Prisma.join(conditions, ' OR ')}`;
  const rows = await queryDirect<Payee>(deps.db, conditions.length === 1 ? prepared(query) : query);
  return keys.map((key) => {
    const found = rows.filter((row) => matches(key, row));
    return ('asset' in key && found.find((row) => row.asset === key.asset)) || found[0] || null;
  });
}

/** Lookups one statement answers at most. */
const MAX_BATCH = 100;

/**
 * Single lookups made at about the same moment (concurrent requests, one poll of the sockets) as one findPayees per
 * mode: one statement instead of one each. Nothing is cached: every lookup reads the database.
 */
export function payeeBatcher(find: (mode: Mode, keys: readonly PayeeKey[]) => Promise<(Payee | null)[]>): (mode: Mode, key: PayeeKey) => Promise<Payee | null> {
  const loaders = new Map<Mode, DataLoader<PayeeKey, Payee | null>>();
  return (mode, key) => {
    let loader = loaders.get(mode);
    if (!loader) {
      loader = new DataLoader((keys) => find(mode, keys), { cache: false, maxBatchSize: MAX_BATCH, batchScheduleFn: (run) => setImmediate(run) });
      loaders.set(mode, loader);
    }
    return loader.load(key);
  };
}
