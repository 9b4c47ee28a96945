// The Invoice type and what it is made of. Objects with an identity are Nodes (global ids for client caches);
// everything a client sees publicly hangs off the invoice, so these nodes are as public as their invoice.
import { AutoswapType } from '../../autoswap/graphql-types.ts';
import { paymentUri } from '../../chains/payment-uri.ts';
import type { PaymentCurrency } from '../../domain/assets.ts';
import { formatPlain } from '../../domain/money.ts';
import { builder } from '../../graphql/builder.ts';
import { InvoiceCurrencyEnum, ModeEnum, MoneyType, PaymentCurrencyEnum, specEnum, TransferStateEnum, type MoneyShape } from '../../graphql/enums.ts';
import { offeredIn } from '../../chains/offered.ts';
import { nodeIdFormats, registerNodeType } from '../../graphql/node-ids.ts';
import { INVOICE_ID_PATTERN } from '../ids.ts';
import { effectivePaymentCurrency, invoicePayUrl, isFilled, outstandingPayment, presentItems, presentPaymentDetails, presentTotal } from '../presenter.ts';
import { publicInvoiceWhere } from '../queries.ts';
import { payableCurrencies } from '../rules.ts';
import { INVOICE_STATUS_MESSAGES, INVOICE_STATUSES, SETTLEMENTS, type InvoiceStatus, type Settlement } from '../status.ts';

registerNodeType('Invoice', INVOICE_ID_PATTERN, { publicId: true });
registerNodeType('PaymentAddress', nodeIdFormats.uuid);
registerNodeType('InvoiceTransaction', nodeIdFormats.uuid);
registerNodeType('Refund', nodeIdFormats.uuid);

export const InvoiceStatusEnum = specEnum('InvoiceStatus', INVOICE_STATUSES, 'Invoice status; values are the spec statuses in upper case.', (s) => `${INVOICE_STATUS_MESSAGES[s]}.`);

export const SettlementEnum = specEnum('InvoiceSettlement', SETTLEMENTS, 'The merchant’s decision on a short or late payment (docs/payments.md).', (s) =>
  s === 'accepted_short' ? 'A wrong (short) invoice kept as paid: it became DONE.' : s === 'accepted_late' ? 'A late payment to a closed invoice kept: it became DONE.' : 'The payment went back to the client: REFUNDED.',
);

const money = (amount: string, currency: string): MoneyShape => ({ amount, currency });

export const InvoiceItemType = builder.objectRef<{ name: string; price: string }>('InvoiceItem').implement({
  description: 'One line of an invoice.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'What is sold, as the merchant wrote it.' }),
    price: t.field({ type: 'Decimal', description: 'Rounded to the precision of the invoice currency.', resolve: (i) => i.price }),
  }),
});

interface InvoiceContentShape {
  invoiceCurrency: string;
  items: { name: string; price: string }[];
  paymentCurrency: string | null;
  isMerchantPaysFee: boolean;
  redirectURL: string | null;
}

const InvoiceContentType = builder.objectRef<InvoiceContentShape>('InvoiceContent').implement({
  description: 'What the merchant put on the invoice (REST invoiceContent).',
  fields: (t) => ({
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, description: 'Currency of the prices.', resolve: (c) => c.invoiceCurrency as never }),
    items: t.field({ type: [InvoiceItemType], description: 'The lines, in the order given.', resolve: (c) => c.items }),
    paymentCurrency: t.field({
      type: PaymentCurrencyEnum,
      nullable: true,
      description: 'The client’s choice once filled, else the merchant’s fixed currency, else null.',
      resolve: (c) => c.paymentCurrency as never,
    }),
    isMerchantPaysFee: t.exposeBoolean('isMerchantPaysFee', { description: 'The merchant pays the fees; else the client pays them on top.' }),
    redirectURL: t.exposeString('redirectURL', { nullable: true, description: 'As sent at creation.' }),
  }),
});

