// Auto-withdrawals: per payment currency, a threshold and a destination. A confirmed credit that leaves the
// available balance at or above the threshold sends the whole available balance (minus the fee) out through the
// ordinary withdrawal path, in the credit's own transaction (docs/withdrawals.md).
import { recordAudit } from '../core/audit.ts';
import type { Actor } from '../core/scopes.ts';
import { z } from 'zod';
import { Prisma, type AutoWithdrawal } from '../../generated/prisma/client.ts';
import type { Credit, CreditHookScope } from '../core/credits.ts';
import type { Company } from '../core/auth.ts';
import { noteEvents } from '../core/events.ts';
import { jsonNumber } from '../core/json.ts';
import { decimal, tag } from '../core/validation.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, isPaymentCurrency, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, MAX_BALANCE, toMoney } from '../domain/money.ts';
import { ValidationError, type ErrorDetail } from '../errors/app-error.ts';
import { withdrawableBalance } from '../ledger/ledger.ts';
import type { Db } from '../db/client.ts';
import { quoteWithdrawal } from './rules.ts';
import { addressCheck, createWithdrawals, sendCheck } from './hold.ts';
import type { WithdrawalDeps } from './model.ts';
import { payoutGuard, refusalInCredit } from './protection.ts';

type Tx = Prisma.TransactionClient;

const ruleSchema = z.object({
  // A threshold above the largest balance could never be reached.
  amount: decimal({ min: 0, max: MAX_BALANCE }),
  isEnabled: z.boolean(),
  withdrawalTag: z.union([z.literal(''), tag]).nullish().transform((t) => t || null),
  withdrawalAddress: z.string().trim().max(128),
});

export const autoWithdrawalsPatchSchema = z.object({
  assets: z
    .record(z.string().max(32), ruleSchema)
    .refine((r) => Object.keys(r).length >= 1, 'must name at least one asset')
    .refine((r) => Object.keys(r).length <= PAYMENT_CURRENCIES.length, `must name at most ${PAYMENT_CURRENCIES.length} assets`),
});

export type AutoWithdrawalsPatch = z.output<typeof autoWithdrawalsPatchSchema>;

/** One entry of the spec's `autoWithdrawals` array; `amount` is a JSON number with exact digits. */
export interface AutoWithdrawalView {
  assetId: PaymentCurrency;
  amount: ReturnType<typeof jsonNumber>;
  isEnabled: boolean;
  withdrawalTag: string | null;
  withdrawalAddress: string;
}

export interface AutoWithdrawalRule {
  asset: PaymentCurrency;
  amount: string;
  isEnabled: boolean;
  withdrawalTag: string | null;
  withdrawalAddress: string;
}

/** Every payment currency, configured or not (an unset one is disabled with threshold 0 and no address). */
export async function listAutoWithdrawals(db: Db, companyId: string): Promise<AutoWithdrawalRule[]> {
  const rows = await db.autoWithdrawal.findMany({ where: { companyId } });
  const byAsset = new Map(rows.map((r) => [r.asset, r]));
  return PAYMENT_CURRENCIES.map((asset) => {
    const r = byAsset.get(asset);
    return {
      asset,
      amount: r ? formatPlain(toMoney(r.amount)) : '0',
      isEnabled: r?.isEnabled ?? false,
      withdrawalTag: r?.withdrawalTag ?? null,
      withdrawalAddress: r?.withdrawalAddress ?? '',
    };
  });
}

export const presentAutoWithdrawals = (rules: AutoWithdrawalRule[]): { autoWithdrawals: AutoWithdrawalView[] } => ({
  autoWithdrawals: rules.map((r) => ({
    assetId: r.asset,
    amount: jsonNumber(r.amount),
    isEnabled: r.isEnabled,
    withdrawalTag: r.withdrawalTag,
    withdrawalAddress: r.withdrawalAddress,
  })),
});

/** The smallest threshold of an asset: one withdrawal of it must reach the minimum after its fee. */
export const minimumThreshold = (asset: PaymentCurrency) => {
  const q = quoteWithdrawal(asset, toMoney(PAYMENT_CURRENCY_INFO[asset].minWithdrawal));
  return q.total;
};

