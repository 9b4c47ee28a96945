// What an e-mail shows, read when it is sent (a refund's transaction hash, once known, is in it): the invoice with its
// items, address, payments and refund, or the event's payload.
import type { Db } from '../db/client.ts';
import { PAYMENT_CURRENCY_INFO, isPaymentCurrency } from '../domain/assets.ts';
import { isLanguage } from '../domain/languages.ts';
import { toMoney } from '../domain/money.ts';
import type { EmailKind } from './kinds.ts';
import { renderEventEmail, renderInvoiceEmail, type InvoiceView, type RenderedEmail } from './templates.ts';

const plain = (v: { toString(): string } | null | undefined) => (v === null || v === undefined ? null : toMoney(v.toString()).toFixed());

export const currencyLabel = (paymentCurrency: string | null): string | null => {
  if (!paymentCurrency) return null;
  if (!isPaymentCurrency(paymentCurrency)) return paymentCurrency;
  const info = PAYMENT_CURRENCY_INFO[paymentCurrency];
  return `${info.asset.toUpperCase()} (${info.network})`;
};

export async function invoiceView(db: Db, invoiceId: string, payUrl: string, eventPayload: unknown): Promise<InvoiceView | null> {
  const invoice = await db.invoice.findUnique({
    where: { id: invoiceId },
    include: {
      company: { select: { name: true, mode: true } },
      items: { orderBy: { position: 'asc' } },
      address: true,
      refund: true,
      transfers: { where: { state: 'confirmed', role: 'payment' }, orderBy: { confirmedAt: 'asc' } },
    },
  });
  if (!invoice) return null;
  const payload = (eventPayload ?? {}) as Record<string, unknown>;
  const late = typeof payload['amount'] === 'string' && typeof payload['txHash'] === 'string' ? { amount: payload['amount'], txHash: payload['txHash'] } : null;
  return {
    id: invoice.id,
    merchantName: invoice.company.name,
    testMode: invoice.company.mode === 'test',
    items: invoice.items.map((i) => ({ name: i.name, price: plain(i.price)! })),
    invoiceCurrency: invoice.invoiceCurrency.toUpperCase(),
    total: plain(invoice.total)!,
    currencyLabel: currencyLabel(invoice.paymentCurrency),
    paymentAmount: plain(invoice.paymentAmount),
    address: invoice.address?.address ?? null,
    tag: invoice.address?.tag ?? null,
    expiredAt: invoice.expiredAt,
    paidAmount: plain(invoice.paidAmount)!,
    settledAt: invoice.settledAt,
    transactions: invoice.transfers.map((t) => ({ txHash: t.txHash, amount: plain(t.amount)! })),
    refund: invoice.refund
      ? { amount: plain(invoice.refund.amount)!, address: invoice.refund.toAddress, tag: invoice.refund.tag, txHash: invoice.refund.txHash }
      : null,
    late,
    // The one link: the checkout page, from PAY_URL only.
    link: `${payUrl}/${encodeURIComponent(invoice.id)}`,
  };
}

export interface DeliveryToRender {
  kind: string;
  lang: string;
  companyId: string;
  invoiceId: string | null;
  payload: unknown;
}

/** The e-mail of a delivery, or null when what it is about is gone. */
export async function renderDelivery(db: Db, payUrl: string, d: DeliveryToRender): Promise<{ email: RenderedEmail; view: InvoiceView | null } | null> {
  const kind = d.kind as EmailKind;
  const lang = isLanguage(d.lang) ? d.lang : 'en';
  if (d.invoiceId) {
    const view = await invoiceView(db, d.invoiceId, payUrl, d.payload);
    return view ? { email: renderInvoiceEmail(kind, lang, view), view } : null;
  }
  const company = await db.company.findUnique({ where: { id: d.companyId }, select: { name: true, mode: true } });
  if (!company) return null;
  const payload = d.payload && typeof d.payload === 'object' ? (d.payload as Record<string, unknown>) : {};
  return { email: renderEventEmail(kind, { merchantName: company.name, testMode: company.mode === 'test', payload }), view: null };
}
