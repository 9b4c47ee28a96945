// The sandbox venue (test mode, every pair): fills at the test rate less a simulated slippage and fee that the
// merchant sets through the sandbox controls (PUT /api/sandbox/autoswap-venue). Its orders are rows, one per swap
// id, so a submission repeated after a crash answers the first one, as a real venue's idempotency does.
import { z } from 'zod';
import { decimal } from '../../core/validation.ts';
import type { Db } from '../../db/client.ts';
import { PAYMENT_CURRENCY_INFO, type InvoiceCurrency, type PaymentCurrency } from '../../domain/assets.ts';
import type { Mode } from '../../domain/modes.ts';
import { formatPlain, Money, toMoney } from '../../domain/money.ts';
import type { RateBook } from '../../pricing/rates.ts';
import type { SwapOrder, SwapState, SwapVenue } from '../venue.ts';

export const SANDBOX_BEHAVIOURS = ['fill', 'hold', 'down'] as const;

const percent = decimal({ min: 0, max: 100, shape: { integerDigits: 3, scale: 4 } });

export const sandboxVenueSchema = z.object({
  /** The simulated slippage: the fill is this much worse than the test rate. */
  slippagePercent: percent.optional(),
  /** The venue's simulated fee, in percent of the output. */
  feePercent: percent.optional(),
  /** fill: at once; hold: orders stay pending until set back to fill; down: takes no new orders (they are retried), holds the others. */
  behaviour: z.enum(SANDBOX_BEHAVIOURS).optional(),
});

export interface SandboxVenueSettings {
  slippagePercent: string;
  feePercent: string;
  behaviour: (typeof SANDBOX_BEHAVIOURS)[number];
}

const DEFAULTS: SandboxVenueSettings = { slippagePercent: '0', feePercent: '0', behaviour: 'fill' };

export async function sandboxVenueSettings(db: Db, companyId: string): Promise<SandboxVenueSettings> {
  const row = await db.sandboxSwapVenue.findUnique({ where: { companyId } });
  if (!row) return DEFAULTS;
  return { slippagePercent: formatPlain(row.slippagePercent), feePercent: formatPlain(row.feePercent), behaviour: row.behaviour as SandboxVenueSettings['behaviour'] };
}

export async function setSandboxVenue(db: Db, companyId: string, input: z.output<typeof sandboxVenueSchema>): Promise<SandboxVenueSettings> {
  const now = await sandboxVenueSettings(db, companyId);
  const next = {
    slippagePercent: input.slippagePercent?.toFixed() ?? now.slippagePercent,
    feePercent: input.feePercent?.toFixed() ?? now.feePercent,
    behaviour: input.behaviour ?? now.behaviour,
  };
  await db.sandboxSwapVenue.upsert({ where: { companyId }, create: { companyId, ...next }, update: { ...next, updatedAt: new Date() } });
  return sandboxVenueSettings(db, companyId);
}

export const SANDBOX_VENUE = 'sandbox';

