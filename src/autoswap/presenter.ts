// The REST shapes of autoswap (the OpenAPI document shows them; every answer in the tests is checked against them).
import { z } from 'zod';
import { PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { decimalString, isoInstant } from '../http/schemas.ts';
import { AUTOSWAP_STATUSES, type AutoswapRule } from './rules.ts';
import { SANDBOX_BEHAVIOURS, type SandboxVenueSettings } from './venues/sandbox.ts';

export const autoswapRulesSchema = z
  .strictObject({
    autoswaps: z
      .array(
        z
          .strictObject({
            asset: z.enum(PAYMENT_CURRENCIES).meta({ description: 'The payment currency whose credits are swapped.' }),
            isEnabled: z.boolean(),
            toCurrency: z.enum(PAYMENT_CURRENCIES).nullable().meta({ description: 'What they are swapped to; null while never set.' }),
            maxSlippagePercent: decimalString.meta({ description: 'The least output is the rate at submission less this share; a worse fill fails the swap.' }),
          })
          .meta({ id: 'AutoswapRule' }),
      )
      .meta({ description: 'One entry per payment currency, in the order of the payment currency table.' }),
  })
  .meta({ id: 'AutoswapRules' });

export const presentAutoswapRules = (rules: AutoswapRule[]) => ({ autoswaps: rules });

export const autoswapEntrySchema = z
  .strictObject({
    id: z.string(),
    kind: z.literal('autoswap'),
    from: z.enum(PAYMENT_CURRENCIES).meta({ description: 'The currency sold (the credit’s).' }),
    amount: decimalString.meta({ description: 'Sold, in `from`: the credited net amount.' }),
    to: z.enum(PAYMENT_CURRENCIES),
    toAmount: decimalString.nullable().meta({ description: 'Credited in `to` once done (after the venue’s fee and ours); null before.' }),
    rate: decimalString.nullable().meta({ description: 'Once done: toAmount / amount. Before: the rate the minimum output was fixed from; null until then.' }),
    status: z.enum(AUTOSWAP_STATUSES).meta({ description: 'queued: held, waiting for the venue; submitted: the venue has the order; done; failed: released.' }),
    txHash: z.string().nullable().meta({ description: 'The swap’s transaction hash on chain, or the venue’s order id; null until submitted.' }),
    companyId: z.string(),
    invoiceId: z.string().nullable().meta({ description: 'The invoice whose payment it swaps; null for a deposit’s.' }),
    addressId: z.string().nullable().meta({ description: 'The address that received the swapped money.' }),
    createdAt: isoInstant,
    reason: z.string().nullable().meta({ description: 'Why it failed; null otherwise.' }),
  })
  .meta({ id: 'AutoswapTransaction', description: 'An autoswap of a credit (docs/autoswap.md).' });

export const sandboxVenueViewSchema = z
  .strictObject({
    slippagePercent: decimalString,
    feePercent: decimalString,
    behaviour: z.enum(SANDBOX_BEHAVIOURS),
  })
  .meta({ id: 'SandboxSwapVenue' });

export const presentSandboxVenue = (s: SandboxVenueSettings) => s;