/** PATCH: validates every named asset (all or nothing), updates only those, answers the full list. */
export async function updateAutoWithdrawals(
  deps: Pick<WithdrawalDeps, 'db' | 'chains' | 'clock'>,
  { id: companyId, mode }: Pick<Company, 'id' | 'mode'>,
  actor: Actor,
  patch: AutoWithdrawalsPatch,
): Promise<AutoWithdrawalRule[]> {
  const details: ErrorDetail[] = [];
  const isValidAddress = addressCheck(deps.chains, mode);
  const sendProblem = sendCheck(deps.chains, mode);
  const guard = await payoutGuard(deps, companyId);
  const rules: Prisma.AutoWithdrawalCreateManyInput[] = [];
  for (const [key, rule] of Object.entries(patch.assets)) {
    const path = `assets.${key}`;
    if (!isPaymentCurrency(key)) {
      details.push({ path, message: `is not an asset id; use one of: ${PAYMENT_CURRENCIES.join(', ')}` });
      continue;
    }
    const info = PAYMENT_CURRENCY_INFO[key];
    const before = details.length;
    if (rule.amount.decimalPlaces() > info.decimals) details.push({ path: `${path}.amount`, message: `has more than ${info.decimals} decimal places` });
    if (rule.isEnabled && rule.amount.lt(minimumThreshold(key))) {
      details.push({ path: `${path}.amount`, message: `must be at least ${minimumThreshold(key).toFixed()} (the minimum withdrawal plus its fee) when enabled` });
    }
    if (rule.withdrawalAddress === '') {
      if (rule.isEnabled) details.push({ path: `${path}.withdrawalAddress`, message: 'is required when enabled' });
    } else if (!isValidAddress(key, rule.withdrawalAddress)) {
      details.push({ path: `${path}.withdrawalAddress`, message: `is not a valid ${key} address` });
    }
    // Under allowListOnly an enabled rule's address must be in the book, past the cool-down.
    const outside = rule.isEnabled && rule.withdrawalAddress !== '' ? guard({ asset: key, to: rule.withdrawalAddress, tag: rule.withdrawalTag }) : null;
    if (outside) details.push({ path: `${path}.withdrawalAddress`, message: outside });
    const refusal = rule.isEnabled ? sendProblem(key) : null;
    if (refusal) details.push({ path: `${path}.isEnabled`, message: `cannot be true: ${refusal}` });
    if (info.tagged && !rule.withdrawalTag && rule.withdrawalAddress !== '') details.push({ path: `${path}.withdrawalTag`, message: `is required for ${key}` });
    if (!info.tagged && rule.withdrawalTag) details.push({ path: `${path}.withdrawalTag`, message: `${key} takes no tag; send null` });
    if (details.length > before) continue;
    rules.push({
      companyId,
      asset: key,
      amount: new Prisma.Decimal(rule.amount.toFixed()),
      isEnabled: rule.isEnabled,
      withdrawalTag: rule.withdrawalTag,
      withdrawalAddress: rule.withdrawalAddress,
    });
  }
  if (details.length) throw new ValidationError(details);
  await deps.db.$transaction(async (tx) => {
    for (const r of rules) {
      await tx.autoWithdrawal.upsert({
        where: { companyId_asset: { companyId, asset: r.asset } },
        create: r,
        update: { amount: r.amount, isEnabled: r.isEnabled, withdrawalTag: r.withdrawalTag, withdrawalAddress: r.withdrawalAddress, updatedAt: new Date() },
      });
    }
    await recordAudit(tx, companyId, actor, 'auto_withdrawals.changed', {
      rules: rules.map((r) => ({ asset: r.asset, amount: String(r.amount), isEnabled: r.isEnabled ?? false, withdrawalAddress: r.withdrawalAddress, withdrawalTag: r.withdrawalTag ?? null })),
    });
  });
  return listAutoWithdrawals(deps.db, companyId);
}

/** When autoWithdrawOnCredit may act: the merchant has an enabled rule for the asset. */
export const autoWithdrawScope: CreditHookScope = (companyId, asset) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "AutoWithdrawal" r WHERE r."companyId" = ${companyId} AND r."asset" = ${asset} AND r."isEnabled")`;

/**
 * The credit hook. The rule's row lock serialises credits of one merchant and asset, and the exact available
 * balance is read under the debit lock, so of concurrent credits exactly the one that reaches the threshold
 * sends the balance out; the others see what is left after it.
 */
export async function autoWithdrawOnCredit(tx: Tx, credit: Credit): Promise<void> {
  if (!isPaymentCurrency(credit.asset)) return;
  const [rule] = await tx.$queryRaw<AutoWithdrawal[]>`
    SELECT * FROM "AutoWithdrawal" WHERE "companyId" = ${credit.companyId}::uuid AND "asset" = ${credit.asset} AND "isEnabled"
    FOR UPDATE`;
  if (!rule) return;
  // The payout policy holds for rules set before it was turned on: a refused address sends nothing (the money stays).
  if (await refusalInCredit(tx, credit.companyId, { asset: credit.asset, to: rule.withdrawalAddress, tag: rule.withdrawalTag })) return;
  const asset = credit.asset;
  const available = await withdrawableBalance(tx, credit.companyId, asset);
  if (available.lt(toMoney(rule.amount))) return;
  const fee = quoteWithdrawal(asset, available).fee;
  const amount = available.minus(fee).toDecimalPlaces(PAYMENT_CURRENCY_INFO[asset].decimals, 1 /* ROUND_DOWN */);
  const quote = quoteWithdrawal(asset, amount);
  if (amount.lt(quote.minimum)) return;
  const created = await createWithdrawals(tx, credit.companyId, [{ position: 0, item: { asset, amount, to: rule.withdrawalAddress, tag: rule.withdrawalTag }, quote }], 'auto');
  const outcome = created.get(0);
  if (outcome && 'uid' in outcome) noteEvents(tx, ['withdrawal.processing']);
}
