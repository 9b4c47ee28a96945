// Static deposit addresses: one permanent address per merchant user and payment currency, and reads of the
// deposits they received. Deposits themselves are applied in processor.ts.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Prisma, type AutoSwap, type ChainTransfer, type PaymentAddress, type StaticAddress } from '../../generated/prisma/client.ts';
import { autoswapEntrySchema } from '../autoswap/presenter.ts';
import { presentAutoswap, type AutoswapEntry } from '../autoswap/rules.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import type { Company } from '../core/auth.ts';
import type { EventDeps } from '../core/events.ts';
import type { RiskHook } from '../core/risk.ts';
import { email } from '../core/validation.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO } from '../domain/assets.ts';
import { requireOffered } from '../chains/offered.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { formatPlain, toMoney } from '../domain/money.ts';
import { decimalString, isoInstant, nextCursor } from '../http/schemas.ts';
import type { FeeTable } from '../pricing/fees.ts';
import type { CreditHooks } from '../core/credits.ts';

export interface DepositDeps extends EventDeps {
  chains: ChainRegistry;
  clock: Clock;
  fees: FeeTable;
  risk: RiskHook;
  credits: CreditHooks;
  logger?: Logger;
}

export const MAX_INTERNAL_USER_ID_LENGTH = 128;

export const createStaticAddressSchema = z.object({
  asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }),
  internalUserId: z.string().trim().min(1, 'must not be empty').max(MAX_INTERNAL_USER_ID_LENGTH),
  email: email.nullish(),
});

export type StaticAddressRecord = StaticAddress & { paymentAddress: PaymentAddress };

export interface StaticAddressView {
  id: string;
  asset: string;
  network: string;
  address: string;
  tag: string | null;
  internalUserId: string;
  email: string | null;
  createdAt: string;
}

export const staticAddressSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The address id (`id` of the spec\'s deposit webhook).' }),
    asset: z.enum(PAYMENT_CURRENCIES),
    network: z.string(),
    address: z.string(),
    tag: z.string().nullable().meta({ description: 'The memo to send with deposits (TON); null otherwise.' }),
    internalUserId: z.string().meta({ description: 'Your identifier of the address owner.' }),
    email: z.string().nullable(),
    createdAt: isoInstant,
  })
  .meta({ id: 'StaticAddress', description: 'A deposit address of one of your users, for one payment currency (docs/deposits.md).' }) satisfies z.ZodType<StaticAddressView>;

export const staticAddressPageSchema = z
  .strictObject({ staticAddresses: z.array(staticAddressSchema).meta({ description: 'Newest first.' }), nextCursor })
  .meta({ id: 'StaticAddressList' });

export const presentStaticAddress = (a: StaticAddressRecord): StaticAddressView => ({
  id: a.id,
  asset: a.asset,
  network: PAYMENT_CURRENCY_INFO[a.asset as keyof typeof PAYMENT_CURRENCY_INFO].network,
  address: a.paymentAddress.address,
  tag: a.paymentAddress.tag,
  internalUserId: a.internalUserId,
  email: a.email,
  createdAt: a.createdAt.toISOString(),
});

const include = { paymentAddress: true } as const;

/**
 * The user's address for the asset: a new one (created: true), or the one they already have. The address and its
 * static record are one statement keyed by (merchant, asset, user), so concurrent calls make one.
 */
export async function createStaticAddress(
  deps: Pick<DepositDeps, 'db' | 'chains'>,
  company: Company,
  input: z.output<typeof createStaticAddressSchema>,
): Promise<{ address: StaticAddressRecord; created: boolean }> {
  if (!company.acceptedAssets.includes(PAYMENT_CURRENCY_INFO[input.asset].asset)) {
    throw new ValidationError([{ path: 'asset', message: `this merchant does not accept ${input.asset}` }]);
  }
  requireOffered(deps.chains, company.mode, input.asset, 'asset');
  const where = { companyId_asset_internalUserId: { companyId: company.id, asset: input.asset, internalUserId: input.internalUserId } };
  const existing = await deps.db.staticAddress.findUnique({ where, include });
  if (existing) return { address: existing, created: false };
  const id = randomUUID();
  const allocated = await deps.chains.forNetwork(PAYMENT_CURRENCY_INFO[input.asset].network, company.mode).allocateAddress({ companyId: company.id, ownerId: id, paymentCurrency: input.asset });
  // The static row first: of concurrent twins only one inserts it, and only that one inserts its address.
  const inserted = await deps.db.$queryRaw<{ id: string }[]>`
    WITH new_static AS (
      INSERT INTO "StaticAddress" ("id", "companyId", "asset", "internalUserId", "email")
      VALUES (${id}, ${company.id}::uuid, ${input.asset}, ${input.internalUserId}, ${input.email ?? null})
      ON CONFLICT ("companyId", "asset", "internalUserId") DO NOTHING
      RETURNING "id"
    ), new_address AS (
      INSERT INTO "PaymentAddress" ("id", "companyId", "invoiceId", "asset", "address", "tag")
      SELECT s."id", ${company.id}::uuid, NULL, ${input.asset}, ${allocated.address}, ${allocated.tag} FROM new_static s
    )
    SELECT "id" FROM new_static`;
  const address = await deps.db.staticAddress.findUniqueOrThrow({ where, include });
  return { address, created: inserted.length === 1 };
}

export async function getStaticAddress(deps: Pick<DepositDeps, 'db'>, company: Company, id: string): Promise<StaticAddressRecord> {
  const found = z.uuid().safeParse(id).success ? await deps.db.staticAddress.findUnique({ where: { id }, include }) : null;
  if (!found || found.companyId !== company.id) throw new NotFoundError(`No static address with id ${id}`);
  return found;
}

