// Pure invoice rules: input validation, price rounding and the payment quote. No I/O here.
import type { Decimal } from 'decimal.js';
import { z } from 'zod';
import { LANGUAGES } from '../domain/languages.ts';
import {
  INVOICE_CURRENCIES,
  PAYMENT_CURRENCIES,
  PAYMENT_CURRENCY_INFO,
  PRICE_PRECISION,
  type OfferedNetwork,
  type PaymentCurrency,
} from '../domain/assets.ts';
import { MAX_AMOUNT, Money, roundPrice, roundUpToUnit } from '../domain/money.ts';
import { decimal, email, httpUrl, MAX_EMAIL_LENGTH, MAX_URL_LENGTH, tag } from '../core/validation.ts';
import type { FeeRule } from '../pricing/fees.ts';

export const LIMITS = {
  maxItems: 500,
  maxItemNameLength: 200,
  maxUrlLength: MAX_URL_LENGTH,
  maxEmailLength: MAX_EMAIL_LENGTH,
  /** Largest absolute item price, and largest total (docs/money.md, "Limits"). */
  maxAbsPrice: MAX_AMOUNT,
  maxTotal: MAX_AMOUNT,
  /** The merchant's order reference, and metadata limits as Stripe's (docs/payments.md, "Order references"). */
  maxOrderIdLength: 128,
  maxMetadataKeys: 50,
  maxMetadataKeyLength: 40,
  maxMetadataValueLength: 500,
} as const;

// Control characters would make an id unprintable in logs, CSV and dashboards.
const CONTROL = /\p{Cc}/u;
const noControl = (s: string) => !CONTROL.test(s);

export const orderIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(LIMITS.maxOrderIdLength, `must be at most ${LIMITS.maxOrderIdLength} characters`)
  .refine(noControl, 'must not contain control characters')
  .meta({ description: "The merchant's order reference (1-128 characters). An open invoice of the merchant with this orderId is answered instead of a new one (docs/payments.md, \"Order references\").", example: 'order-1042' });

/** A flat string -> string map; keys keep the order sent. */
const metadataRecord = z.record(z.string(), z.string().max(LIMITS.maxMetadataValueLength, `must be at most ${LIMITS.maxMetadataValueLength} characters`));

export const metadataSchema = z
  // A JSON key "__proto__" is an own key of the parsed body, which zod's record would drop without a word.
  .preprocess((value, ctx) => {
    if (value !== null && typeof value === 'object' && Object.hasOwn(value, '__proto__')) {
      ctx.addIssue({ code: 'custom', path: ['__proto__'], message: 'keys must not be __proto__', input: value });
    }
    return value;
  }, metadataRecord)
  // Keys checked here rather than by a key schema, whose failures zod reports only as "Invalid key in record".
  .superRefine((m, ctx) => {
    const keys = Object.keys(m);
    if (keys.length > LIMITS.maxMetadataKeys) ctx.addIssue({ code: 'custom', message: `must have at most ${LIMITS.maxMetadataKeys} keys` });
    for (const key of keys) {
      const problem =
        key.length === 0 ? 'keys must not be empty'
        : key.length > LIMITS.maxMetadataKeyLength ? `keys must be at most ${LIMITS.maxMetadataKeyLength} characters`
        : !noControl(key) ? 'keys must not contain control characters'
        : null;
      if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
    }
  })
  .meta({
    id: 'Metadata',
    // Said here: the schema generator reads neither the preprocess's input nor the refinement.
    type: 'object',
    maxProperties: LIMITS.maxMetadataKeys,
    propertyNames: { minLength: 1, maxLength: LIMITS.maxMetadataKeyLength },
    additionalProperties: { type: 'string', maxLength: LIMITS.maxMetadataValueLength },
    description: 'Flat string -> string map the merchant keeps on the invoice: at most 50 keys of 1-40 characters, values of at most 500 characters.', example: { customerId: 'c_981', channel: 'web' } });

const enumMessage = (values: readonly string[]) => ({ message: `must be one of: ${values.join(', ')}` });

/** The merchant takes payments in `currency`: its asset is one the company accepts. */
export const acceptsCurrency = (acceptedAssets: readonly string[], currency: PaymentCurrency): boolean =>
  acceptedAssets.includes(PAYMENT_CURRENCY_INFO[currency].asset);

/**
 * What a client may pay an invoice in: the merchant's fixed currency, else every currency the merchant accepts; of
 * those, the ones offered in the merchant's mode.
 */
export const payableCurrencies = (acceptedAssets: readonly string[], fixed: PaymentCurrency | null, offered: OfferedNetwork): PaymentCurrency[] =>
  (fixed ? [fixed] : PAYMENT_CURRENCIES).filter((c) => acceptsCurrency(acceptedAssets, c) && offered(PAYMENT_CURRENCY_INFO[c].network));

/**
 * The fields of an invoice's content, as the create body names them: also a payment link's (payment-links/), which
 * makes invoices of the same content. Read with `invoiceContent`, which prices the items.
 */
