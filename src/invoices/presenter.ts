// Spec shapes of an invoice, shared by REST (whole object) and GraphQL (field by field).
import { z } from 'zod';
import type { PaymentRequest } from '../chains/payment-uri.ts';
import {
  COMPANY_ASSETS,
  INVOICE_CURRENCIES,
  isInvoiceCurrency,
  isPaymentCurrency,
  PAYMENT_CURRENCIES,
  presentCompanyAssets,
  PRICE_PRECISION,
  type OfferedNetwork,
} from '../domain/assets.ts';
import { MODES } from '../domain/modes.ts';
import { formatFixed, formatPlain, toMoney } from '../domain/money.ts';
import { decimalString, isoInstant } from '../http/schemas.ts';
import type { InvoiceRecord } from './queries.ts';
import { RATE_SOURCE_NAMES, presentRateDetails } from '../pricing/audit.ts';
import { INVOICE_STATUSES, SETTLEMENTS } from './status.ts';
import { metadataSchema, orderIdSchema } from './rules.ts';
import { presentAutoswap } from '../autoswap/rules.ts';
import { autoswapEntrySchema } from '../autoswap/presenter.ts';

// The REST invoice as the OpenAPI document shows it (docs/openapi.md); presentInvoice below produces it.

export const paymentCurrencySchema = z.enum(PAYMENT_CURRENCIES).meta({ id: 'PaymentCurrency', description: 'A crypto asset plus its network.' });

const invoiceStatusSchema = z.enum(INVOICE_STATUSES).meta({ id: 'InvoiceStatus', description: 'Where the invoice stands (the spec\'s states and transitions).' });

const invoiceCompanySchema = z
  .strictObject({
    name: z.string(),
    logoUrl: z.string().meta({ description: 'Empty when the merchant has no logo.' }),
    assets: z.array(z.strictObject({ asset: z.enum(COMPANY_ASSETS), isAllowed: z.boolean() })).meta({ description: 'Every asset, with whether this merchant accepts it.' }),
  })
  .meta({ id: 'InvoiceCompany', description: 'The merchant, as the client sees it.' });

const invoiceContentSchema = z
  .strictObject({
    invoiceCurrency: z.enum(INVOICE_CURRENCIES),
    items: z.array(z.strictObject({ name: z.string(), price: decimalString.meta({ description: "Rounded to the invoice currency's precision." }) })),
    paymentCurrency: paymentCurrencySchema.nullable().meta({ description: "The merchant's fixed currency, else the client's choice once filled; null while the client has yet to choose." }),
    isMerchantPaysFee: z.boolean(),
    redirectURL: z.string().nullable().meta({ description: 'Exactly what was sent at creation (null when absent).' }),
  })
  .meta({ id: 'InvoiceContent' });

const paymentAddressSchema = z
  .strictObject({
    id: z.string(),
    address: z.string(),
    tag: z.string().nullable().meta({ description: 'The memo to send with the payment (TON); null otherwise.' }),
    asset: paymentCurrencySchema,
  })
  .meta({ id: 'PaymentAddress', description: 'Where the client pays. Present once the invoice is filled.' });

const rateSourceSchema = z
  .strictObject({
    source: z.enum(RATE_SOURCE_NAMES).meta({ description: 'Where the price came from (docs/rates.md); static: the RATES_FILE table.' }),
    market: z.string().meta({ description: 'The market or id the source priced, e.g. BTC/USD, BTC/USDT, bitcoin.usd, RATES_FILE.' }),
    price: decimalString.meta({ description: 'The price as the source gave it, in the market’s quote currency.' }),
    usdPrice: decimalString.meta({ description: 'The same in USD (through the market’s stablecoin or EUR price when not quoted in USD).' }),
    fetchedAt: isoInstant.meta({ description: 'When the source answered.' }),
  })
  .meta({ id: 'RateSourcePrice' });

const ratePriceSchema = z
  .strictObject({
    asset: z.string().meta({ description: 'The currency or asset priced (usd, eur, btc, usdt, ...).' }),
    usdPrice: decimalString.meta({ description: 'Its USD price: the median of the sources used (1 for usd).' }),
    sources: z.array(rateSourceSchema).meta({ description: 'The sources whose prices made it (none for usd).' }),
  })
  .meta({ id: 'RatePrice' });