export function sandboxVenue(db: Db, rates: RateBook, now: () => Date = () => new Date()): SwapVenue {
  const settingsOf = async (swapId: string) => {
    const swap = await db.autoSwap.findUnique({ where: { id: swapId }, select: { companyId: true } });
    return swap ? sandboxVenueSettings(db, swap.companyId) : DEFAULTS;
  };
  /** The fill now: the test rate less the slippage, less the fee; null when no test rate exists. */
  const fill = (order: SwapOrder, settings: SandboxVenueSettings) => {
    const quote = rates.quote('test', PAYMENT_CURRENCY_INFO[order.from].asset as InvoiceCurrency, order.to);
    if (!quote.ok) return null;
    const places = PAYMENT_CURRENCY_INFO[order.to].decimals;
    const gross = toMoney(order.amount).times(quote.quote.rate).times(new Money(100).minus(settings.slippagePercent).div(100));
    const venueFee = gross.times(settings.feePercent).div(100).toDecimalPlaces(places, Money.ROUND_UP);
    const toAmount = Money.max(gross.minus(venueFee), 0).toDecimalPlaces(places, Money.ROUND_DOWN);
    return { toAmount, venueFee };
  };
  const refused = (order: SwapOrder, toAmount: Money): SwapState => ({
    state: 'failed',
    ref: null,
    reason: `The venue would deliver ${toAmount.toFixed()} ${order.to}, below the minimum output of ${order.minOut.toFixed()} ${order.to} (slippage beyond maxSlippagePercent)`,
    retryable: false,
  });
  const filledState = (row: { ref: string; toAmount: unknown; venueFee: unknown }): SwapState => ({
    state: 'filled',
    ref: row.ref,
    toAmount: toMoney(row.toAmount as string),
    venueFee: toMoney(row.venueFee as string),
  });

  /** A pending order filled (or refused, or expired) now. */
  const settle = async (order: SwapOrder, ref: string, settings: SandboxVenueSettings): Promise<SwapState> => {
    if (settings.behaviour === 'hold') return { state: 'pending', ref };
    if (now() > order.deadline) {
      await db.sandboxSwapOrder.deleteMany({ where: { swapId: order.swapId, state: 'pending' } });
      return { state: 'failed', ref: null, reason: 'The order passed its deadline unfilled', retryable: true };
    }
    const f = fill(order, settings);
    if (!f) return { state: 'failed', ref: null, reason: `No test rate from ${order.from} to ${order.to}`, retryable: true };
    if (f.toAmount.lt(order.minOut)) {
      await db.sandboxSwapOrder.deleteMany({ where: { swapId: order.swapId, state: 'pending' } });
      return refused(order, f.toAmount);
    }
    const moved = await db.sandboxSwapOrder.updateMany({
      where: { swapId: order.swapId, state: 'pending' },
      data: { state: 'filled', toAmount: f.toAmount.toFixed(), venueFee: f.venueFee.toFixed() },
    });
    if (moved.count === 0) {
      const row = await db.sandboxSwapOrder.findUnique({ where: { swapId: order.swapId } });
      if (row?.state === 'filled') return filledState(row);
      return { state: 'failed', ref: null, reason: 'The order is gone', retryable: true };
    }
    return { state: 'filled', ref, toAmount: f.toAmount, venueFee: f.venueFee };
  };

  return {
    name: SANDBOX_VENUE,
    supports: (mode: Mode, from: PaymentCurrency, to: PaymentCurrency) => mode === 'test' && from !== to,
    minimum: () => null,
    async submit(order) {
      const settings = await settingsOf(order.swapId);
      // Down before anything was taken: a known failure, worth another attempt (the driver gives up after a few).
      if (settings.behaviour === 'down') return { state: 'failed', ref: null, reason: 'The sandbox venue is down (sandbox setting)', retryable: true };
      const ref = `sandbox-${order.swapId}`;
      // One order per swap id: a repeated submission counts the call and answers the first order.
      const [row] = await db.$queryRaw<{ state: string; ref: string; toAmount: string | null; venueFee: string | null; inserted: boolean }[]>`
        INSERT INTO "SandboxSwapOrder" ("swapId", "ref", "amount", "minOut", "state")
        VALUES (${order.swapId}::uuid, ${ref}, ${order.amount.toFixed()}::numeric, ${order.minOut.toFixed()}::numeric, 'pending')
        ON CONFLICT ("swapId") DO UPDATE SET "calls" = "SandboxSwapOrder"."calls" + 1
        RETURNING "state", "ref", "toAmount"::text AS "toAmount", "venueFee"::text AS "venueFee", (xmax = 0) AS "inserted"`;
      if (row!.state === 'filled') return filledState(row!);
      return settle(order, row!.ref, settings);
    },
    async status(order) {
      const settings = await settingsOf(order.swapId);
      const row = await db.sandboxSwapOrder.findUnique({ where: { swapId: order.swapId } });
      if (!row) return { state: 'failed', ref: null, reason: 'The venue has no such order', retryable: true };
      if (row.state === 'filled') return filledState(row);
      // Down takes no new orders; those it holds stay pending.
      if (settings.behaviour === 'down') return { state: 'pending', ref: row.ref };
      return settle(order, row.ref, settings);
    },
  };
}
