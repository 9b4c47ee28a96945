// Autoswap (docs/autoswap.md): the rules, the credit hook that holds a credit for its swap, and the driver that takes
// each swap through its venue to done (both legs booked, the target's credit hooks run) or failed (released).
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import { Prisma, type AutoSwap } from '../../generated/prisma/client.ts';
import { recordAudit } from '../core/audit.ts';
import type { Company } from '../core/auth.ts';
import type { Credit, CreditHook, CreditHookScope, CreditHooks } from '../core/credits.ts';
import { commitWithEvents, recordEvent, type EventDeps, type NewEvent } from '../core/events.ts';
import { RowClaims, type Claim } from '../core/lease.ts';
import type { Actor } from '../core/scopes.ts';
import type { Db } from '../db/client.ts';
import { isPaymentCurrency, PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, type InvoiceCurrency, type PaymentCurrency } from '../domain/assets.ts';
import type { EventType } from '../domain/event-types.ts';
import type { Mode } from '../domain/modes.ts';
import { formatPlain, Money, toMoney } from '../domain/money.ts';
import { ValidationError, type ErrorDetail } from '../errors/app-error.ts';
import { ACCOUNTS, postJournal, withdrawableBalance } from '../ledger/ledger.ts';
import type { Logger } from '../logger.ts';
import type { RateBook } from '../pricing/rates.ts';
import { DEFAULT_SLIPPAGE_PERCENT, minimumOutput, presentAutoswap, retryDelayMs, type AutoswapPatch, type AutoswapRule } from './rules.ts';
import { AUTOSWAP_QUEUED } from './declarations.ts';
import type { SwapOrder, SwapState, SwapVenue } from './venue.ts';
import type { VenueRegistry } from './venues/registry.ts';

type Tx = Prisma.TransactionClient;

export interface AutoswapSettings {
  leaseMs: number;
  retryMs: number;
  maxAttempts: number;
  deadlineMs: number;
  /** Our fee in percent of a swap's output (0: none). */
  feePercent: Decimal;
}

export interface AutoswapDeps extends EventDeps {
  db: Db;
  venues: VenueRegistry;
  rates: RateBook;
  credits: CreditHooks;
  logger: Logger;
  settings: AutoswapSettings;
}

// ─── Rules ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Every payment currency, set or not (an unset one is disabled, no target, the default slippage cap). */
export async function listAutoswapRules(db: Db, companyId: string): Promise<AutoswapRule[]> {
  const rows = await db.autoSwapRule.findMany({ where: { companyId } });
  const byAsset = new Map(rows.map((r) => [r.asset, r]));
  return PAYMENT_CURRENCIES.map((asset) => {
    const r = byAsset.get(asset);
    return {
      asset,
      isEnabled: r?.isEnabled ?? false,
      toCurrency: (r?.toCurrency ?? null) as PaymentCurrency | null,
      maxSlippagePercent: r ? formatPlain(r.maxSlippagePercent) : DEFAULT_SLIPPAGE_PERCENT,
    };
  });
}

/** PATCH: validates every named asset (all or nothing), changes only those, answers the whole list. */
export async function updateAutoswapRules(
  deps: Pick<AutoswapDeps, 'db' | 'venues'>,
  { id: companyId, mode }: Pick<Company, 'id' | 'mode'>,
  actor: Actor,
  patch: AutoswapPatch,
): Promise<AutoswapRule[]> {
  const current = new Map((await listAutoswapRules(deps.db, companyId)).map((r) => [r.asset, r]));
  const details: ErrorDetail[] = [];
  const rules: AutoswapRule[] = [];
  for (const [key, rule] of Object.entries(patch.assets)) {
    const path = `assets.${key}`;
    if (!isPaymentCurrency(key)) {
      details.push({ path, message: `is not a payment currency; use one of: ${PAYMENT_CURRENCIES.join(', ')}` });
      continue;
    }
    const to = rule.toCurrency;
    const before = details.length;
    if (to !== null && !isPaymentCurrency(to)) details.push({ path: `${path}.toCurrency`, message: `is not a payment currency; use one of: ${PAYMENT_CURRENCIES.join(', ')}` });
    else if (to === key) details.push({ path: `${path}.toCurrency`, message: `cannot be ${key} itself` });
    else if (rule.isEnabled && to === null) details.push({ path: `${path}.toCurrency`, message: 'is required when enabled' });
    else if (rule.isEnabled && to !== null && !deps.venues.route(mode, key, to)) {
      details.push({ path: `${path}.toCurrency`, message: `no venue swaps ${key} to ${to} in ${mode} mode (docs/autoswap.md, "Venues")` });
    }
    if (details.length > before) continue;
    rules.push({
      asset: key,
      isEnabled: rule.isEnabled,
      toCurrency: to as PaymentCurrency | null,
      maxSlippagePercent: rule.maxSlippagePercent?.toFixed() ?? current.get(key)!.maxSlippagePercent,
    });
  }
  if (details.length) throw new ValidationError(details);
  await deps.db.$transaction(async (tx) => {
    for (const r of rules) {
      const data = { isEnabled: r.isEnabled, toCurrency: r.toCurrency, maxSlippagePercent: r.maxSlippagePercent };
      await tx.autoSwapRule.upsert({
        where: { companyId_asset: { companyId, asset: r.asset } },
        create: { companyId, asset: r.asset, ...data },
        update: { ...data, updatedAt: new Date() },
      });
    }
    await recordAudit(tx, companyId, actor, 'autoswaps.changed', {
      rules: rules.map((r) => ({ asset: r.asset, isEnabled: r.isEnabled, toCurrency: r.toCurrency, maxSlippagePercent: r.maxSlippagePercent })),
    });
  });
  return listAutoswapRules(deps.db, companyId);
}

