// Payout protection: the policy and the address book of a tenant (docs/security.md, "Payout protection"). The rules
// are in protection-rules.ts; here they meet the database, the tenant's clock (the test clock in test mode) and the
// audit log. withdraw() and updateAutoWithdrawals() ask `payoutGuard` about each address.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { PayoutAddress, PayoutPolicy, Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { recordAudit } from '../core/audit.ts';
import type { Actor } from '../core/scopes.ts';
import { tag as tagSchema } from '../core/validation.ts';
import type { Clock } from '../clock.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO } from '../domain/assets.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { isoInstant } from '../http/schemas.ts';
import { changePolicy, DEFAULT_POLICY, payoutRefusal, policyAt, usableFrom, type PolicyState } from './protection-rules.ts';
import type { ChainRegistry } from '../chains/adapter.ts';
import { addressCheck } from './hold.ts';

export interface ProtectionDeps {
  db: Db;
  clock: Clock;
  chains: ChainRegistry;
}

/** Entries one tenant's book may hold: the guard reads the whole book, so it stays small. */
export const MAX_BOOK_ENTRIES = 1000;
export const MAX_COOLDOWN_HOURS = 8760;

export const payoutPolicySchema = z.object({
  allowListOnly: z.boolean(),
  cooldownHours: z.number().int().min(0).max(MAX_COOLDOWN_HOURS),
});

const policyShape = { allowListOnly: z.boolean(), cooldownHours: z.int() };
export const payoutPolicyAnswerSchema = z
  .strictObject({
    ...policyShape,
    pending: z
      .strictObject({ ...policyShape, effectiveAt: isoInstant })
      .nullable()
      .meta({ description: 'A weakening asked for, in force from `effectiveAt` (the cool-down in force when it was asked for).' }),
  })
  .meta({ id: 'PayoutPolicy', description: 'The policy in force now, and a weakening that waits.' });

export const payoutAddressInputSchema = z.object({
  asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }),
  address: z.string().trim().min(1, 'must not be empty').max(128),
  // An empty tag is no tag, as for withdrawals.
  tag: z.union([z.literal(''), tagSchema]).nullish().transform((t) => t || null),
  label: z.string().trim().min(1, 'must not be empty').max(100),
});

export const payoutAddressSchema = z
  .strictObject({
    id: z.uuid(),
    asset: z.enum(PAYMENT_CURRENCIES),
    address: z.string(),
    tag: z.string().nullable(),
    label: z.string(),
    createdAt: isoInstant,
    usableFrom: isoInstant.meta({ description: 'When withdrawals and rules may use it under allowListOnly (createdAt plus the cool-down in force).' }),
  })
  .meta({ id: 'PayoutAddress' });
export const payoutAddressListSchema = z.strictObject({ addresses: z.array(payoutAddressSchema).meta({ description: 'Newest first.' }) }).meta({ id: 'PayoutAddressList' });

export const stateOf = (row: PayoutPolicy | null): PolicyState =>
  row
    ? {
        allowListOnly: row.allowListOnly,
        cooldownHours: row.cooldownHours,
        pending:
          row.pendingEffectiveAt && row.pendingAllowListOnly !== null && row.pendingCooldownHours !== null
            ? { allowListOnly: row.pendingAllowListOnly, cooldownHours: row.pendingCooldownHours, effectiveAt: row.pendingEffectiveAt }
            : null,
      }
    : DEFAULT_POLICY;

export const presentPolicy = (s: PolicyState) => ({
  allowListOnly: s.allowListOnly,
  cooldownHours: s.cooldownHours,
  pending: s.pending ? { allowListOnly: s.pending.allowListOnly, cooldownHours: s.pending.cooldownHours, effectiveAt: s.pending.effectiveAt.toISOString() } : null,
});

export async function getPayoutPolicy(deps: ProtectionDeps, company: Company): Promise<PolicyState> {
  const [row, now] = await Promise.all([deps.db.payoutPolicy.findUnique({ where: { companyId: company.id } }), deps.clock.now(company.id)]);
  return policyAt(stateOf(row), now);
}

/** Sets the policy: strengthening at once, weakening after the cool-down in force (protection-rules.ts changePolicy). */
export async function setPayoutPolicy(deps: ProtectionDeps, company: Company, actor: Actor, input: z.output<typeof payoutPolicySchema>): Promise<PolicyState> {
  // A cool-down of 0 makes every book entry usable at once: for trying the policy out in test mode only.
  if (company.mode === 'live' && input.cooldownHours < 1) throw new ValidationError([{ path: 'cooldownHours', message: 'must be at least 1 in live mode (0 is for test mode)' }]);
  const now = await deps.clock.now(company.id);
  return transactionWithRetry(deps.db, async (tx) => {
    const rows = await tx.$queryRaw<PayoutPolicy[]>`SELECT * FROM "PayoutPolicy" WHERE "companyId" = ${company.id}::uuid FOR UPDATE`;
    const before = policyAt(stateOf(rows[0] ?? null), now);
    const after = changePolicy(before, input, now);
    const data = {
      allowListOnly: after.allowListOnly,
      cooldownHours: after.cooldownHours,
      pendingAllowListOnly: after.pending?.allowListOnly ?? null,
      pendingCooldownHours: after.pending?.cooldownHours ?? null,
      pendingEffectiveAt: after.pending?.effectiveAt ?? null,
      updatedAt: now,
    };
    await tx.payoutPolicy.upsert({ where: { companyId: company.id }, create: { companyId: company.id, ...data }, update: data });
    await recordAudit(tx, company.id, actor, 'payout_policy.changed', { before: presentPolicy(before), requested: input, after: presentPolicy(after) });
    return after;
  });
}

