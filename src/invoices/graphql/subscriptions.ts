// Live invoice status: the invoice as it stands after each committed change (graphql-ws or SSE on /graphql).
import { Prisma, type Invoice } from '../../../generated/prisma/client.ts';
import type { BusMessage } from '../../core/bus.ts';
import type { Db } from '../../db/client.ts';
import { NotFoundError } from '../../errors/app-error.ts';
import { builder } from '../../graphql/builder.ts';
import { AFTER_DESCRIPTION, currentThenEvents, liveEvents, liveResolver, parseLiveCursor, withLastEvent, type LiveItem } from '../../graphql/live.ts';
import { publicInvoiceWhere } from '../queries.ts';
import { InvoiceType } from './types.ts';

/** Events about an invoice that are not status changes. */
const NOT_STATUS_CHANGES = ['invoice.late_payment', 'invoice.unexpected_asset'] as const;

/**
 * The invoice a message is about, with the status the message announced: a later change may have committed
 * already, and each message shows its own step.
 */
async function invoiceAt(ctx: { db: Db }, m: BusMessage): Promise<Invoice> {
  const invoice = await ctx.db.invoice.findUnique({ where: { id: m.subject.id! } });
  if (!invoice) throw new NotFoundError(`No invoice with id ${m.subject.id}`);
  const status = (m.payload as { status?: unknown } | null)?.status;
  return m.type === `invoice.${String(status)}` ? { ...invoice, status: status as Invoice['status'] } : invoice;
}

const resolveInvoice = liveResolver(invoiceAt);

/** After these the invoice's status does not move by itself: its subscription completes (docs/live.md). */
const FINAL_STATUSES: ReadonlySet<string> = new Set(['done', 'refunded', 'closed']);

const statusOf = (item: LiveItem<Invoice>): string | null => {
  if ('current' in item) return item.current.status;
  const status = (item.message.payload as { status?: unknown } | null)?.status;
  return item.message.type === `invoice.${String(status)}` ? String(status) : null;
};

/**
 * The items until one shows a final status that is still the invoice's status (a replay from `after` may pass a
 * `closed` that a merchant's accept later turned `done`: it goes on to that), then completes.
 */
async function* untilFinal(db: Db, invoiceId: string, items: AsyncIterable<LiveItem<Invoice>>): AsyncGenerator<LiveItem<Invoice>> {
  for await (const item of items) {
    yield item;
    const status = statusOf(item);
    if (status === null || !FINAL_STATUSES.has(status)) continue;
    const now = 'current' in item ? status : (await db.invoice.findUnique({ where: { id: invoiceId }, select: { status: true } }))?.status;
    if (now === status) return;
  }
}

builder.subscriptionField('invoiceStatusChanged', (t) =>
  t.field({
    type: InvoiceType,
    description:
      'One invoice: first as it stands, then once per status change and once per payment seen or confirmed without a status change (confirmations 1 of 2 -> 2 of 2); public: the unguessable invoice id is enough, as for the REST read. Completes after a final status (DONE, REFUNDED, CLOSED). With `after`: the changes since that cursor instead of the current state, then live ones.',
    args: {
      id: t.arg.id({ required: true, description: 'The public invoice id.' }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, { id, after }, ctx) => {
      const cursor = parseLiveCursor(after);
      const invoiceId = String(id);
      const notFound = () => new NotFoundError(`No invoice with id ${invoiceId}`);
      if (!publicInvoiceWhere(invoiceId)) throw notFound();
      // A resuming client must still name an invoice that exists.
      if (cursor && !(await ctx.db.invoice.findUnique({ where: { id: invoiceId }, select: { id: true } }))) throw notFound();
      const items = currentThenEvents(ctx, { subjectType: 'invoice', subjectId: invoiceId, exceptTypes: NOT_STATUS_CHANGES }, cursor, async () => {
        const snapshot = await withLastEvent<Invoice>(ctx.db, { type: 'invoice', id: invoiceId }, Prisma.sql`SELECT * FROM "Invoice" WHERE "id" = ${invoiceId}`);
        if (!snapshot) throw notFound();
        return snapshot;
      });
      return untilFinal(ctx.db, invoiceId, items);
    },
    resolve: resolveInvoice,
  }),
);

builder.subscriptionField('invoiceEvents', (t) =>
  t.field({
    type: InvoiceType,
    authScopes: { scope: 'invoices:read' },
    description: 'Every change of the calling merchant’s invoices, creation included, in commit order. With `after`: first the changes since that cursor.',
    args: { after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }) },
    subscribe: (_root, { after }, ctx) => liveEvents(ctx, { subjectType: 'invoice', companyId: ctx.company!.id }, parseLiveCursor(after)),
    resolve: resolveInvoice,
  }),
);