// ─── The credit hook ────────────────────────────────────────────────────────────────────────────────────────────

/**
 * In the transaction of a credit to merchant_available: when the currency has an enabled rule, the credited net
 * amount moves into the swap hold and a queued swap records it. Runs before the auto-withdrawal hook (features.ts
 * order), so an asset with both rules swaps and the auto-withdrawal sees the balance without the credit.
 */
export const autoswapOnCredit: CreditHook = async (tx: Tx, credit: Credit) => {
  // A swap's own proceeds never swap again (no chains of swaps, no loops).
  if (credit.kind === 'autoswap' || !isPaymentCurrency(credit.asset)) return;
  const asset = credit.asset;
  // The rule's row lock serialises the credits of one merchant and asset.
  const [rule] = await tx.$queryRaw<{ toCurrency: string | null; maxSlippagePercent: Prisma.Decimal }[]>`
    SELECT "toCurrency", "maxSlippagePercent" FROM "AutoSwapRule"
    WHERE "companyId" = ${credit.companyId}::uuid AND "asset" = ${asset} AND "isEnabled" FOR UPDATE`;
  if (!rule?.toCurrency || !isPaymentCurrency(rule.toCurrency) || rule.toCurrency === asset) return;
  let amount = toMoney(credit.amount);
  if (credit.invoiceId) {
    // An invoice's money is the merchant's for good once it is done (paid, or a short or late payment accepted):
    // before that a refund may still need it. What it brought less its fee and what earlier swaps took.
    const [invoice] = await tx.$queryRaw<{ status: string; paid: string; fee: string; swapped: string }[]>`
      SELECT i."status"::text AS status, i."paidAmount"::text AS paid, COALESCE(i."feeCharged", 0)::text AS fee,
        (SELECT COALESCE(SUM(s."amount"), 0) FROM "AutoSwap" s WHERE s."invoiceId" = i."id")::text AS swapped
      FROM "Invoice" i WHERE i."id" = ${credit.invoiceId}`;
    if (invoice?.status !== 'done') return;
    amount = Money.min(amount, new Money(invoice.paid).minus(invoice.fee).minus(invoice.swapped));
  }
  // Never more than a withdrawal could take now (the fees open invoices will still charge stay), exact under the debit lock.
  amount = Money.min(amount, await withdrawableBalance(tx, credit.companyId, asset)).toDecimalPlaces(PAYMENT_CURRENCY_INFO[asset].decimals, Money.ROUND_DOWN);
  if (!amount.gt(0)) return;
  const id = randomUUID();
  await tx.autoSwap.create({
    data: {
      id,
      companyId: credit.companyId,
      fromCurrency: asset,
      toCurrency: rule.toCurrency,
      amount: amount.toFixed(),
      maxSlippagePercent: rule.maxSlippagePercent,
      status: 'queued',
      invoiceId: credit.invoiceId ?? null,
      transferId: credit.transferId ?? null,
      addressId: credit.addressId ?? null,
    },
  });
  await postJournal(tx, {
    companyId: credit.companyId,
    asset,
    kind: 'autoswap_hold',
    postings: [
      { account: ACCOUNTS.merchantAvailable, amount: amount.neg() },
      { account: 'swap_hold', amount },
    ],
    invoiceId: credit.invoiceId ?? null,
    subjectId: id,
  });
  await recordEvent(tx, {
    type: AUTOSWAP_QUEUED,
    companyId: credit.companyId,
    subject: { type: 'autoswap', id },
    payload: { autoswapId: id, fromCurrency: asset, toCurrency: rule.toCurrency, amount: amount.toFixed(), invoiceId: credit.invoiceId ?? null },
    deliver: false,
  });
};

