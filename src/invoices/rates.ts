// Reading the rates (GET /api/rates and GraphQL `rates`): what one unit of an invoice currency converts to in each
// payment currency now, in the caller's mode (a token's, else live), from memory like proceed (docs/rates.md).
import { z } from 'zod';
import type { Services } from '../core/feature.ts';
import { INVOICE_CURRENCIES, PAYMENT_CURRENCIES, type InvoiceCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { decimalString, isoInstant } from '../http/schemas.ts';
import { route, type Route } from '../http/router.ts';
import { RATE_SOURCE_NAMES } from '../pricing/audit.ts';
import type { RateBook } from '../pricing/rates.ts';

export const ratesQuerySchema = z.object({
  invoiceCurrency: z.enum(INVOICE_CURRENCIES, { message: `must be one of ${INVOICE_CURRENCIES.join(', ')}` }),
});

const rateSchema = z
  .strictObject({
    paymentCurrency: z.enum(PAYMENT_CURRENCIES),
    rate: decimalString.meta({ description: 'Units of the payment currency one unit of the invoice currency buys (spread included), as proceed would lock it now.' }),
    sources: z.array(z.enum(RATE_SOURCE_NAMES)).meta({ description: 'The sources whose prices made it (either side).' }),
    updatedAt: isoInstant.meta({ description: 'When the oldest of those prices was fetched.' }),
  })
  .meta({ id: 'Rate' });

export const ratesAnswerSchema = z
  .strictObject({ rates: z.array(rateSchema).meta({ description: 'Every payment currency that has a good rate now; one without is left out (proceed in it answers 503 RATE_UNAVAILABLE).' }) })
  .meta({ id: 'Rates' });

export interface RateView {
  paymentCurrency: string;
  rate: string;
  sources: string[];
  updatedAt: Date;
}

/** The one read both surfaces call. */
export const listRates = (rates: RateBook, mode: Mode, invoiceCurrency: InvoiceCurrency): RateView[] =>
  rates.list(mode, invoiceCurrency).map((r) => ({ paymentCurrency: r.paymentCurrency, rate: r.rate.toFixed(), sources: r.sources, updatedAt: r.updatedAt }));

export const rateRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/rates',
    auth: 'optional',
    scope: 'invoices:read',
    query: ratesQuerySchema,
    doc: {
      operationId: 'getRates',
      summary: 'Read the exchange rates',
      description:
        'Public. The rates proceed would lock now from `invoiceCurrency` to each payment currency: live mode’s (RATES_CONFIG, docs/rates.md) without a token, the token’s mode with one (test mode: the static table unless TEST_MODE_RATES=live). A currency without a good rate now is left out.',
      tag: 'Rates',
      responses: { 200: { description: 'The rates.', schema: ratesAnswerSchema } },
    },
    handler: async (req, ctx) => ({
      status: 200,
      body: { rates: listRates(ctx.invoices.rates, req.company?.mode ?? 'live', req.query.invoiceCurrency).map((r) => ({ ...r, updatedAt: r.updatedAt.toISOString() })) },
    }),
  }),
];
