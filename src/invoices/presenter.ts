// Spec shapes of an invoice, shared by REST (whole object) and GraphQL (field by field).
import type { PaymentRequest } from '../chains/payment-uri.ts';
import { isInvoiceCurrency, isPaymentCurrency, presentCompanyAssets, PRICE_PRECISION } from '../domain/assets.ts';
import { formatFixed, formatPlain, toMoney } from '../domain/money.ts';
import type { InvoiceRecord } from './queries.ts';

type Items = Pick<InvoiceRecord, 'invoiceCurrency' | 'items'>;

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

export const presentPaymentDetails = (invoice: Pick<InvoiceRecord, 'rate' | 'invoiceFee' | 'paymentAmount' | 'paidAmount' | 'overpaidAmount'>) =>
  invoice.rate === null || invoice.invoiceFee === null || invoice.paymentAmount === null
    ? null
    : {
        rate: formatPlain(invoice.rate),
        invoiceFee: formatPlain(invoice.invoiceFee),
        amount: formatPlain(invoice.paymentAmount),
        paidAmount: formatPlain(invoice.paidAmount),
        overpaidAmount: formatPlain(invoice.overpaidAmount),
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

/** invoiceTransactions: the spec's fields, then ours (state, confirmations, kind). */
export const presentTransactions = (transfers: InvoiceRecord['transfers']) =>
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

export const presentCompany = (company: InvoiceRecord['company']) => ({
  name: company.name,
  logoUrl: company.logoUrl,
  assets: presentCompanyAssets(company.acceptedAssets),
});

/**
 * The REST invoice object, keys in the spec's order; absent fields are left out, not null.
 * invoiceTransactions come only with the read operation, as the spec says.
 */
export function presentInvoice(invoice: InvoiceRecord, { withTransactions = false } = {}): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: invoice.id,
    status: invoice.status,
    createdAt: invoice.createdAt.toISOString(),
    company: presentCompany(invoice.company),
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
  if (withTransactions && invoice.transfers.length > 0) view['invoiceTransactions'] = presentTransactions(invoice.transfers);
  if (invoice.refund) view['refund'] = presentRefund(invoice.refund);
  return view;
}
