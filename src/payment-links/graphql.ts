// GraphQL for payment links: paymentLink, paymentLinks, createPaymentLink, deactivatePaymentLink and
// Invoice.paymentLink; the same schemas and service as REST (docs/payment-links.md).
import { parseInput } from '../core/validation.ts';
import { isPaymentCurrency } from '../domain/assets.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { InvoiceCurrencyEnum, ModeEnum, MoneyType, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { callerCompanyId, registerNodeType } from '../graphql/node-ids.ts';
import { presentItems, presentTotal } from '../invoices/presenter.ts';
import { InvoiceItemInput } from '../invoices/graphql/mutations.ts';
import { InvoiceItemType } from '../invoices/graphql/types.ts';
import {
  createPaymentLink,
  createPaymentLinkSchema,
  deactivatePaymentLink,
  linkUrl,
  PAYMENT_LINK_ID_PATTERN,
  paymentLinkOrder,
  paymentLinkWhere,
} from './service.ts';

registerNodeType('PaymentLink', PAYMENT_LINK_ID_PATTERN);

export const PaymentLinkType = builder.prismaNode('PaymentLink', {
  description: 'An invoice’s content behind a public URL: every opening of `url` makes a new invoice of it.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'invoices:read') }),
  nullable: true,
  fields: (t) => ({
    linkId: t.exposeID('id', { description: 'Its id in REST, in `paymentLink(id:)`, in its URL and in `Invoice.paymentLinkId`.' }),
    url: t.string({ description: 'What clients open: PUBLIC_BASE_URL/l/<id>.', resolve: (l, _args, ctx) => linkUrl(ctx.paymentLinks, l.id) }),
    name: t.exposeString('name', { description: 'The merchant’s name for it (not shown to clients).' }),
    mode: t.field({ type: ModeEnum, description: 'The mode its invoices belong to.', select: { company: { select: { mode: true } } }, resolve: (l) => l.company.mode }),
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, description: 'Currency of the prices.', resolve: (l) => l.invoiceCurrency as never }),
    items: t.field({
      type: [InvoiceItemType],
      description: 'The lines of its invoices, prices rounded as an invoice’s.',
      select: { invoiceCurrency: true, items: { orderBy: { position: 'asc' } } },
      resolve: (l) => presentItems(l),
    }),
    total: t.field({
      type: MoneyType,
      description: 'The sum of the item prices, in the invoice currency.',
      select: { invoiceCurrency: true, items: { orderBy: { position: 'asc' } } },
      resolve: (l) => ({ amount: presentTotal(l), currency: l.invoiceCurrency }),
    }),
    paymentCurrency: t.field({
      type: PaymentCurrencyEnum,
      nullable: true,
      description: 'The fixed payment currency of its invoices; null: the client chooses.',
      select: { fixedPaymentCurrency: true },
      resolve: (l) => (l.fixedPaymentCurrency && isPaymentCurrency(l.fixedPaymentCurrency) ? l.fixedPaymentCurrency : null) as never,
    }),
    redirectURL: t.exposeString('redirectUrl', { nullable: true, description: 'The redirectURL of its invoices; null: the store’s default at the time of opening.' }),
    isMerchantPaysFee: t.exposeBoolean('isMerchantPaysFee', { nullable: true, description: 'isMerchantPaysFee of its invoices; null: the store’s default at the time of opening.' }),
    active: t.exposeBoolean('active', { description: 'Opening an inactive link makes no invoice.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was made.' }),
    deactivatedAt: t.expose('deactivatedAt', { type: 'DateTime', nullable: true, description: 'When it was deactivated; null while active.' }),
    invoices: t.relatedConnection(
      'invoices',
      {
        cursor: 'id',
        description: 'The invoices its openings made, newest first.',
        ...PAGE_SIZES,
        query: () => ({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] }),
        totalCount: true,
      },
      connectionNames('PaymentLinkInvoice', 'invoices made by opening the link'),
      edgeNames('PaymentLinkInvoice'),
    ),
  }),
});

builder.queryField('paymentLink', (t) =>
  t.prismaField({
    type: PaymentLinkType,
    nullable: true,
    authScopes: { scope: 'invoices:read' },
    description: 'One payment link of the calling merchant’s mode; null when there is none.',
    args: { id: t.arg.id({ required: true, description: 'The link id (REST `id`, pl_…).' }) },
    resolve: (query, _root, { id }, ctx) =>
      PAYMENT_LINK_ID_PATTERN.test(String(id)) ? ctx.db.paymentLink.findFirst({ ...query, where: { id: String(id), companyId: ctx.company!.id } }) : null,
  }),
);

