// The invoice export: one row per invoice created in the range, with what an accountant reconciles it by.
import { isInvoiceCurrency, PRICE_PRECISION } from '../domain/assets.ts';
import { spreadsheetText, type ExportRange } from '../domain/exports.ts';
import { formatFixed, formatPlain } from '../domain/money.ts';
import type { Db } from '../db/client.ts';
import { keysetPages } from './csv.ts';
import { rateDetailsCell } from '../pricing/audit.ts';

/** The columns of an invoice export, in file order (docs/exports.md). */
export const INVOICE_COLUMNS = [
  'invoice_id',
  'created_at',
  'status',
  'invoice_currency',
  'total',
  'payment_currency',
  'merchant_pays_fee',
  'rate',
  'amount_due',
  'invoice_fee',
  'paid_amount',
  'overpaid_amount',
  'fee_charged',
  'client_email',
  'proceeded_at',
  'expired_at',
  'settled_at',
  'accepted_at',
  'refund_id',
  'refund_status',
  'refund_amount',
  'refund_network_fee',
  'refund_tx_hash',
  'rate_sources',
  'settlement',
  'order_id',
  'metadata',
] as const;

const readPage = (db: Db, companyId: string, range: ExportRange) => (after: { createdAt: Date; id: string } | null, limit: number) =>
  db.invoice.findMany({
    where: {
      companyId,
      // From the previous page's last instant on: an index condition, so a page never scans the rows before it.
      createdAt: { gte: after?.createdAt ?? range.from, lt: range.to },
      ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: limit,
    include: { refund: true },
  });

type InvoiceRow = Awaited<ReturnType<ReturnType<typeof readPage>>>[number];

const time = (d: Date | null) => d?.toISOString() ?? '';
const amount = (v: { toString(): string } | null) => (v === null ? '' : formatPlain(v));

export const invoiceCells = (i: InvoiceRow): string[] => [
  i.id,
  i.createdAt.toISOString(),
  i.status,
  i.invoiceCurrency,
  isInvoiceCurrency(i.invoiceCurrency) ? formatFixed(i.total, PRICE_PRECISION[i.invoiceCurrency]) : formatPlain(i.total),
  i.paymentCurrency ?? i.fixedPaymentCurrency ?? '',
  String(i.isMerchantPaysFee),
  amount(i.rate),
  amount(i.paymentAmount),
  amount(i.invoiceFee),
  formatPlain(i.paidAmount),
  formatPlain(i.overpaidAmount),
  amount(i.feeCharged),
  // The one text a client writes (at proceed): a formula there must stay text in a spreadsheet.
  spreadsheetText(i.clientEmail ?? ''),
  time(i.proceededAt),
  time(i.expiredAt),
  time(i.settledAt),
  time(i.acceptedAt),
  i.refund?.id ?? '',
  i.refund?.status ?? '',
  amount(i.refund?.amount ?? null),
  amount(i.refund?.networkFee ?? null),
  i.refund?.txHash ?? '',
  rateDetailsCell(i.rateDetails),
  i.settlement ?? '',
  // The merchant's own texts: a formula there must stay text in a spreadsheet too.
  spreadsheetText(i.orderId ?? ''),
  i.metadata === null ? '' : spreadsheetText(JSON.stringify(i.metadata)),
];

/** The invoices created in the range, in (createdAt, id) order, a page at a time, as CSV cells. */
export async function* invoiceCsvRows(db: Db, companyId: string, range: ExportRange, batchSize: number): AsyncGenerator<string[][]> {
  for await (const page of keysetPages<InvoiceRow>(readPage(db, companyId, range), batchSize)) yield page.map(invoiceCells);
}
