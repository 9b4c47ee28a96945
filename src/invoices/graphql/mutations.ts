// Invoice mutations: the same edge schemas and services as the REST paths.
import { parseInput } from '../../core/validation.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/app-error.ts';
import { builder } from '../../graphql/builder.ts';
import { InvoiceCurrencyEnum, PaymentCurrencyEnum } from '../../graphql/enums.ts';
import { acceptInvoice, proceedInvoice, refundInvoice } from '../lifecycle.ts';
import { createInvoiceSchema, proceedInvoiceSchema, refundInvoiceSchema } from '../rules.ts';
import { createInvoice } from '../service.ts';
import { InvoiceType } from './types.ts';

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
      const { idempotencyKey, ...fields } = input;
      const { invoice } = await createInvoice(ctx.invoices, ctx.company!, parseInput(createInvoiceSchema, fields), idempotencyKey);
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
      const { invoiceId, ...fields } = input;
      return proceedInvoice(ctx.invoices, String(invoiceId), parseInput(proceedInvoiceSchema, fields), ctx.company);
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
      const { invoiceId, ...fields } = input;
      await refundInvoice(ctx.invoices, ctx.company!, String(invoiceId), parseInput(refundInvoiceSchema, fields));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: String(invoiceId) } });
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
      await acceptInvoice(ctx.invoices, ctx.company!, String(invoiceId));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: String(invoiceId) } });
    },
  }),
);

