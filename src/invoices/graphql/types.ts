// The Invoice type and what it is made of.
import { builder } from '../../graphql/builder.ts';
import { InvoiceCurrencyEnum, PaymentCurrencyEnum, specEnum } from '../../graphql/enums.ts';
import {
  effectivePaymentCurrency,
  isFilled,
  presentAddress,
  presentItems,
  presentPaymentDetails,
  presentRefund,
  presentTransactions,
} from '../presenter.ts';
import { INVOICE_STATUSES, type InvoiceStatus } from '../status.ts';

export const InvoiceStatusEnum = specEnum('InvoiceStatus', INVOICE_STATUSES, 'Invoice status; values are the spec statuses in upper case.');

const InvoiceItemType = builder.objectRef<{ name: string; price: string }>('InvoiceItem').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
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
  fields: (t) => ({
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, resolve: (c) => c.invoiceCurrency as never }),
    items: t.field({ type: [InvoiceItemType], resolve: (c) => c.items }),
    paymentCurrency: t.field({
      type: PaymentCurrencyEnum,
      nullable: true,
      description: 'The client’s choice once filled, else the merchant’s fixed currency, else null.',
      resolve: (c) => c.paymentCurrency as never,
    }),
    isMerchantPaysFee: t.exposeBoolean('isMerchantPaysFee'),
    redirectURL: t.exposeString('redirectURL', { nullable: true, description: 'As sent at creation.' }),
  }),
});

const PaymentAddressType = builder
  .objectRef<NonNullable<ReturnType<typeof presentAddress>>>('PaymentAddress')
  .implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      address: t.exposeString('address'),
      tag: t.exposeString('tag', { nullable: true, description: 'Deposit tag; set for TON, null otherwise.' }),
      asset: t.field({ type: PaymentCurrencyEnum, resolve: (a) => a.asset as never }),
    }),
  });

const PaymentDetailsType = builder
  .objectRef<NonNullable<ReturnType<typeof presentPaymentDetails>>>('PaymentDetails')
  .implement({
    fields: (t) => ({
      rate: t.field({ type: 'Decimal', description: 'Units of paymentCurrency per unit of invoiceCurrency.', resolve: (d) => d.rate }),
      invoiceFee: t.field({ type: 'Decimal', description: 'Fees in paymentCurrency.', resolve: (d) => d.invoiceFee }),
      amount: t.field({ type: 'Decimal', description: 'Amount the client must send, in paymentCurrency.', resolve: (d) => d.amount }),
      paidAmount: t.field({ type: 'Decimal', description: 'Confirmed payments counted for this invoice.', resolve: (d) => d.paidAmount }),
      overpaidAmount: t.field({ type: 'Decimal', description: 'What the confirmed payments exceed amount by.', resolve: (d) => d.overpaidAmount }),
    }),
  });

const TransferStateEnum = builder.enumType('TransferState', {
  values: { SEEN: { value: 'seen' }, CONFIRMED: { value: 'confirmed' }, DROPPED: { value: 'dropped' } } as const,
});
const TransferKindEnum = builder.enumType('TransferKind', {
  description: 'PAYMENT counts toward the invoice; LATE arrived after it closed; WRONG_ASSET is in an asset it does not expect.',
  values: { PAYMENT: { value: 'payment' }, LATE: { value: 'late' }, WRONG_ASSET: { value: 'wrong_asset' } } as const,
});

const InvoiceTransactionType = builder.objectRef<ReturnType<typeof presentTransactions>[number]>('InvoiceTransaction').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    amount: t.field({ type: 'Decimal', resolve: (x) => x.amount }),
    from: t.exposeString('from', { description: 'Payment currency the transfer was made in.' }),
    txHash: t.exposeString('txHash'),
    companyId: t.exposeString('companyId'),
    invoiceId: t.exposeString('invoiceId'),
    addressId: t.exposeString('addressId'),
    createdAt: t.field({ type: 'DateTime', resolve: (x) => new Date(x.createdAt) }),
    status: t.field({ type: TransferStateEnum, resolve: (x) => x.status }),
    confirmations: t.exposeInt('confirmations'),
    kind: t.field({ type: TransferKindEnum, resolve: (x) => x.kind }),
  }),
});

const RefundType = builder.objectRef<NonNullable<ReturnType<typeof presentRefund>>>('Refund').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    address: t.exposeString('address'),
    tag: t.exposeString('tag', { nullable: true }),
    amount: t.field({ type: 'Decimal', description: 'Sent to the client.', resolve: (r) => r.amount }),
    networkFee: t.field({ type: 'Decimal', resolve: (r) => r.networkFee }),
    status: t.exposeString('status', { description: 'queued until the chain accepted it, then sent.' }),
    txHash: t.exposeString('txHash', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (r) => new Date(r.createdAt) }),
  }),
});

export const InvoiceType = builder.prismaObject('Invoice', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The public invoice id; the client opens {payUrl}/<id>.' }),
    status: t.field({ type: InvoiceStatusEnum, resolve: (i) => i.status as InvoiceStatus }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    company: t.relation('company'),
    invoiceContent: t.field({
      type: InvoiceContentType,
      select: { invoiceCurrency: true, paymentCurrency: true, fixedPaymentCurrency: true, isMerchantPaysFee: true, requestedRedirectUrl: true, items: { orderBy: { position: 'asc' } } },
      resolve: (i) => ({
        invoiceCurrency: i.invoiceCurrency,
        items: presentItems(i),
        paymentCurrency: effectivePaymentCurrency(i),
        isMerchantPaysFee: i.isMerchantPaysFee,
        redirectURL: i.requestedRedirectUrl,
      }),
    }),
    redirectURL: t.string({
      nullable: true,
      description: 'Redirect target after done; null before the invoice is filled or when there is none.',
      select: { redirectUrl: true, proceededAt: true },
      resolve: (i) => (isFilled(i) ? i.redirectUrl : null),
    }),
    clientEmail: t.exposeString('clientEmail', { nullable: true }),
    address: t.field({ type: PaymentAddressType, nullable: true, select: { address: true }, resolve: (i) => presentAddress(i.address) }),
    paymentDetails: t.field({
      type: PaymentDetailsType,
      nullable: true,
      select: { rate: true, invoiceFee: true, paymentAmount: true, paidAmount: true, overpaidAmount: true },
      resolve: (i) => presentPaymentDetails(i),
    }),
    expiredAt: t.expose('expiredAt', { type: 'DateTime', nullable: true }),
    transactions: t.field({
      type: [InvoiceTransactionType],
      description: 'Transfers to the invoice address (REST invoiceTransactions), oldest first.',
      select: { transfers: { orderBy: [{ seenAt: 'asc' }, { id: 'asc' }] } },
      resolve: (i) => presentTransactions(i.transfers),
    }),
    refund: t.field({ type: RefundType, nullable: true, select: { refund: true }, resolve: (i) => presentRefund(i.refund) }),
    payUrl: t.string({ description: 'Checkout page for the client.', resolve: (i, _args, ctx) => `${ctx.invoices.payUrl}/${i.id}` }),
  }),
});

