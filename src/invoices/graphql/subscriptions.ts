// Live invoice status: the invoice as it stands after each committed change (graphql-ws or SSE on /graphql).
import type { Invoice } from '../../../generated/prisma/client.ts';
import type { BusMessage } from '../../core/bus.ts';
import { NotFoundError } from '../../errors/app-error.ts';
import { builder } from '../../graphql/builder.ts';
import { busMessages, currentThenMessages } from '../../graphql/live.ts';
import { publicInvoiceWhere } from '../queries.ts';
import { InvoiceType } from './types.ts';

const isInvoiceEvent = (m: BusMessage) => m.subject.type === 'invoice' && m.subject.id !== null;

/**
 * The invoice a message is about, with the status the message announced: a later change may have committed
 * already, and each message shows its own step.
 */
async function invoiceAt(db: { invoice: { findUnique(a: { where: { id: string } }): Promise<Invoice | null> } }, m: BusMessage): Promise<Invoice> {
  const invoice = await db.invoice.findUnique({ where: { id: m.subject.id! } });
  if (!invoice) throw new NotFoundError(`No invoice with id ${m.subject.id}`);
  const status = (m.payload as { status?: unknown } | null)?.status;
  return m.type === `invoice.${String(status)}` ? { ...invoice, status: status as Invoice['status'] } : invoice;
}

builder.subscriptionField('invoiceStatusChanged', (t) =>
  t.field({
    type: InvoiceType,
    description:
      'One invoice: first as it stands, then once per status change (public: the unguessable invoice id is enough, as for the REST read).',
    args: { id: t.arg.id({ required: true, description: 'The public invoice id.' }) },
    subscribe: (_root, { id }, ctx) => {
      const where = publicInvoiceWhere(String(id));
      return currentThenMessages(
        ctx.bus,
        (m) => isInvoiceEvent(m) && m.subject.id === String(id) && m.type !== 'invoice.late_payment' && m.type !== 'invoice.unexpected_asset',
        async () => {
          // The invoice and its last event in one statement (one snapshot).
          const [row] = where
            ? await ctx.db.$queryRaw<(Invoice & { lastSeq: string | null })[]>`
                SELECT i.*, (SELECT MAX(e."seq") FROM "Event" e WHERE e."subjectId" = i."id")::text AS "lastSeq"
                FROM "Invoice" i WHERE i."id" = ${where.id}`
            : [];
          if (!row) throw new NotFoundError(`No invoice with id ${String(id)}`);
          const { lastSeq, ...invoice } = row;
          return { current: invoice as Invoice, lastSeq: lastSeq === null ? null : BigInt(lastSeq) };
        },
      );
    },
    resolve: async (item, _args, ctx) => ('current' in item ? item.current : invoiceAt(ctx.db, item.message)),
  }),
);

builder.subscriptionField('invoiceEvents', (t) =>
  t.field({
    type: InvoiceType,
    authScopes: { merchant: true },
    description: 'Every change of the calling merchant’s invoices, creation included, in commit order.',
    subscribe: (_root, _args, ctx) => busMessages(ctx.bus, (m) => isInvoiceEvent(m) && m.companyId === ctx.company!.id),
    resolve: (m: BusMessage, _args, ctx) => invoiceAt(ctx.db, m),
  }),
);