export const rateSourcesSchema = z
  .strictObject({
    kind: z.enum(['live', 'static']).meta({ description: 'live: aggregated from the sources of RATES_CONFIG; static: the RATES_FILE table (test mode).' }),
    invoiceCurrency: ratePriceSchema,
    paymentCurrency: ratePriceSchema,
    spreadPercent: decimalString.meta({ description: 'Added to the mid rate (the client pays it).' }),
    computedAt: isoInstant.meta({ description: 'When the rate was locked (proceed).' }),
  })
  .meta({ id: 'RateSources', description: 'What the locked rate was made of: rate = invoiceCurrency.usdPrice / paymentCurrency.usdPrice × (1 + spreadPercent/100).' });

const paymentDetailsSchema = z
  .strictObject({
    rate: decimalString.meta({ description: 'Exchange rate from the invoice currency to the payment currency.' }),
    invoiceFee: decimalString.meta({ description: 'Fees, in the payment currency.' }),
    amount: decimalString.meta({ description: 'What the client must send (docs/money.md).' }),
    paidAmount: decimalString.meta({ description: 'Confirmed so far.' }),
    overpaidAmount: decimalString.meta({ description: 'Confirmed beyond the amount.' }),
    rateSources: rateSourcesSchema.optional().meta({ description: 'The rate’s audit (docs/rates.md); absent for invoices filled before it was recorded.' }),
  })
  .meta({ id: 'PaymentDetails', description: 'The quote. Present once the invoice is filled.' });

const invoiceTransactionSchema = z
  .strictObject({
    id: z.string(),
    amount: decimalString,
    from: paymentCurrencySchema.meta({ description: 'The asset the transaction was made in.' }),
    txHash: z.string().meta({ description: 'The bare transaction hash (docs/api-decisions.md).' }),
    companyId: z.string(),
    invoiceId: z.string(),
    addressId: z.string(),
    createdAt: isoInstant,
    status: z.enum(['seen', 'confirmed', 'dropped', 'frozen']).meta({ description: 'seen on chain, confirmed, dropped from the chain, or frozen by the risk check.' }),
    confirmations: z.int(),
    kind: z.enum(['payment', 'late', 'wrong_asset', 'deposit']).meta({ description: 'How it counts: toward the invoice, after it closed, or in an asset it does not expect.' }),
  })
  .meta({ id: 'InvoiceTransaction' });

const refundSchema = z
  .strictObject({
    id: z.string(),
    address: z.string(),
    tag: z.string().nullable(),
    amount: decimalString.meta({ description: 'Sent to the client.' }),
    networkFee: decimalString.meta({ description: 'Paid on top, out of the refunded payment.' }),
    status: z.enum(['queued', 'sent', 'confirmed']).meta({
      description: 'queued: not accepted by the chain yet (or an earlier send failed on chain and it goes out again); sent: broadcast, txHash set; confirmed: final on chain.',
    }),
    txHash: z.string().nullable(),
    createdAt: isoInstant,
  })
  .meta({ id: 'Refund', description: 'The return of a declined short payment.' });

export const invoiceSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The client opens {pay_url}/<id>.', example: '7Qx3hHq1bXo9b3kQmZzJ2f' }),
    status: invoiceStatusSchema,
    createdAt: isoInstant,
    company: invoiceCompanySchema,
    invoiceContent: invoiceContentSchema,
    redirectURL: z.string().nullable().optional().meta({ description: 'The effective redirect after `done` (the invoice\'s, else the merchant default). Present once filled.' }),
    clientEmail: z.string().optional().meta({ description: 'Present once filled.' }),
    address: paymentAddressSchema.nullable().optional(),
    paymentDetails: paymentDetailsSchema.nullable().optional(),
    expiredAt: isoInstant.optional().meta({ description: 'Present once filled.' }),
    invoiceTransactions: z
      .array(z.union([invoiceTransactionSchema, autoswapEntrySchema]))
      .optional()
      .meta({ description: 'Only from the read operation, once a transaction exists: transfers to the address (kind payment, late or wrong_asset) and autoswaps of the payments (kind autoswap), oldest first.' }),
    refund: refundSchema.optional(),
    mode: z.enum(MODES).meta({ description: 'test: paid on the simulated chain (docs/modes.md); live: real money.' }),
    paymentLinkId: z.string().nullable().meta({ description: 'The payment link whose opening made this invoice (docs/payment-links.md); null when it was made through the API.' }),
    payUrl: z.string().meta({ description: 'The checkout page of the invoice ({pay_url}/<id>): send the client there.', example: 'https://pay.example/7Qx3hHq1bXo9b3kQmZzJ2f' }),
    orderId: orderIdSchema.optional().meta({ description: "The merchant's order reference, as sent at creation; absent when none." }),
    metadata: metadataSchema.optional().meta({ description: 'The metadata sent at creation, keys in the order sent; absent when none.' }),
    acceptedAt: isoInstant.optional().meta({ description: 'When the merchant accepted a short or late payment as paid; absent otherwise.' }),
    settlement: z.enum(SETTLEMENTS).optional().meta({
      description: "The merchant's decision on a short or late payment: accepted_short (a wrong invoice kept as paid), accepted_late (a closed invoice's late payment kept), refunded. Absent until decided.",
    }),
  })
  .meta({ id: 'Invoice', description: 'A regular (fixed-amount) invoice; the fields present depend on its status.' });

