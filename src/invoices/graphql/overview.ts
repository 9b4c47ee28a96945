// The dashboard overview's aggregates (overview.ts): tenant- and mode-scoped like every merchant read (the
// company of the credential is one mode's), computed in SQL.
import { parseInput } from '../../core/validation.ts';
import { builder } from '../../graphql/builder.ts';
import { InvoiceCurrencyEnum } from '../../graphql/enums.ts';
import { invoiceOverview, OVERVIEW_DEFAULT_DAYS, OVERVIEW_MAX_DAYS, overviewSchema, type DailyReceived, type InvoiceOverview } from '../overview.ts';
import type { InvoiceStatus } from '../status.ts';
import { InvoiceStatusEnum } from './types.ts';

const DailyReceivedType = builder.objectRef<DailyReceived>('DailyReceived').implement({
  description: 'What the invoices that became done on one day were sold for, in one invoice currency.',
  fields: (t) => ({
    day: t.exposeString('day', { description: 'The UTC calendar day, YYYY-MM-DD.' }),
    currency: t.field({ type: InvoiceCurrencyEnum, description: 'The invoice currency.', resolve: (r) => r.currency as never }),
    amount: t.field({ type: 'Decimal', description: 'The sum of their totals, in the invoice currency.', resolve: (r) => r.amount }),
    invoices: t.exposeInt('invoices', { description: 'How many invoices.' }),
  }),
});

const StatusCountType = builder.objectRef<{ status: InvoiceStatus; count: number }>('InvoiceStatusCount').implement({
  description: 'How many invoices have one status.',
  fields: (t) => ({
    status: t.field({ type: InvoiceStatusEnum, description: 'The status.', resolve: (c) => c.status }),
    count: t.exposeInt('count', { description: 'How many.' }),
  }),
});

const InvoiceOverviewType = builder.objectRef<InvoiceOverview>('InvoiceOverview').implement({
  description: 'The dashboard overview of the calling merchant’s invoices over the last days (UTC calendar days).',
  fields: (t) => ({
    from: t.field({ type: 'DateTime', description: 'Midnight UTC of the first day.', resolve: (o) => o.from }),
    to: t.field({ type: 'DateTime', description: 'The end: now on the merchant’s clock (the test clock in test mode).', resolve: (o) => o.to }),
    days: t.exposeInt('days', { description: 'How many calendar days, today included.' }),
    timeZone: t.exposeString('timeZone', { description: 'The time zone of the days: always UTC.' }),
    received: t.field({
      type: [DailyReceivedType],
      description: 'Money received per day and invoice currency: the totals of the invoices that became done that day. Days without any are left out.',
      resolve: (o) => o.received,
    }),
    invoicesByStatus: t.field({
      type: [StatusCountType],
      description: 'The invoices created in the window by status, every status included (zero when none).',
      resolve: (o) => o.byStatus,
    }),
  }),
});

builder.queryField('invoiceOverview', (t) =>
  t.field({
    type: InvoiceOverviewType,
    authScopes: { scope: 'invoices:read' },
    description: 'Money received per day and invoices by status over the last `days` days, for the dashboard’s overview.',
    args: { days: t.arg.int({ required: false, defaultValue: OVERVIEW_DEFAULT_DAYS, description: `How many UTC calendar days, today included (1 to ${OVERVIEW_MAX_DAYS}).` }) },
    resolve: (_root, { days }, ctx) => invoiceOverview(ctx.invoices, ctx.company!, parseInput(overviewSchema, { days: days ?? OVERVIEW_DEFAULT_DAYS }).days),
  }),
);
