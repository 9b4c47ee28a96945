// Payment links (docs/payment-links.md): a merchant's saved invoice content behind a public URL. Opening the URL makes
// a fresh invoice of that content through the invoice create service (the API's own path: its event and webhook
// included) and sends the client to its checkout page. A link belongs to one mode's tenant.
import { randomBytes } from 'node:crypto';
import { base58 } from '@scure/base';
import { z } from 'zod';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import type { Db } from '../db/client.ts';
import { INVOICE_CURRENCIES, isPaymentCurrency, PAYMENT_CURRENCIES, type InvoiceCurrency } from '../domain/assets.ts';
import { MODES } from '../domain/modes.ts';
import { NotFoundError, RateLimitedError } from '../errors/app-error.ts';
import { decimalString, isoInstant, nextCursor } from '../http/schemas.ts';
import type { InvoiceDeps } from '../invoices/lifecycle.ts';
import { presentItems, presentTotal } from '../invoices/presenter.ts';
import { invoiceContent, invoiceContentFields } from '../invoices/rules.ts';
import { checkFixedCurrency, createInvoice } from '../invoices/service.ts';
// What an opening came to is the page's vocabulary: web/pages.ts answers each kind.
import type { LinkOpening } from '../web/pages.ts';

export interface PaymentLinkDeps {
  db: Db;
  invoices: InvoiceDeps;
  /** Links are `<publicBaseUrl>/l/<id>` (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
}

/** Where the server answers a link (pages.ts serves it beside the checkout page). */
export const LINK_PATH = '/l';

/** pl_ + 128 random bits in base58: unguessable, and never taken for an invoice id. */
export const newPaymentLinkId = (): string => `pl_${base58.encode(randomBytes(16))}`;
export const PAYMENT_LINK_ID_PATTERN = /^pl_[1-9A-HJ-NP-Za-km-z]{16,24}$/;

export const MAX_LINK_NAME_LENGTH = 200;

/** The invoice create body's fields (the same schema pieces, so a link's items are checked exactly like an invoice's), plus the link's own. */
export const createPaymentLinkSchema = z
  .object({
    ...invoiceContentFields,
    name: z.string().trim().min(1, 'must not be empty').max(MAX_LINK_NAME_LENGTH),
    active: z.boolean().default(true),
  })
  .transform((input, ctx) => ({ ...invoiceContent(input, ctx), name: input.name, active: input.active }));
export type CreatePaymentLinkInput = z.output<typeof createPaymentLinkSchema>;

export const paymentLinkListSchema = z.object({
  active: z.enum(['true', 'false'], { message: 'must be true or false' }).optional(),
  after: z.string().regex(PAYMENT_LINK_ID_PATTERN, 'must be a payment link id from a previous page').optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export const paymentLinkSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The link id (pl_…).', example: 'pl_7Qx3hHq1bXo9b3kQmZzJ2f' }),
    url: z.string().meta({ description: 'What clients open: PUBLIC_BASE_URL/l/<id>. Each opening makes a new invoice.' }),
    name: z.string().meta({ description: 'The merchant’s name for it (not shown to clients).' }),
    invoiceCurrency: z.enum(INVOICE_CURRENCIES),
    items: z.array(z.strictObject({ name: z.string(), price: decimalString })).meta({ description: 'The invoice items, prices rounded as an invoice’s.' }),
    total: decimalString.meta({ description: 'The sum of the item prices.' }),
    paymentCurrency: z.enum(PAYMENT_CURRENCIES).nullable().meta({ description: 'The fixed payment currency of its invoices; null: the client chooses.' }),
    redirectURL: z.string().nullable().meta({ description: 'The redirectURL of its invoices; null: the store’s default at the time of opening.' }),
    isMerchantPaysFee: z.boolean().nullable().meta({ description: 'isMerchantPaysFee of its invoices; null: the store’s default at the time of opening.' }),
    active: z.boolean().meta({ description: 'Opening an inactive link shows a page saying so and makes no invoice.' }),
    mode: z.enum(MODES).meta({ description: 'The mode its invoices belong to (the token’s that made it).' }),
    createdAt: isoInstant,
    deactivatedAt: isoInstant.nullable(),
  })
  .meta({ id: 'PaymentLink' });

export const paymentLinkPageSchema = z
  .strictObject({ paymentLinks: z.array(paymentLinkSchema).meta({ description: 'Newest first.' }), nextCursor })
  .meta({ id: 'PaymentLinkList' });

const include = { items: { orderBy: { position: 'asc' } }, company: { select: { mode: true } } } satisfies Prisma.PaymentLinkInclude;
export type PaymentLinkRecord = Prisma.PaymentLinkGetPayload<{ include: typeof include }>;

export const linkUrl = (deps: Pick<PaymentLinkDeps, 'publicBaseUrl'>, id: string) => `${deps.publicBaseUrl}${LINK_PATH}/${id}`;

export const presentPaymentLink = (deps: Pick<PaymentLinkDeps, 'publicBaseUrl'>, l: PaymentLinkRecord) => ({
  id: l.id,
  url: linkUrl(deps, l.id),
  name: l.name,
  invoiceCurrency: l.invoiceCurrency as InvoiceCurrency,
  items: presentItems(l),
  total: presentTotal(l),
  paymentCurrency: l.fixedPaymentCurrency && isPaymentCurrency(l.fixedPaymentCurrency) ? l.fixedPaymentCurrency : null,
  redirectURL: l.redirectUrl,
  isMerchantPaysFee: l.isMerchantPaysFee,
  active: l.active,
  mode: l.company.mode,
  createdAt: l.createdAt.toISOString(),
  deactivatedAt: l.deactivatedAt?.toISOString() ?? null,
});

export async function createPaymentLink(deps: PaymentLinkDeps, company: Company, input: CreatePaymentLinkInput): Promise<PaymentLinkRecord> {
  // What would make every opening fail is refused now, as an invoice create would refuse it.
  checkFixedCurrency(deps.invoices, company, input.paymentCurrency);
  const id = newPaymentLinkId();
  return deps.db.paymentLink.create({
    data: {
      id,
      companyId: company.id,
      name: input.name,
      invoiceCurrency: input.invoiceCurrency,
      fixedPaymentCurrency: input.paymentCurrency,
      isMerchantPaysFee: input.isMerchantPaysFee,
      redirectUrl: input.redirectURL,
      active: input.active,
      deactivatedAt: input.active ? null : new Date(),
      items: { create: input.items.map((item, position) => ({ position, name: item.name, price: new Prisma.Decimal(item.price.toFixed()) })) },
    },
    include,
  });
}

/** The tenant's links, newest first: the one definition REST and GraphQL lists share. */
export const paymentLinkWhere = (company: Pick<Company, 'id'>, filter: { active?: boolean | undefined } = {}): Prisma.PaymentLinkWhereInput => ({
  companyId: company.id,
  ...(filter.active !== undefined ? { active: filter.active } : {}),
});
export const paymentLinkOrder = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.PaymentLinkOrderByWithRelationInput[];

export async function listPaymentLinks(deps: Pick<PaymentLinkDeps, 'db'>, company: Pick<Company, 'id'>, q: z.output<typeof paymentLinkListSchema>) {
  const rows = await deps.db.paymentLink.findMany({
    where: paymentLinkWhere(company, { active: q.active === undefined ? undefined : q.active === 'true' }),
    include,
    orderBy: paymentLinkOrder,
    ...pageArgs('id', q.limit, q.after),
  });
  return pageOf(rows, q.limit, (l) => l.id);
}

/** One of the tenant's links; another tenant's (another merchant's, or the other mode's) is not found. */
export async function getPaymentLink(deps: Pick<PaymentLinkDeps, 'db'>, company: Pick<Company, 'id'>, id: string): Promise<PaymentLinkRecord> {
  const link = PAYMENT_LINK_ID_PATTERN.test(id) ? await deps.db.paymentLink.findFirst({ where: { id, companyId: company.id }, include }) : null;
  if (!link) throw new NotFoundError(`No payment link with id ${id}`);
  return link;
}

/** Deactivates a link for good (a new link takes its place if wanted); deactivating an inactive link changes nothing. */
export async function deactivatePaymentLink(deps: Pick<PaymentLinkDeps, 'db'>, company: Pick<Company, 'id'>, id: string): Promise<PaymentLinkRecord> {
  if (PAYMENT_LINK_ID_PATTERN.test(id)) {
    await deps.db.paymentLink.updateMany({ where: { id, companyId: company.id, active: true }, data: { active: false, deactivatedAt: new Date() } });
  }
  return getPaymentLink(deps, company, id);
}

/**
 * Opening a link: a new invoice of its content, made by the invoice create service for the link's tenant (its store
 * defaults as they are now fill what the link leaves open). `admit` runs once the link is known to be active, before
 * anything is written (only an opening that would make an invoice counts): the per-address limit (it throws to refuse).
 */
export async function openPaymentLink(deps: PaymentLinkDeps, id: string, admit: () => Promise<void>): Promise<LinkOpening> {
  const link = PAYMENT_LINK_ID_PATTERN.test(id) ? await deps.db.paymentLink.findUnique({ where: { id }, include: { items: { orderBy: { position: 'asc' } }, company: true } }) : null;
  if (!link) return { kind: 'unknown' };
  if (!link.active) return { kind: 'inactive' };
  const paymentCurrency = link.fixedPaymentCurrency && isPaymentCurrency(link.fixedPaymentCurrency) ? link.fixedPaymentCurrency : null;
  try {
    checkFixedCurrency(deps.invoices, link.company, paymentCurrency);
  } catch (e) {
    return { kind: 'unavailable', reason: (e as Error).message };
  }
  await admit();
  const items = link.items.map((i) => ({ name: i.name, price: i.price }));
  const { invoice } = await createInvoice(
    deps.invoices,
    link.company,
    {
      invoiceCurrency: link.invoiceCurrency as InvoiceCurrency,
      items,
      total: items.reduce((sum, i) => sum.plus(i.price), new Prisma.Decimal(0)),
      isMerchantPaysFee: link.isMerchantPaysFee,
      paymentCurrency,
      redirectURL: link.redirectUrl,
      // A link's invoices have no order of the shop's: each opening is a new order.
      orderId: null,
      metadata: null,
    },
    null,
    { paymentLinkId: link.id },
  );
  return { kind: 'invoice', invoiceId: invoice.id, checkoutUrl: `${deps.invoices.payUrl}/${invoice.id}` };
}

/** Opening a link for a client at `address`, whose openings count against the per-address limit (limiter.ts). */
export async function openPaymentLinkFor(deps: PaymentLinkDeps & { limiter: { admit(address: string): Promise<void> } }, id: string, address: string): Promise<LinkOpening> {
  try {
    return await openPaymentLink(deps, id, () => deps.limiter.admit(address));
  } catch (e) {
    if (e instanceof RateLimitedError) return { kind: 'limited', retryAfterSeconds: e.retryAfterSeconds };
    throw e;
  }
}