export const staticAddressListSchema = z.object({
  internalUserId: z.string().trim().min(1).max(MAX_INTERNAL_USER_ID_LENGTH).optional(),
  asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }).optional(),
  after: z.uuid({ message: 'must be a static address id from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export interface StaticAddressFilter {
  internalUserId?: string | undefined;
  asset?: string[] | undefined;
}

/** The merchant's static addresses matching a filter: the one definition REST and GraphQL lists share. */
export const staticAddressWhere = (company: Company, filter: StaticAddressFilter = {}): Prisma.StaticAddressWhereInput => ({
  companyId: company.id,
  ...(filter.internalUserId ? { internalUserId: filter.internalUserId } : {}),
  ...(filter.asset?.length ? { asset: { in: filter.asset } } : {}),
});

export const staticAddressOrder = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.StaticAddressOrderByWithRelationInput[];

export async function listStaticAddresses(deps: Pick<DepositDeps, 'db'>, company: Company, q: z.output<typeof staticAddressListSchema>) {
  const rows = await deps.db.staticAddress.findMany({
    where: staticAddressWhere(company, { internalUserId: q.internalUserId, asset: q.asset ? [q.asset] : undefined }),
    include,
    orderBy: staticAddressOrder,
    ...pageArgs('id', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (a) => a.id);
  return { staticAddresses: page, nextCursor };
}

/** Deposit statuses (the spec's webhook `status`) from the transfer's state. */
export const DEPOSIT_STATUS = { seen: 'processing', confirmed: 'done', dropped: 'failed', frozen: 'frozen' } as const;
export type DepositStatus = (typeof DEPOSIT_STATUS)[keyof typeof DEPOSIT_STATUS];
/** The transfer state of each deposit status (DEPOSIT_STATUS the other way). */
export const STATE_OF: Record<DepositStatus, keyof typeof DEPOSIT_STATUS> = { processing: 'seen', done: 'confirmed', failed: 'dropped', frozen: 'frozen' };

export const depositListSchema = z.object({
  addressId: z.uuid({ message: 'must be a static address id' }).optional(),
  status: z.enum(['processing', 'done', 'failed', 'frozen']).optional(),
  after: z.uuid({ message: 'must be a deposit id from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export interface DepositFilter {
  addressId?: string | undefined;
  status?: DepositStatus[] | undefined;
}

export const depositWhere = (company: Company, filter: DepositFilter = {}): Prisma.ChainTransferWhereInput => ({
  companyId: company.id,
  role: 'deposit',
  ...(filter.addressId ? { addressId: filter.addressId } : {}),
  ...(filter.status?.length ? { state: { in: filter.status.map((s) => STATE_OF[s]) } } : {}),
});

export const depositOrder = [{ seenAt: 'desc' }, { id: 'desc' }] satisfies Prisma.ChainTransferOrderByWithRelationInput[];

export interface DepositView {
  id: string;
  addressId: string;
  asset: string;
  amount: string;
  status: DepositStatus;
  hash: string;
  outputIndex: number;
  from: string | null;
  confirmations: number;
  createdAt: string;
  confirmedAt: string | null;
  /** Its autoswap, once credited under a rule (docs/autoswap.md); absent when none. */
  autoswaps?: AutoswapEntry[];
}

export const depositSchema = z
  .strictObject({
    id: z.string(),
    addressId: z.string().meta({ description: 'The static address it was sent to.' }),
    asset: z.enum(PAYMENT_CURRENCIES),
    amount: decimalString,
    status: z.enum(['processing', 'done', 'failed', 'frozen']),
    hash: z.string().meta({ description: 'The transaction hash.' }),
    outputIndex: z.int(),
    from: z.string().nullable(),
    confirmations: z.int(),
    createdAt: isoInstant,
    confirmedAt: isoInstant.nullable(),
    autoswaps: z.array(autoswapEntrySchema).optional().meta({ description: 'Its autoswap (kind autoswap, as in invoiceTransactions), once credited under a rule; absent when none.' }),
  })
  .meta({ id: 'Deposit', description: 'A transfer to a static address.' }) satisfies z.ZodType<DepositView>;

export const depositPageSchema = z.strictObject({ deposits: z.array(depositSchema).meta({ description: 'Newest first.' }), nextCursor }).meta({ id: 'DepositList' });

export const presentDeposit = (t: ChainTransfer & { autoswaps?: AutoSwap[] }): DepositView => ({
  id: t.id,
  addressId: t.addressId,
  asset: t.asset,
  amount: formatPlain(toMoney(t.amount)),
  status: DEPOSIT_STATUS[t.state],
  hash: t.txHash,
  outputIndex: t.outputIndex,
  from: t.fromAddress,
  confirmations: t.confirmations,
  createdAt: t.seenAt.toISOString(),
  confirmedAt: t.confirmedAt?.toISOString() ?? null,
  ...(t.autoswaps?.length ? { autoswaps: t.autoswaps.map(presentAutoswap) } : {}),
});

export async function listDeposits(deps: Pick<DepositDeps, 'db'>, company: Company, q: z.output<typeof depositListSchema>) {
  const rows = await deps.db.chainTransfer.findMany({
    where: depositWhere(company, { addressId: q.addressId, status: q.status ? [q.status] : undefined }),
    orderBy: depositOrder,
    include: { autoswaps: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
    ...pageArgs('id', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (t) => t.id);
  return { deposits: page, nextCursor };
}