export const invoiceContentFields = {
  invoiceCurrency: z.enum(INVOICE_CURRENCIES, enumMessage(INVOICE_CURRENCIES)),
  items: z
    .array(
      z.object({
        name: z.string().trim().min(1, 'must not be empty').max(LIMITS.maxItemNameLength),
        price: decimal({ min: LIMITS.maxAbsPrice.neg(), max: LIMITS.maxAbsPrice }),
      }),
    )
    .min(1, 'must contain at least one item')
    .max(LIMITS.maxItems, `must contain at most ${LIMITS.maxItems} items`),
  isMerchantPaysFee: z.boolean().nullish(),
  paymentCurrency: z.enum(PAYMENT_CURRENCIES, enumMessage(PAYMENT_CURRENCIES)).nullish(),
  redirectURL: httpUrl.nullish(),
};

type ContentFields = z.output<z.ZodObject<typeof invoiceContentFields>>;

/**
 * The content as an invoice is made of it: items rounded to the currency's precision, their total (greater than 0,
 * at most the limit), and null for what was not given (isMerchantPaysFee and redirectURL then come from the store's
 * settings when the invoice is made). Adds the issue to `ctx` and answers z.NEVER when the total is out of range.
 */
export function invoiceContent(input: ContentFields, ctx: z.RefinementCtx) {
  const places = PRICE_PRECISION[input.invoiceCurrency];
  const items = input.items.map((item) => ({ name: item.name, price: roundPrice(item.price, places) }));
  const total = items.reduce((sum, item) => sum.plus(item.price), new Money(0));
  if (!total.isPositive() || total.isZero()) {
    ctx.addIssue({ code: 'custom', path: ['items'], message: 'the total of all item prices must be greater than 0' });
    return z.NEVER;
  }
  if (total.gt(LIMITS.maxTotal)) {
    ctx.addIssue({ code: 'custom', path: ['items'], message: `the total of all item prices must be at most ${LIMITS.maxTotal.toFixed()}` });
    return z.NEVER;
  }
  return {
    invoiceCurrency: input.invoiceCurrency,
    items,
    total,
    isMerchantPaysFee: input.isMerchantPaysFee ?? null,
    paymentCurrency: input.paymentCurrency ?? null,
    redirectURL: input.redirectURL ?? null,
  };
}

export const createInvoiceSchema = z
  .object({ ...invoiceContentFields, orderId: orderIdSchema.nullish(), metadata: metadataSchema.nullish() })
  .transform((input, ctx) => ({
    // On a refused total invoiceContent has added its issue, and the parse fails whatever this answers.
    ...invoiceContent(input, ctx),
    orderId: input.orderId ?? null,
    // No keys is no metadata.
    metadata: input.metadata && Object.keys(input.metadata).length > 0 ? input.metadata : null,
  }));

export type CreateInvoiceInput = z.output<typeof createInvoiceSchema>;

/** The client's payment currency is required only when the merchant fixed none (checked against the invoice). */
export const proceedInvoiceSchema = z.object({
  clientEmail: email,
  paymentCurrency: z.enum(PAYMENT_CURRENCIES, enumMessage(PAYMENT_CURRENCIES)).nullish().transform((c) => c ?? null),
  /** The client's language for e-mails (the checkout page's); absent: the request's Accept-Language, else English. */
  lang: z.enum(LANGUAGES, enumMessage(LANGUAGES)).nullish().transform((l) => l ?? null),
});

export type ProceedInvoiceInput = z.output<typeof proceedInvoiceSchema>;

export const refundInvoiceSchema = z.object({
  address: z.string().trim().min(1, 'must not be empty').max(128),
  // An empty tag is no tag (the spec's withdrawal rule, kept alike here).
  tag: z.union([z.literal(''), tag]).nullish().transform((t) => t || null),
});

export type RefundInvoiceInput = z.output<typeof refundInvoiceSchema>;

export interface PaymentQuote {
  rate: Decimal;
  /** Invoice total converted to the payment currency, rounded up to the chain unit. */
  converted: Decimal;
  invoiceFee: Decimal;
  /** What the client must send. */
  paymentAmount: Decimal;
}

/**
 * converted = ceil(total x rate); invoiceFee = ceil(converted x percent / 100 + fixed);
 * paymentAmount = converted + invoiceFee, or converted alone when the merchant pays the fee
 * (ceil = up to the payment currency's smallest on-chain unit).
 */
export function quotePayment(args: {
  total: Decimal;
  rate: Decimal;
  fee: FeeRule;
  paymentCurrency: PaymentCurrency;
  isMerchantPaysFee: boolean;
}): PaymentQuote {
  const places = PAYMENT_CURRENCY_INFO[args.paymentCurrency].decimals;
  const converted = roundUpToUnit(args.total.times(args.rate), places);
  const invoiceFee = roundUpToUnit(converted.times(args.fee.percent).div(100).plus(args.fee.fixed), places);
  const paymentAmount = args.isMerchantPaysFee ? converted : converted.plus(invoiceFee);
  return { rate: args.rate, converted, invoiceFee, paymentAmount };
}

export const expiryFor = (paymentCurrency: PaymentCurrency, from: Date): Date =>
  new Date(from.getTime() + PAYMENT_CURRENCY_INFO[paymentCurrency].expiryMinutes * 60_000);