/** Priced lines in an invoice currency: an invoice's, or a payment link's. */
type Items = { invoiceCurrency: string; items: Pick<InvoiceRecord['items'][number], 'name' | 'price'>[] };

const pricePlaces = (invoice: Items) => (isInvoiceCurrency(invoice.invoiceCurrency) ? PRICE_PRECISION[invoice.invoiceCurrency] : 18);

export const presentItems = (invoice: Items) => invoice.items.map((item) => ({ name: item.name, price: formatFixed(item.price, pricePlaces(invoice)) }));

/** The sum of the (already rounded) item prices, at the invoice currency's precision. */
export const presentTotal = (invoice: Items) =>
  formatFixed(invoice.items.reduce((sum, item) => sum.plus(toMoney(item.price)), toMoney(0)), pricePlaces(invoice));

/** The payment currency in effect: the client's choice once filled, else the merchant's fixed one (or null). */
export const effectivePaymentCurrency = (invoice: Pick<InvoiceRecord, 'paymentCurrency' | 'fixedPaymentCurrency'>) =>
  invoice.paymentCurrency ?? invoice.fixedPaymentCurrency ?? null;

/** clientEmail, address, paymentDetails, expiredAt and the top-level redirectURL exist once filled. */
export const isFilled = (invoice: Pick<InvoiceRecord, 'proceededAt'>) => invoice.proceededAt !== null;

export const presentPaymentDetails = (
  invoice: Pick<InvoiceRecord, 'rate' | 'invoiceFee' | 'paymentAmount' | 'paidAmount' | 'overpaidAmount'> & { rateDetails?: unknown },
) => {
  if (invoice.rate === null || invoice.invoiceFee === null || invoice.paymentAmount === null) return null;
  const rateSources = presentRateDetails(invoice.rateDetails);
  return {
    rate: formatPlain(invoice.rate),
    invoiceFee: formatPlain(invoice.invoiceFee),
    amount: formatPlain(invoice.paymentAmount),
    paidAmount: formatPlain(invoice.paidAmount),
    overpaidAmount: formatPlain(invoice.overpaidAmount),
    ...(rateSources ? { rateSources } : {}),
  };
};

/** Statuses in which the client is asked to pay: waiting for a payment, or for the rest of a short one. */
const AWAITING_PAYMENT = new Set(['pending', 'wrong']);

/**
 * What is still to be paid, as a request a wallet can take (payment URI, QR code): the payment amount less what
 * confirmed payments brought (a short payment's top-up). Null unless the invoice waits for a payment (before it is
 * filled, while a payment is being confirmed, once done, closed or refunded) or once nothing is due.
 */
export function outstandingPayment(
  invoice: Pick<InvoiceRecord, 'status' | 'paymentCurrency' | 'paymentAmount' | 'paidAmount'> & { address: { address: string; tag: string | null } | null },
): PaymentRequest | null {
  if (!AWAITING_PAYMENT.has(invoice.status)) return null;
  if (!invoice.paymentCurrency || !invoice.paymentAmount || !invoice.address || !isPaymentCurrency(invoice.paymentCurrency)) return null;
  const due = toMoney(invoice.paymentAmount).minus(toMoney(invoice.paidAmount));
  if (due.lte(0)) return null;
  return { currency: invoice.paymentCurrency, address: invoice.address.address, tag: invoice.address.tag, amount: formatPlain(due) };
}

