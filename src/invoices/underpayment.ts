import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import type { Db } from '../db/client.ts';
import { COMPANY_ASSETS } from '../domain/assets.ts';
import { Money, formatPlain, toMoney } from '../domain/money.ts';
import { MAX_UNDERPAYMENT_PERCENT } from '../domain/settlement.ts';
import { decimal } from '../core/validation.ts';
import { decimalString } from '../http/schemas.ts';

export interface UnderpaymentLimitView {
  fixed: string | null;
  percent: string | null;
}

export const underpaymentLimitsAnswerSchema = z
  .strictObject({
    limits: z
      .partialRecord(
        z.enum(COMPANY_ASSETS),
        z.strictObject({
          fixed: decimalString.nullable().meta({ description: 'Tolerated shortfall in the asset; null when not set.' }),
          percent: decimalString.nullable().meta({ description: 'Tolerated shortfall in percent of the amount due; null when not set.' }),
        }),
      )
      .meta({ description: 'Only the assets with a limit.' }),
  })
  .meta({ id: 'UnderpaymentLimits', description: 'How short a payment may be and still count as paid: max(fixed, percent), per asset (docs/payments.md).' });

/** The percent column is Decimal(9,4). */
const PERCENT_SHAPE = { integerDigits: 5, scale: 4 };

export const underpaymentLimitsSchema = z.object({
  limits: z.partialRecord(
    z.enum(COMPANY_ASSETS),
    z
      .object({
        fixed: decimal({ min: 0, max: '1000000000' }).nullish(),
        percent: decimal({ shape: PERCENT_SHAPE, min: 0, max: MAX_UNDERPAYMENT_PERCENT }).nullish(),
      })
      .nullable(),
  ),
});

export async function getUnderpaymentLimits(db: Db, companyId: string): Promise<Record<string, UnderpaymentLimitView>> {
  const rows = await db.underpaymentLimit.findMany({ where: { companyId }, orderBy: { asset: 'asc' } });
  return Object.fromEntries(
    rows.map((r) => [r.asset, { fixed: r.fixed === null ? null : formatPlain(r.fixed), percent: r.percent === null ? null : formatPlain(r.percent) }]),
  );
}

/** Sets (or, with null, removes) the limits of the assets named; others stay as they are. */
export type UnderpaymentLimitsInput = z.output<typeof underpaymentLimitsSchema>;

export async function setUnderpaymentLimits(db: Db, companyId: string, { limits }: UnderpaymentLimitsInput) {
  await db.$transaction(async (tx) => {
    for (const [asset, limit] of Object.entries(limits)) {
      if (!limit || (limit.fixed == null && limit.percent == null)) {
        await tx.underpaymentLimit.deleteMany({ where: { companyId, asset } });
        continue;
      }
      const data = { fixed: limit.fixed?.toFixed() ?? null, percent: limit.percent?.toFixed() ?? null };
      await tx.underpaymentLimit.upsert({ where: { companyId_asset: { companyId, asset } }, create: { companyId, asset, ...data }, update: data });
    }
  });
  return getUnderpaymentLimits(db, companyId);
}

/**
 * How short of `expected` a payment may be and still count as paid, given the merchant's limit row for the asset
 * (null: none set): max(fixed, percent of expected), never more than MAX_UNDERPAYMENT_PERCENT of expected.
 */
export function toleranceFrom(limit: { fixed: Decimal | null; percent: Decimal | null } | null, expected: Decimal): Decimal {
  if (!limit) return new Money(0);
  const fixed = limit.fixed === null ? new Money(0) : toMoney(limit.fixed);
  const byPercent = limit.percent === null ? new Money(0) : expected.times(toMoney(limit.percent)).div(100);
  return Money.min(Money.max(fixed, byPercent), expected.times(MAX_UNDERPAYMENT_PERCENT).div(100));
}