const PaymentLinkFilter = builder.inputType('PaymentLinkFilter', {
  description: 'Narrows the payment link list.',
  fields: (t) => ({ active: t.boolean({ required: false, description: 'Active links only (true) or inactive ones only (false).' }) }),
});

builder.queryField('paymentLinks', (t) =>
  t.prismaConnection(
    {
      type: PaymentLinkType,
      cursor: 'id',
      authScopes: { scope: 'invoices:read' },
      description: 'The calling merchant’s payment links of its mode, newest first.',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: PaymentLinkFilter, required: false, description: 'Only the links that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, PAYMENT_LINK_ID_PATTERN);
        return ctx.db.paymentLink.findMany({ ...query, where: paymentLinkWhere(ctx.company!, { active: args.filter?.active ?? undefined }), orderBy: paymentLinkOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, PAYMENT_LINK_ID_PATTERN);
        return ctx.db.paymentLink.count({ where: paymentLinkWhere(ctx.company!, { active: args.filter?.active ?? undefined }) });
      },
    },
    connectionNames('PaymentLink', 'payment links'),
    edgeNames('PaymentLink'),
  ),
);

const CreatePaymentLinkInput = builder.inputType('CreatePaymentLinkInput', {
  description: 'A new payment link: an invoice’s content (checked as createInvoice checks it) and the link’s own fields (REST POST /api/payment-links).',
  fields: (t) => ({
    name: t.string({ required: true, description: 'The merchant’s name for it (1 to 200 characters; not shown to clients).' }),
    invoiceCurrency: t.field({ type: InvoiceCurrencyEnum, required: true, description: 'Currency of the prices.' }),
    items: t.field({ type: [InvoiceItemInput], required: true, description: 'The lines of its invoices, at least one.' }),
    paymentCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Fixes the payment currency of its invoices.' }),
    redirectURL: t.string({ required: false, description: 'http(s) URL its invoices send the client to once paid; absent: the store’s default at each opening.' }),
    isMerchantPaysFee: t.boolean({ required: false, description: 'Who pays the fee of its invoices; absent: the store’s default at each opening.' }),
    active: t.boolean({ required: false, description: 'Whether openings make invoices (default true).' }),
  }),
});

builder.mutationField('createPaymentLink', (t) =>
  t.prismaField({
    type: 'PaymentLink',
    authScopes: { scope: 'invoices:write' },
    description: 'Makes a payment link of the calling merchant’s mode (REST POST /api/payment-links).',
    errors: mutationOutcome('paymentLink', 'The new link, with its url.', [ValidationError]),
    args: { input: t.arg({ type: CreatePaymentLinkInput, required: true, description: 'The link to make.' }) },
    resolve: async (_query, _root, { input }, ctx) => createPaymentLink(ctx.paymentLinks, ctx.company!, parseInput(createPaymentLinkSchema, input)),
  }),
);

const DeactivatePaymentLinkInput = builder.inputType('DeactivatePaymentLinkInput', {
  description: 'The link to deactivate.',
  fields: (t) => ({ id: t.id({ required: true, description: 'The link id (REST `id`, pl_…).' }) }),
});

builder.mutationField('deactivatePaymentLink', (t) =>
  t.prismaField({
    type: 'PaymentLink',
    authScopes: { scope: 'invoices:write' },
    description: 'Deactivates a link for good: openings make no invoice from now on (REST POST /api/payment-links/{id}/deactivate).',
    errors: mutationOutcome('paymentLink', 'The link, inactive.', [NotFoundError]),
    args: { input: t.arg({ type: DeactivatePaymentLinkInput, required: true, description: 'Which link.' }) },
    resolve: async (_query, _root, { input }, ctx) => deactivatePaymentLink(ctx.paymentLinks, ctx.company!, String(input.id)),
  }),
);

builder.prismaObjectField('Invoice', 'paymentLink', (t) =>
  t.prismaField({
    type: 'PaymentLink',
    nullable: true,
    description: 'The payment link whose opening made it, for its merchant (with invoices:read); null otherwise.',
    select: { paymentLinkId: true, companyId: true },
    resolve: (query, invoice, _args, ctx) =>
      invoice.paymentLinkId && invoice.companyId === callerCompanyId(ctx, 'invoices:read')
        ? ctx.db.paymentLink.findUnique({ ...query, where: { id: invoice.paymentLinkId } })
        : null,
  }),
);