const PaymentAddressType = builder.prismaNode('PaymentAddress', {
  description: 'The address the client pays an invoice to.',
  id: { field: 'id' },
  nullable: true,
  fields: (t) => ({
    address: t.exposeString('address', { description: 'The address on its network.' }),
    tag: t.exposeString('tag', { nullable: true, description: 'Deposit tag (memo); set for TON, where it is required, null otherwise.' }),
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What to send to it.', resolve: (a) => a.asset as never }),
  }),
});

type PaymentDetailsShape = NonNullable<ReturnType<typeof presentPaymentDetails>> & { currency: string };

const PaymentDetailsType = builder.objectRef<PaymentDetailsShape>('PaymentDetails').implement({
  description: 'The quote of a filled invoice and what was paid, in its payment currency.',
  fields: (t) => ({
    rate: t.field({ type: 'Decimal', description: 'Units of paymentCurrency per unit of invoiceCurrency.', resolve: (d) => d.rate }),
    invoiceFee: t.field({ type: 'Decimal', description: 'Fees in paymentCurrency.', resolve: (d) => d.invoiceFee }),
    amount: t.field({ type: 'Decimal', description: 'Amount the client must send, in paymentCurrency.', resolve: (d) => d.amount }),
    paidAmount: t.field({ type: 'Decimal', description: 'Confirmed payments counted for this invoice.', resolve: (d) => d.paidAmount }),
    overpaidAmount: t.field({ type: 'Decimal', description: 'What the confirmed payments exceed amount by.', resolve: (d) => d.overpaidAmount }),
    invoiceFeeMoney: t.field({ type: MoneyType, description: '`invoiceFee` with its currency.', resolve: (d) => money(d.invoiceFee, d.currency) }),
    amountMoney: t.field({ type: MoneyType, description: '`amount` with its currency.', resolve: (d) => money(d.amount, d.currency) }),
    paidAmountMoney: t.field({ type: MoneyType, description: '`paidAmount` with its currency.', resolve: (d) => money(d.paidAmount, d.currency) }),
    overpaidAmountMoney: t.field({ type: MoneyType, description: '`overpaidAmount` with its currency.', resolve: (d) => money(d.overpaidAmount, d.currency) }),
  }),
});

const TransferKindEnum = builder.enumType('TransferKind', {
  description: 'How a transfer to an invoice address counts.',
  values: {
    PAYMENT: { value: 'payment', description: 'Counts toward the invoice. REST: "payment".' },
    LATE: { value: 'late', description: 'Arrived after the invoice closed; the merchant accepts or refunds it. REST: "late".' },
    WRONG_ASSET: { value: 'wrong_asset', description: 'In an asset or network the invoice does not expect; held apart. REST: "wrong_asset".' },
  } as const,
});

