// Invoice mutations: the same edge schemas and services as the REST paths.
import { requireScope } from '../../core/scopes.ts';
import { parseInput } from '../../core/validation.ts';
import { ConflictError, NotFoundError, RateUnavailableError, ValidationError } from '../../errors/app-error.ts';
import { builder, mutationOutcome } from '../../graphql/builder.ts';
import { preferredLanguage } from '../../domain/languages.ts';
import { InvoiceCurrencyEnum, LanguageEnum, PaymentCurrencyEnum } from '../../graphql/enums.ts';
import { acceptInvoice, proceedInvoice, refundInvoice } from '../lifecycle.ts';
import { createInvoiceSchema, proceedInvoiceSchema, refundInvoiceSchema } from '../rules.ts';
import { createInvoice } from '../service.ts';
import { InvoiceType } from './types.ts';

export const InvoiceItemInput = builder.inputType('InvoiceItemInput', {
  description: 'One line of a new invoice.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'What is sold (1 to 255 characters).' }),
    price: t.field({ type: 'Decimal', required: true, description: 'Greater than zero; rounded half away from zero to the currency precision.' }),
  }),
});

const CreateInvoiceInput = builder.inputType('CreateInvoiceInput', {
  description: 'A new invoice, as the REST create body.',
  fields: (t) => ({
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, required: true, description: 'Currency of the prices.' }),
    items: t.field({ type: [InvoiceItemInput], required: true, description: 'The lines, at least one.' }),
    isMerchantPaysFee: t.boolean({ required: false, description: 'The merchant pays the fees; absent: the store’s default (storeSettings.isMerchantPaysFee, false unless changed: the client pays them on top).' }),
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Fixes the payment currency; the client’s choice is then ignored.' }),
    redirectURL: t.string({ required: false, description: 'http(s) URL the checkout page sends the client to once paid; absent: the store’s default (storeSettings.redirectURL).' }),
    orderId: t.string({
      required: false,
      description: 'The merchant’s order reference (1-128 characters): an open invoice of the merchant with this orderId is answered instead of a new one (the same input), or refused with ORDER_ID_IN_USE (another input).',
    }),
    metadata: t.field({ type: 'Metadata', required: false, description: 'Kept on the invoice and sent back in reads and webhooks.' }),
    idempotencyKey: t.string({ required: false, description: 'Same as the REST Idempotency-Key header: a retry with the same key and input answers the first invoice.' }),
  }),
});

const invoiceOutcome = (description: string, types: (typeof ValidationError | typeof NotFoundError | typeof ConflictError)[]) =>
  mutationOutcome('invoice', description, types);

builder.mutationField('createInvoice', (t) =>
  t.field({
    type: InvoiceType,
    authScopes: { scope: 'invoices:write' },
    description: 'Creates an invoice for the calling merchant (REST POST /api/invoices/v1/regular).',
    errors: invoiceOutcome('The new invoice, status CREATED.', [ValidationError, ConflictError]),
    args: { input: t.arg({ type: CreateInvoiceInput, required: true, description: 'The invoice to create.' }) },
    resolve: async (_root, { input }, ctx) => {
      const { idempotencyKey, ...fields } = input;
      const { invoice } = await createInvoice(ctx.invoices, ctx.company!, parseInput(createInvoiceSchema, fields), idempotencyKey);
      return invoice;
    },
  }),
);

const ProceedInvoiceInput = builder.inputType('ProceedInvoiceInput', {
  description: 'The client’s choices on the checkout page.',
  fields: (t) => ({
    invoiceId: t.id({ required: true, description: 'The public invoice id.' }),
    clientEmail: t.string({ required: true, description: 'Where the client gets receipts.' }),
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Required unless the merchant fixed one.' }),
    lang: t.field({ type: LanguageEnum, required: false, description: 'The language of the client’s e-mails (the checkout page’s); absent: the request’s Accept-Language, else English.' }),
  }),
});

builder.mutationField('proceedInvoice', (t) =>
  t.field({
    type: InvoiceType,
    description:
      'Fills an invoice with the client’s e-mail and payment currency and gives it an address (public, no token; REST POST .../{id}/proceed). Repeating it with the same data answers the same invoice.',
    errors: invoiceOutcome('The filled invoice, status PENDING, with its address and quote.', [ValidationError, NotFoundError, ConflictError, RateUnavailableError]),
    args: { input: t.arg({ type: ProceedInvoiceInput, required: true, description: 'The invoice and the client’s choices.' }) },
    resolve: async (_root, { input }, ctx) => {
      const { invoiceId, ...fields } = input;
      // Public; a token that is sent proceeds on the merchant's behalf and must hold invoices:write (as for REST).
      if (ctx.access) requireScope(ctx.access, 'invoices:write');
      const fill = parseInput(proceedInvoiceSchema, fields);
      return proceedInvoice(ctx.invoices, String(invoiceId), { ...fill, lang: fill.lang ?? preferredLanguage(ctx.acceptLanguage) }, ctx.company);
    },
  }),
);

const RefundInvoiceInput = builder.inputType('RefundInvoiceInput', {
  description: 'Where a declined payment goes back to.',
  fields: (t) => ({
    invoiceId: t.id({ required: true, description: 'The public id of a wrong invoice, or of a closed one paid late.' }),
    address: t.string({ required: true, description: 'The client address that receives the refund.' }),
    tag: t.string({ required: false, description: 'Required for TON.' }),
  }),
});

builder.mutationField('refundInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    authScopes: { scope: 'payouts:write' },
    description: 'Declines a wrong (short) invoice, or a closed one paid late: the funds go back to the client.',
    errors: invoiceOutcome('The invoice, status REFUNDED, with its refund.', [ValidationError, NotFoundError, ConflictError]),
    args: { input: t.arg({ type: RefundInvoiceInput, required: true, description: 'The invoice and the client address.' }) },
    resolve: async (query, _root, { input }, ctx) => {
      const { invoiceId, ...fields } = input;
      await refundInvoice(ctx.invoices, ctx.company!, ctx.access!.actor, String(invoiceId), parseInput(refundInvoiceSchema, fields));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: String(invoiceId) } });
    },
  }),
);

const AcceptInvoiceInput = builder.inputType('AcceptInvoiceInput', {
  description: 'The invoice to accept as paid.',
  fields: (t) => ({
    invoiceId: t.id({ required: true, description: 'The public id of a wrong invoice, or of a closed one paid late.' }),
  }),
});

builder.mutationField('acceptInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    authScopes: { scope: 'invoices:write' },
    description: 'Accepts a wrong (short) invoice, or a closed one paid late, as paid: it becomes done.',
    errors: invoiceOutcome('The invoice, status DONE.', [NotFoundError, ConflictError]),
    args: { input: t.arg({ type: AcceptInvoiceInput, required: true, description: 'The invoice to accept.' }) },
    resolve: async (query, _root, { input }, ctx) => {
      await acceptInvoice(ctx.invoices, ctx.company!, ctx.access!.actor, String(input.invoiceId));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: String(input.invoiceId) } });
    },
  }),
);