export const presentPayoutAddress = (a: PayoutAddress, policy: PolicyState) => ({
  id: a.id,
  asset: a.asset as (typeof PAYMENT_CURRENCIES)[number],
  address: a.address,
  tag: a.tag,
  label: a.label,
  createdAt: a.createdAt.toISOString(),
  usableFrom: usableFrom(a, policy).toISOString(),
});

export async function addPayoutAddress(deps: ProtectionDeps, company: Company, actor: Actor, input: z.output<typeof payoutAddressInputSchema>): Promise<PayoutAddress> {
  const info = PAYMENT_CURRENCY_INFO[input.asset];
  const details = [];
  if (!addressCheck(deps.chains, company.mode)(input.asset, input.address)) details.push({ path: 'address', message: `is not a valid ${input.asset} address` });
  if (info.tagged && !input.tag) details.push({ path: 'tag', message: `is required for ${input.asset}` });
  if (!info.tagged && input.tag) details.push({ path: 'tag', message: `${input.asset} takes no tag; send null` });
  if (details.length) throw new ValidationError(details);
  // Its age counts on the tenant's clock, the one the cool-down is measured on.
  const now = await deps.clock.now(company.id);
  return transactionWithRetry(deps.db, async (tx) => {
    await tx.$queryRaw`SELECT 1 FROM "Company" WHERE "id" = ${company.id}::uuid FOR UPDATE`;
    const existing = await tx.payoutAddress.findFirst({ where: { companyId: company.id, asset: input.asset, address: input.address, tag: input.tag } });
    if (existing) throw new ConflictError('CONFLICT', `This ${input.asset} address is already in the payout address book (id ${existing.id})`);
    if ((await tx.payoutAddress.count({ where: { companyId: company.id } })) >= MAX_BOOK_ENTRIES) {
      throw new ConflictError('CONFLICT', `The payout address book holds at most ${MAX_BOOK_ENTRIES} addresses: remove one first`);
    }
    const row = await tx.payoutAddress.create({ data: { id: randomUUID(), companyId: company.id, ...input, createdAt: now } });
    await recordAudit(tx, company.id, actor, 'payout_address.added', { id: row.id, asset: row.asset, address: row.address, tag: row.tag, label: row.label });
    return row;
  });
}

export function listPayoutAddresses(deps: Pick<ProtectionDeps, 'db'>, companyId: string): Promise<PayoutAddress[]> {
  return deps.db.payoutAddress.findMany({ where: { companyId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export async function removePayoutAddress(deps: ProtectionDeps, company: Company, actor: Actor, id: string): Promise<PayoutAddress> {
  if (!UUID.test(id)) throw new NotFoundError(`No payout address with id ${id}`);
  return transactionWithRetry(deps.db, async (tx) => {
    const row = await tx.payoutAddress.findFirst({ where: { id, companyId: company.id } });
    if (!row) throw new NotFoundError(`No payout address with id ${id}`);
    await tx.payoutAddress.delete({ where: { id } });
    await recordAudit(tx, company.id, actor, 'payout_address.removed', { id: row.id, asset: row.asset, address: row.address, tag: row.tag, label: row.label });
    return row;
  });
}

/**
 * The payout policy's answer for an auto-withdrawal inside a credit's transaction (no Clock there): the tenant's time
 * is real time plus its test clock's offset (a live tenant has no test clock).
 */
export async function refusalInCredit(tx: Prisma.TransactionClient, companyId: string, item: { asset: string; to: string; tag: string | null }): Promise<string | null> {
  const [row] = await tx.$queryRaw<PayoutPolicy[]>`SELECT * FROM "PayoutPolicy" WHERE "companyId" = ${companyId}::uuid`;
  if (!row) return null;
  const [clock] = await tx.$queryRaw<{ offsetMs: bigint }[]>`SELECT "offsetMs" FROM "SandboxClock" WHERE "companyId" = ${companyId}::uuid`;
  const now = new Date(Date.now() + Number(clock?.offsetMs ?? 0n));
  const state = policyAt(stateOf(row), now);
  if (!state.allowListOnly) return null;
  const book = await tx.payoutAddress.findMany({ where: { companyId, asset: item.asset }, select: { asset: true, address: true, tag: true, createdAt: true } });
  return payoutRefusal(state, book, item, now);
}

/** Why each payout address is refused under the tenant's policy now (null: allowed): read once per call. */
export async function payoutGuard(deps: ProtectionDeps, companyId: string): Promise<(item: { asset: string; to: string; tag: string | null }) => string | null> {
  const [row, now] = await Promise.all([deps.db.payoutPolicy.findUnique({ where: { companyId } }), deps.clock.now(companyId)]);
  const state = policyAt(stateOf(row), now);
  if (!state.allowListOnly) return () => null;
  const book = await deps.db.payoutAddress.findMany({ where: { companyId }, select: { asset: true, address: true, tag: true, createdAt: true } });
  return (item) => payoutRefusal(state, book, item, now);
}