/** invoiceTransactions: transfers and autoswaps, oldest first. */
export const presentTransactions = (transfers: InvoiceRecord['transfers'], autoswaps: InvoiceRecord['autoswaps'] = []) =>
  [
    ...presentTransfers(transfers).map((view, i) => ({ at: transfers[i]!.seenAt.getTime(), view })),
    ...autoswaps.map((s) => ({ at: s.createdAt.getTime(), view: presentAutoswap(s) as Record<string, unknown> })),
  ]
    .sort((a, b) => a.at - b.at)
    .map((e) => e.view);

/** A transfer's entry: the spec's fields, then ours (state, confirmations, kind). */
export const presentTransfers = (transfers: InvoiceRecord['transfers']) =>
  transfers.map((t) => ({
    id: t.id,
    amount: formatPlain(t.amount),
    from: t.asset,
    txHash: t.txHash,
    companyId: t.companyId,
    invoiceId: t.invoiceId,
    addressId: t.addressId,
    createdAt: t.seenAt.toISOString(),
    status: t.state,
    confirmations: t.confirmations,
    kind: t.role,
  }));

export const presentRefund = (refund: InvoiceRecord['refund']) =>
  refund
    ? {
        id: refund.id,
        address: refund.toAddress,
        tag: refund.tag,
        amount: formatPlain(refund.amount),
        networkFee: formatPlain(refund.networkFee),
        status: refund.status,
        txHash: refund.txHash,
        createdAt: refund.createdAt.toISOString(),
      }
    : null;

export const presentAddress = (address: InvoiceRecord['address']) =>
  address ? { id: address.id, address: address.address, tag: address.tag, asset: address.asset } : null;

export const presentCompany = (company: InvoiceRecord['company'], offered: OfferedNetwork) => ({
  name: company.name,
  logoUrl: company.logoUrl,
  assets: presentCompanyAssets(company.acceptedAssets, offered),
});

/** The checkout page of an invoice: {pay_url}/<id> (REST `payUrl`, GraphQL `Invoice.payUrl`). */
export const invoicePayUrl = (payUrlBase: string, invoiceId: string): string => `${payUrlBase}/${invoiceId}`;

/**
 * The REST invoice object, keys in the spec's order, then ours; absent fields are left out, not null. `offered`: the networks
 * offered in the invoice's mode (company.assets). invoiceTransactions come only with the read operation, as the spec says.
 */
export function presentInvoice(
  invoice: InvoiceRecord,
  offered: OfferedNetwork,
  payUrlBase: string,
  { withTransactions = false } = {},
): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: invoice.id,
    status: invoice.status,
    createdAt: invoice.createdAt.toISOString(),
    company: presentCompany(invoice.company, offered),
    invoiceContent: {
      invoiceCurrency: invoice.invoiceCurrency,
      items: presentItems(invoice),
      paymentCurrency: effectivePaymentCurrency(invoice),
      isMerchantPaysFee: invoice.isMerchantPaysFee,
      redirectURL: invoice.requestedRedirectUrl,
    },
  };
  if (isFilled(invoice)) {
    view['redirectURL'] = invoice.redirectUrl;
    view['clientEmail'] = invoice.clientEmail;
    view['address'] = presentAddress(invoice.address);
    view['paymentDetails'] = presentPaymentDetails(invoice);
    view['expiredAt'] = invoice.expiredAt?.toISOString();
  }
  if (withTransactions && invoice.transfers.length + invoice.autoswaps.length > 0) view['invoiceTransactions'] = presentTransactions(invoice.transfers, invoice.autoswaps);
  if (invoice.refund) view['refund'] = presentRefund(invoice.refund);
  view['mode'] = invoice.company.mode;
  view['paymentLinkId'] = invoice.paymentLinkId;
  view['payUrl'] = invoicePayUrl(payUrlBase, invoice.id);
  if (invoice.orderId !== null) view['orderId'] = invoice.orderId;
  if (invoice.metadata !== null) view['metadata'] = invoice.metadata;
  if (invoice.acceptedAt !== null) view['acceptedAt'] = invoice.acceptedAt.toISOString();
  if (invoice.settlement !== null) view['settlement'] = invoice.settlement;
  return view;
}