/** When autoswapOnCredit may act: the merchant has an enabled rule for the asset. */
export const autoswapScope: CreditHookScope = (companyId, asset) =>
  Prisma.sql`EXISTS (SELECT 1 FROM "AutoSwapRule" r WHERE r."companyId" = ${companyId} AND r."asset" = ${asset} AND r."isEnabled")`;

// ─── The driver ─────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * The driver's claims (core/lease.ts): a claim sets `leaseUntil` and bumps `claimGeneration`, which fences every write
 * the driver makes under it, so a process that lost its claim (paused past the lease, taken over) changes nothing.
 * Rolling deploys: a process of the previous release claims by setting `claim` (not the generation) and writes only
 * where `claim` is still its own; so a claim here clears `claim` (the old holder's writes then miss) and the writes
 * here also need it NULL (an old process's later claim fences this holder out).
 */
const DRIVER_CLAIMS = { table: 'AutoSwap', key: 'id', keyType: 'uuid', until: 'leaseUntil', generation: 'claimGeneration' } as const;
const NO_OLD_CLAIM = Prisma.sql`t."claim" IS NULL`;
const UNFINISHED = Prisma.sql`t."status" IN ('queued', 'submitted')`;

type Claimed = Claim<AutoSwap & { mode: Mode }>;

const orderOf = (s: AutoSwap, mode: Mode): SwapOrder => ({
  swapId: s.id,
  mode,
  from: s.fromCurrency as PaymentCurrency,
  to: s.toCurrency as PaymentCurrency,
  amount: toMoney(s.amount),
  minOut: toMoney(s.minOut ?? 0),
  deadline: s.deadline ?? new Date(0),
});

/**
 * Takes the swaps that are due (queued or submitted, their next attempt reached, no other process's claim on them)
 * and moves each on one step. Answers how many it took.
 */
export async function driveAutoswaps(deps: AutoswapDeps, limit = 50): Promise<number> {
  // A process that dies holding swaps leaves them to another after leaseMs; the final writes lock the row and check
  // its status, so a swap finishes once whoever gets there.
  const claims = new RowClaims(DRIVER_CLAIMS, deps.settings.leaseMs);
  const claimed = await claims.claim<AutoSwap & { mode: Mode }>(deps.db, {
    where: Prisma.sql`${UNFINISHED} AND t."nextAttemptAt" <= now()`,
    orderBy: Prisma.sql`t."nextAttemptAt"`,
    limit,
    set: Prisma.sql`"claim" = NULL, "updatedAt" = now()`,
    returning: Prisma.sql`t.*, (SELECT c."mode"::text FROM "Company" c WHERE c."id" = t."companyId") AS "mode"`,
  });
  for (const c of claimed) {
    try {
      await driveOne(deps, claims, c);
    } catch (e) {
      deps.logger.error({ err: e, autoswap: c.key }, 'autoswap step failed; retried on a later run');
      await claims.release(deps.db, [c], Prisma.sql`"lastError" = ${String((e as Error).message).slice(0, 500)}`, NO_OLD_CLAIM);
    }
  }
  return claimed.length;
}

async function driveOne(deps: AutoswapDeps, claims: RowClaims, c: Claimed): Promise<void> {
  const s = c.row;
  const from = s.fromCurrency as PaymentCurrency;
  const to = s.toCurrency as PaymentCurrency;
  let venue: SwapVenue | null;
  let order: SwapOrder;
  let state: SwapState;
  if (s.status === 'submitted') {
    venue = s.venue ? deps.venues.byName(s.venue) : null;
    // Its venue left the configuration: the order may still fill there, so it is never given up here.
    if (!venue) return retry(deps, claims, c, `Venue ${s.venue} is not configured any more`, { mayFail: false });
    order = orderOf(s, s.mode);
    try {
      state = await venue.status(order, s.ref);
    } catch (e) {
      return retry(deps, claims, c, `Venue ${venue.name} did not answer: ${(e as Error).message}`, { mayFail: false });
    }
  } else {
    venue = deps.venues.route(s.mode, from, to);
    if (!venue) return retry(deps, claims, c, `No venue swaps ${from} to ${to} in ${s.mode} mode`);
    const minimum = venue.minimum(from, to);
    if (minimum && toMoney(s.amount).lt(minimum)) return retry(deps, claims, c, `${formatPlain(s.amount)} ${from} is below venue ${venue.name}'s minimum of ${minimum.toFixed()} ${from}`);
    const quote = deps.rates.quote(s.mode, PAYMENT_CURRENCY_INFO[from].asset as InvoiceCurrency, to);
    if (!quote.ok) return retry(deps, claims, c, `No rate from ${from} to ${to}: ${quote.reason}`);
    // The least output is fixed from the rate now and the rule's cap, and persisted before the venue hears of it.
    const minOut = minimumOutput(toMoney(s.amount), quote.quote.rate, toMoney(s.maxSlippagePercent), to);
    if (!minOut.gt(0)) return retry(deps, claims, c, `${formatPlain(s.amount)} ${from} buys less than the smallest unit of ${to}`);
    const deadline = new Date(Date.now() + deps.settings.deadlineMs);
    const fixed = await deps.db.$executeRaw`
      UPDATE "AutoSwap" t SET "venue" = ${venue.name}, "minOut" = ${minOut.toFixed()}::numeric, "quotedRate" = ${quote.quote.rate.toFixed()}::numeric,
        "deadline" = ${deadline}, "updatedAt" = now()
      WHERE ${claims.fence(c)} AND ${NO_OLD_CLAIM} AND t."status" = 'queued'`;
    if (fixed === 0) return;
    order = { ...orderOf(s, s.mode), minOut, deadline };
    try {
      // The swap id is the venue's idempotency id: after a crash this call answers the order made before it.
      state = await venue.submit(order);
    } catch (e) {
      // An error is an unknown outcome (the venue may have taken the order): the same submission is repeated until it
      // answers, never given up. A venue that knows it took nothing answers `failed, retryable` instead.
      return retry(deps, claims, c, `Venue ${venue.name} did not answer the order: ${(e as Error).message}`, { mayFail: false });
    }
  }
  if (state.state === 'pending') {
    await claims.release(deps.db, [c], Prisma.sql`"status" = 'submitted', "ref" = ${state.ref}, "nextAttemptAt" = now(), "updatedAt" = now()`, Prisma.sql`${NO_OLD_CLAIM} AND ${UNFINISHED}`);
  } else if (state.state === 'filled') {
    await finishDone(deps, s.id, state);
  } else if (state.retryable) {
    // The venue has no order for it (or forgot a failed one): submitted again later, with a new minimum output.
    await retry(deps, claims, c, state.reason, { requeue: true });
  } else {
    await finishFailed(deps, s.id, state.reason, state.ref);
  }
}

/**
 * Another attempt later (the delay doubling), or, once the attempts ran out, failed and released. A swap a venue may
 * still fill is never failed here (`mayFail: false`: a submitted order, or a submission whose outcome is unknown).
 */
async function retry(deps: AutoswapDeps, claims: RowClaims, c: Claimed, reason: string, options: { mayFail?: boolean; requeue?: boolean } = {}): Promise<void> {
  const s = c.row;
  const attempts = s.attempts + 1;
  const { retryMs, maxAttempts } = deps.settings;
  let delay = retryDelayMs(attempts, retryMs, maxAttempts);
  if (delay === null && options.mayFail !== false) {
    await finishFailed(deps, s.id, `${reason} (gave up after ${attempts} attempts)`, null, c.generation);
    return;
  }
  delay ??= retryDelayMs(maxAttempts - 1, retryMs, maxAttempts)!;
  deps.logger.warn({ autoswap: s.id, attempts, reason }, 'autoswap retried later');
  await claims.release(
    deps.db,
    [c],
    Prisma.sql`"attempts" = ${attempts}, "lastError" = ${reason.slice(0, 500)}, "nextAttemptAt" = ${new Date(Date.now() + delay)},
      ${options.requeue ? Prisma.sql`"status" = 'queued', "ref" = NULL, ` : Prisma.empty}"updatedAt" = now()`,
    Prisma.sql`${NO_OLD_CLAIM} AND ${UNFINISHED}`,
  );
}

async function lockSwap(tx: Tx, id: string): Promise<AutoSwap | null> {
  const [row] = await tx.$queryRaw<AutoSwap[]>`SELECT * FROM "AutoSwap" WHERE "id" = ${id}::uuid FOR UPDATE`;
  return row ?? null;
}

export const autoswapEvent = (s: AutoSwap, type: 'autoswap.done' | 'autoswap.failed'): NewEvent => ({
  type: type satisfies EventType,
  companyId: s.companyId,
  subject: { type: 'autoswap', id: s.id },
  payload: { type: 'autoswap', ...presentAutoswap(s) },
});

/**
 * Filled: in one transaction the source leaves the hold for the venue, the output arrives in the target's
 * merchant_available, the venue's fee and ours are journals of their own, the swap is done with its event, and the
 * target currency's credit hooks run (an auto-withdrawal of the target fires on the swapped amount).
 */
export async function finishDone(deps: AutoswapDeps, id: string, fill: Extract<SwapState, { state: 'filled' }>): Promise<AutoSwap | null> {
  return commitWithEvents(deps, async (tx) => {
    const s = await lockSwap(tx, id);
    if (!s || s.status === 'done' || s.status === 'failed') return s;
    const to = s.toCurrency as PaymentCurrency;
    const places = PAYMENT_CURRENCY_INFO[to].decimals;
    const received = toMoney(fill.toAmount);
    const venueFee = toMoney(fill.venueFee);
    const fee = Money.min(received.times(deps.settings.feePercent).div(100).toDecimalPlaces(places, Money.ROUND_UP), received);
    const net = received.minus(fee);
    const base = { companyId: s.companyId, invoiceId: s.invoiceId, subjectId: s.id };
    await postJournal(tx, {
      ...base,
      asset: s.fromCurrency,
      kind: 'autoswap',
      postings: [
        { account: 'swap_hold', amount: toMoney(s.amount).neg() },
        { account: 'swap_venue', amount: toMoney(s.amount) },
      ],
    });
    const gross = received.plus(venueFee);
    await postJournal(tx, {
      ...base,
      asset: to,
      kind: 'autoswap',
      postings: [
        { account: 'swap_venue', amount: gross.neg() },
        { account: ACCOUNTS.merchantAvailable, amount: gross },
      ],
    });
    await postJournal(tx, {
      ...base,
      asset: to,
      kind: 'autoswap_venue_fee',
      postings: [
        { account: ACCOUNTS.merchantAvailable, amount: venueFee.neg() },
        { account: 'venue_fees', amount: venueFee },
      ],
    });
    await postJournal(tx, {
      ...base,
      asset: to,
      kind: 'autoswap_fee',
      postings: [
        { account: ACCOUNTS.merchantAvailable, amount: fee.neg() },
        { account: ACCOUNTS.platformFees, amount: fee },
      ],
    });
    const done = await tx.autoSwap.update({
      where: { id },
      data: {
        status: 'done',
        ref: fill.ref,
        toAmount: net.toFixed(),
        venueFee: venueFee.toFixed(),
        fee: fee.toFixed(),
        leaseUntil: null,
        completedAt: new Date(),
        updatedAt: new Date(),
      },
    });
    await recordEvent(tx, autoswapEvent(done, 'autoswap.done'));
    if (net.gt(0)) {
      await deps.credits.credited(tx, { companyId: s.companyId, asset: to, amount: net, invoiceId: s.invoiceId, transferId: s.transferId, addressId: s.addressId, kind: 'autoswap' });
    }
    return done;
  });
}

/** Not filled and never will be: the hold goes back to merchant_available in the source currency, with the reason. */
export async function finishFailed(
  deps: Pick<AutoswapDeps, 'db' | 'events'>,
  id: string,
  reason: string,
  ref: string | null,
  /** The driver's claim giving up (its fence, read under the row lock); none for a venue's verdict. */
  claimGeneration?: number,
): Promise<AutoSwap | null> {
  return commitWithEvents(deps, async (tx) => {
    const s = await lockSwap(tx, id);
    if (!s || s.status === 'done' || s.status === 'failed') return s;
    if (claimGeneration !== undefined && (s.claimGeneration !== claimGeneration || s.claim !== null)) return s;
    await postJournal(tx, {
      companyId: s.companyId,
      asset: s.fromCurrency,
      kind: 'autoswap_release',
      postings: [
        { account: 'swap_hold', amount: toMoney(s.amount).neg() },
        { account: ACCOUNTS.merchantAvailable, amount: toMoney(s.amount) },
      ],
      invoiceId: s.invoiceId,
      subjectId: s.id,
    });
    const failed = await tx.autoSwap.update({
      where: { id },
      data: { status: 'failed', failReason: reason.slice(0, 500), ref: ref ?? s.ref, leaseUntil: null, completedAt: new Date(), updatedAt: new Date() },
    });
    await recordEvent(tx, autoswapEvent(failed, 'autoswap.failed'));
    return failed;
  });
}

// ─── Reads ──────────────────────────────────────────────────────────────────────────────────────────────────────

export const autoswapsOfTransfer = (db: Db, transferId: string) => db.autoSwap.findMany({ where: { transferId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