export const InvoiceTransactionType = builder.prismaNode('ChainTransfer', {
  variant: 'InvoiceTransaction',
  description: 'A transfer to an invoice address (REST invoiceTransactions).',
  id: { field: 'id' },
  // Public like its invoice; a deposit to a static address (no invoice) is not one.
  findUnique: (id) => ({ id, invoiceId: { not: null } }),
  nullable: true,
  fields: (t) => ({
    amount: t.field({ type: 'Decimal', description: 'Sent, in `from`.', resolve: (x) => formatPlain(x.amount) }),
    money: t.field({ type: MoneyType, description: '`amount` with its currency.', resolve: (x) => money(formatPlain(x.amount), x.asset) }),
    from: t.field({ type: PaymentCurrencyEnum, description: 'Payment currency the transfer was made in.', resolve: (x) => x.asset as never }),
    txHash: t.exposeString('txHash', { description: 'The bare transaction hash on its network.' }),
    invoice: t.relation('invoice', { onNull: 'error', description: 'The invoice whose address received it.' }),
    address: t.field({
      type: PaymentAddressType,
      nullable: true,
      description: 'The address that received it.',
      select: { invoice: { select: { address: true } } },
      resolve: (x) => x.invoice?.address ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was first seen.', resolve: (x) => x.seenAt }),
    status: t.field({ type: TransferStateEnum, description: 'Where it stands on its chain.', resolve: (x) => x.state }),
    confirmations: t.exposeInt('confirmations', { description: 'Confirmations counted so far.' }),
    // Transfers of invoices only: a deposit (to a static address) is never an invoice transaction.
    kind: t.field({ type: TransferKindEnum, description: 'How it counts for the invoice.', resolve: (x) => x.role as Exclude<typeof x.role, 'deposit'> }),
  }),
});

const RefundStatusEnum = builder.enumType('RefundStatus', {
  description: 'Where a refund stands.',
  values: {
    QUEUED: { value: 'queued', description: 'Recorded; the chain has not accepted the transfer yet, or an earlier send failed on chain and it goes out again. REST: "queued".' },
    SENT: { value: 'sent', description: 'The chain accepted the transfer; `txHash` is set. REST: "sent".' },
    CONFIRMED: { value: 'confirmed', description: 'Final on chain: the client has the money. REST: "confirmed".' },
  } as const,
});

builder.prismaNode('Refund', {
  description: 'The return of a short or late payment to the client.',
  id: { field: 'id' },
  nullable: true,
  fields: (t) => ({
    address: t.exposeString('toAddress', { description: 'The client address it goes to.' }),
    tag: t.exposeString('tag', { nullable: true, description: 'Deposit tag of that address (TON).' }),
    amount: t.field({ type: 'Decimal', description: 'Sent to the client, in the payment currency.', resolve: (r) => formatPlain(r.amount) }),
    networkFee: t.field({ type: 'Decimal', description: 'Network fee paid on top, out of the refunded payment.', resolve: (r) => formatPlain(r.networkFee) }),
    amountMoney: t.field({ type: MoneyType, description: '`amount` with its currency.', resolve: (r) => money(formatPlain(r.amount), r.asset) }),
    networkFeeMoney: t.field({ type: MoneyType, description: '`networkFee` with its currency.', resolve: (r) => money(formatPlain(r.networkFee), r.asset) }),
    status: t.field({ type: RefundStatusEnum, description: 'Whether the chain accepted it yet, and whether it is final.', resolve: (r) => r.status as 'queued' | 'sent' | 'confirmed' }),
    txHash: t.exposeString('txHash', { nullable: true, description: 'The bare transaction hash, once sent.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the merchant declined the payment.' }),
  }),
});

export const InvoiceType = builder.prismaNode('Invoice', {
  description: 'A payment request: the merchant creates it, the client fills and pays it at `payUrl`.',
  id: { field: 'id', description: 'The public invoice id, also its global id; the client opens {payUrl}/<id>.' },
  // node(id:) reads invoices as the public GET does: the unguessable id is the credential.
  findUnique: (id) => publicInvoiceWhere(id) ?? { id: '' },
  nullable: true,
  fields: (t) => ({
    status: t.field({ type: InvoiceStatusEnum, description: 'Where the invoice stands.', resolve: (i) => i.status as InvoiceStatus }),
    mode: t.field({
      type: ModeEnum,
      description: 'TEST: paid on the simulated chain, no real money; LIVE: real money (docs/modes.md).',
      select: { company: { select: { mode: true } } },
      resolve: (i) => i.company.mode,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the merchant created it.' }),
    paymentLinkId: t.exposeID('paymentLinkId', { nullable: true, description: 'The id of the payment link whose opening made it (docs/payment-links.md); null when it was made through the API.' }),
    company: t.relation('company', { description: 'The merchant, as the paying client sees it.' }),
    content: t.field({
      type: InvoiceContentType,
      description: 'What the merchant put on the invoice (REST invoiceContent).',
      select: { invoiceCurrency: true, paymentCurrency: true, fixedPaymentCurrency: true, isMerchantPaysFee: true, requestedRedirectUrl: true, items: { orderBy: { position: 'asc' } } },
      resolve: (i) => ({
        invoiceCurrency: i.invoiceCurrency,
        items: presentItems(i),
        paymentCurrency: effectivePaymentCurrency(i),
        isMerchantPaysFee: i.isMerchantPaysFee,
        redirectURL: i.requestedRedirectUrl,
      }),
    }),
    total: t.field({
      type: MoneyType,
      description: 'The sum of the item prices, in the invoice currency.',
      select: { invoiceCurrency: true, items: { orderBy: { position: 'asc' } } },
      resolve: (i) => money(presentTotal(i), i.invoiceCurrency),
    }),
    redirectURL: t.string({
      nullable: true,
      description: 'Redirect target after done; null before the invoice is filled or when there is none.',
      select: { redirectUrl: true, proceededAt: true },
      resolve: (i) => (isFilled(i) ? i.redirectUrl : null),
    }),
    clientEmail: t.exposeString('clientEmail', { nullable: true, description: 'The client’s e-mail, once filled.' }),
    address: t.relation('address', { nullable: true, description: 'Where to pay, once filled.' }),
    paymentDetails: t.field({
      type: PaymentDetailsType,
      nullable: true,
      description: 'The quote and what was paid, once filled.',
      select: { rate: true, invoiceFee: true, paymentAmount: true, paidAmount: true, overpaidAmount: true, paymentCurrency: true },
      resolve: (i) => {
        const details = presentPaymentDetails(i);
        return details && i.paymentCurrency ? { ...details, currency: i.paymentCurrency } : null;
      },
    }),
    expiredAt: t.expose('expiredAt', { type: 'DateTime', nullable: true, description: 'When the quote expires, once filled.' }),
    transactions: t.relation('transfers', {
      type: InvoiceTransactionType,
      description: 'Transfers to the invoice address (REST invoiceTransactions), oldest first.',
      query: { orderBy: [{ seenAt: 'asc' }, { id: 'asc' }] },
    }),
    autoswaps: t.relation('autoswaps', {
      type: AutoswapType,
      description: 'Autoswaps of its payments (REST: invoiceTransactions of kind autoswap; docs/autoswap.md), oldest first.',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
    refund: t.relation('refund', { nullable: true, description: 'The refund, once the merchant declined the payment.' }),
    payUrl: t.string({ description: 'Checkout page for the client (REST payUrl).', resolve: (i, _args, ctx) => invoicePayUrl(ctx.invoices.payUrl, i.id) }),
    orderId: t.exposeString('orderId', { nullable: true, description: 'The merchant’s order reference, as sent at creation.' }),
    metadata: t.field({
      type: 'Metadata',
      nullable: true,
      description: 'The metadata sent at creation; null when none.',
      select: { metadata: true },
      resolve: (i) => i.metadata as Record<string, string> | null,
    }),
    acceptedAt: t.expose('acceptedAt', { type: 'DateTime', nullable: true, description: 'When the merchant accepted a short or late payment as paid.' }),
    settlement: t.field({
      type: SettlementEnum,
      nullable: true,
      description: 'The merchant’s decision on a short or late payment; null until decided.',
      select: { settlement: true },
      resolve: (i) => i.settlement as Settlement | null,
    }),
    paymentCurrencies: t.field({
      type: [PaymentCurrencyEnum],
      description: 'What the client may pay in: the merchant’s fixed currency, else every currency the merchant accepts.',
      select: { fixedPaymentCurrency: true, company: { select: { acceptedAssets: true, mode: true } } },
      resolve: (i, _args, ctx) => payableCurrencies(i.company.acceptedAssets, i.fixedPaymentCurrency as PaymentCurrency | null, offeredIn(ctx.invoices.chains, i.company.mode)) as never,
    }),
    paymentUri: t.string({
      nullable: true,
      description:
        'While the invoice waits for a payment (PENDING, or WRONG after a short one): what is still due as a standard wallet URI, for a QR code or an "open in wallet" link (BIP-21 for BTC/LTC/BCH, EIP-681 for ETH, BNB and ERC-20, a TON transfer link with the tag, Solana Pay). Null otherwise, and for Tron, which has no standard: use the address.',
      select: { status: true, paymentCurrency: true, paymentAmount: true, paidAmount: true, address: { select: { address: true, tag: true } } },
      resolve: (i) => {
        const outstanding = outstandingPayment(i);
        return outstanding && paymentUri(outstanding);
      },
    }),
  }),
});

