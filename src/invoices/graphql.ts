import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder } from '../graphql/builder.ts';
import { InvoiceCurrencyEnum, InvoiceStatusEnum, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { INVOICE_ID_PATTERN } from './ids.ts';
import {
  effectivePaymentCurrency,
  isFilled,
  presentAddress,
  presentItems,
  presentPaymentDetails,
  presentRefund,
  presentTransactions,
} from './presenter.ts';
import { acceptInvoice, refundInvoice } from '../payments/decisions.ts';
import { createInvoice, invoiceInclude, proceedInvoice } from './service.ts';
import type { InvoiceStatus } from './status.ts';

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
    payUrl: t.string({ description: 'Checkout page for the client.', resolve: (i, _args, ctx) => `${ctx.payUrl}/${i.id}` }),
  }),
});

builder.queryField('invoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    nullable: true,
    description: 'An invoice by its public id (no token needed, as in REST).',
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, { id }, ctx) =>
      INVOICE_ID_PATTERN.test(String(id)) ? ctx.prisma.invoice.findUnique({ ...query, where: { id: String(id) } }) : null,
  }),
);

const InvoiceFilter = builder.inputType('InvoiceFilter', {
  fields: (t) => ({
    status: t.field({ type: [InvoiceStatusEnum], required: false, description: 'Any of these statuses.' }),
    createdFrom: t.field({ type: 'DateTime', required: false, description: 'Created at or after this instant.' }),
    createdBefore: t.field({ type: 'DateTime', required: false, description: 'Created strictly before this instant.' }),
  }),
});

export const MAX_PAGE_SIZE = 100;

builder.queryField('invoices', (t) =>
  t.prismaConnection(
    {
      type: 'Invoice',
      cursor: 'id',
      authScopes: { merchant: true },
      description: 'The calling merchant’s invoices, newest first.',
      defaultSize: 20,
      maxSize: MAX_PAGE_SIZE,
      args: { filter: t.arg({ type: InvoiceFilter, required: false }) },
      resolve: (query, _root, { filter, first, last, after }, ctx) => {
        if ((first ?? 0) > MAX_PAGE_SIZE || (last ?? 0) > MAX_PAGE_SIZE) {
          throw new ValidationError([{ path: first ? 'first' : 'last', message: `must be at most ${MAX_PAGE_SIZE}` }]);
        }
        // A cursor is opaque to clients but not to forgers: what it decodes to must be an invoice id.
        const cursorId = (query as { cursor?: { id?: unknown } }).cursor?.id;
        if (cursorId !== undefined && !(typeof cursorId === 'string' && INVOICE_ID_PATTERN.test(cursorId))) {
          throw new ValidationError([{ path: after ? 'after' : 'before', message: 'must be a cursor from a previous page' }]);
        }
        return ctx.prisma.invoice.findMany({
          ...query,
          where: invoiceWhere(ctx.company!.id, filter ?? undefined),
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        });
      },
      totalCount: (_root, { filter }, ctx) => ctx.prisma.invoice.count({ where: invoiceWhere(ctx.company!.id, filter ?? undefined) }),
    },
    {},
  ),
);

function invoiceWhere(companyId: string, filter?: { status?: readonly string[] | null; createdFrom?: Date | null; createdBefore?: Date | null }) {
  return {
    companyId,
    ...(filter?.status?.length ? { status: { in: filter.status as InvoiceStatus[] } } : {}),
    ...(filter?.createdFrom || filter?.createdBefore
      ? { createdAt: { ...(filter.createdFrom ? { gte: filter.createdFrom } : {}), ...(filter.createdBefore ? { lt: filter.createdBefore } : {}) } }
      : {}),
  };
}

const InvoiceItemInput = builder.inputType('InvoiceItemInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    price: t.field({ type: 'Decimal', required: true, description: 'Rounded half away from zero to the currency precision.' }),
  }),
});

const CreateInvoiceInput = builder.inputType('CreateInvoiceInput', {
  fields: (t) => ({
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, required: true }),
    items: t.field({ type: [InvoiceItemInput], required: true }),
    isMerchantPaysFee: t.boolean({ required: false }),
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Fixes the payment currency; the client’s choice is then ignored.' }),
    redirectURL: t.string({ required: false }),
    idempotencyKey: t.string({ required: false, description: 'Same as the REST Idempotency-Key header.' }),
  }),
});

builder.mutationField('createInvoice', (t) =>
  t.field({
    type: InvoiceType,
    authScopes: { merchant: true },
    errors: { types: [ValidationError, ConflictError] },
    args: { input: t.arg({ type: CreateInvoiceInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { idempotencyKey, ...body } = input;
      const { invoice } = await createInvoice(ctx.invoices, ctx.company!, body, idempotencyKey);
      return invoice;
    },
  }),
);

const ProceedInvoiceInput = builder.inputType('ProceedInvoiceInput', {
  fields: (t) => ({
    invoiceId: t.id({ required: true }),
    clientEmail: t.string({ required: true }),
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Required unless the merchant fixed one.' }),
  }),
});

builder.mutationField('proceedInvoice', (t) =>
  t.field({
    type: InvoiceType,
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { input: t.arg({ type: ProceedInvoiceInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { invoiceId, ...body } = input;
      return proceedInvoice(ctx.invoices, String(invoiceId), body, ctx.company);
    },
  }),
);

const RefundInvoiceInput = builder.inputType('RefundInvoiceInput', {
  fields: (t) => ({
    invoiceId: t.id({ required: true }),
    address: t.string({ required: true, description: 'The client address that receives the refund.' }),
    tag: t.string({ required: false, description: 'Required for TON.' }),
  }),
});

builder.mutationField('refundInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    authScopes: { merchant: true },
    description: 'Declines a wrong (short) invoice, or a closed one paid late: the funds go back to the client.',
    errors: { types: [ValidationError, NotFoundError, ConflictError] },
    args: { input: t.arg({ type: RefundInvoiceInput, required: true }) },
    resolve: async (query, _root, { input }, ctx) => {
      const { invoiceId, ...body } = input;
      await refundInvoice(ctx.payments, ctx.company!, String(invoiceId), body, ctx.logger);
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: String(invoiceId) } });
    },
  }),
);

builder.mutationField('acceptInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    authScopes: { merchant: true },
    description: 'Accepts a wrong (short) invoice, or a closed one paid late, as paid: it becomes done.',
    errors: { types: [NotFoundError, ConflictError] },
    args: { invoiceId: t.arg.id({ required: true }) },
    resolve: async (query, _root, { invoiceId }, ctx) => {
      await acceptInvoice(ctx.payments, ctx.company!, String(invoiceId));
      return ctx.prisma.invoice.findUniqueOrThrow({ ...query, where: { id: String(invoiceId) } });
    },
  }),
);

export { invoiceInclude };
