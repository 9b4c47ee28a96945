// The notification settings and the e-mail log for GraphQL clients: the same service functions as the REST paths.
import { ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { LanguageEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, registerNodeType } from '../graphql/node-ids.ts';
import { parseInput } from '../core/validation.ts';
import {
  EMAIL_STATUSES,
  emailListOrder,
  emailListWhere,
  getNotificationSettings,
  notificationSettingsSchema,
  setNotificationSettings,
  type NotificationSettingsAnswer,
} from './service.ts';

registerNodeType('EmailDelivery', nodeIdFormats.uuid);
registerNodeType('NotificationSettings', nodeIdFormats.uuid);

const EmailStatusEnum = builder.enumType('EmailDeliveryStatus', {
  description: 'Where an e-mail stands.',
  values: {
    PENDING: { value: 'pending', description: 'Not accepted by the SMTP server yet; retried on schedule. REST: "pending".' },
    SENT: { value: 'sent', description: 'The SMTP server accepted it. REST: "sent".' },
    FAILED: { value: 'failed', description: 'A 5xx answer, or every attempt failed. REST: "failed".' },
    SUPPRESSED: { value: 'suppressed', description: 'A cap held it back (docs/emails.md); never sent. REST: "suppressed".' },
  } as const,
});

builder.prismaNode('EmailDelivery', {
  description: 'One e-mail of one event to one recipient (docs/emails.md).',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'settings:read') }),
  nullable: true,
  fields: (t) => ({
    eventId: t.exposeID('eventId', { description: 'The event the e-mail is about.' }),
    invoiceId: t.exposeID('invoiceId', { nullable: true, description: 'The invoice it is about, if any.' }),
    kind: t.exposeString('kind', { description: '`client.pending`, `client.done`, ..., `merchant.webhook_failing` (REST `kind`).' }),
    recipient: t.exposeString('recipient', { description: 'Where it goes.' }),
    lang: t.field({ type: LanguageEnum, description: 'Its language.', resolve: (d) => (d.lang === 'de' ? 'de' : 'en') }),
    status: t.field({ type: EmailStatusEnum, description: 'Where it stands.', resolve: (d) => d.status as (typeof EMAIL_STATUSES)[number] }),
    attempts: t.exposeInt('attempts', { description: 'Attempts so far.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due, while pending.',
      select: { status: true, nextAttemptAt: true },
      resolve: (d) => (d.status === 'pending' ? d.nextAttemptAt : null),
    }),
    lastResponseCode: t.exposeInt('lastResponseCode', { nullable: true, description: 'The SMTP reply code of the last attempt.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed, or which cap held it back.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true, description: 'When the SMTP server accepted it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was recorded.' }),
  }),
});

const EmailDeliveryFilter = builder.inputType('EmailDeliveryFilter', {
  description: 'Narrows the e-mail log; every condition given must hold.',
  fields: (t) => ({
    invoiceId: t.id({ required: false, description: 'E-mails about this invoice only.' }),
    status: t.field({ type: [EmailStatusEnum], required: false, description: 'Any of these statuses.' }),
  }),
});

function filterOf(filter: { invoiceId?: string | number | null; status?: string[] | null } | null | undefined) {
  const invoiceId = filter?.invoiceId == null ? undefined : String(filter.invoiceId);
  if (invoiceId !== undefined && invoiceId.length > 64) throw new ValidationError([{ path: 'filter.invoiceId', message: 'must be at most 64 characters' }]);
  return { invoiceId, status: filter?.status ?? undefined };
}

builder.queryField('emailDeliveries', (t) =>
  t.prismaConnection(
    {
      type: 'EmailDelivery',
      cursor: 'id',
      authScopes: { scope: 'settings:read' },
      description: 'The e-mails recorded for the merchant’s events, newest first (REST GET /api/company/emails).',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: EmailDeliveryFilter, required: false, description: 'Only the e-mails that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, nodeIdFormats.uuid);
        return ctx.db.emailDelivery.findMany({ ...query, where: emailListWhere(ctx.company!, filterOf(args.filter)), orderBy: emailListOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, nodeIdFormats.uuid);
        return ctx.db.emailDelivery.count({ where: emailListWhere(ctx.company!, filterOf(args.filter)) });
      },
    },
    connectionNames('EmailDelivery', 'e-mails'),
    edgeNames('EmailDelivery'),
  ),
);

const ClientNotificationsType = builder.objectRef<NotificationSettingsAnswer['client']>('ClientNotifications').implement({
  description: 'E-mails to the paying client (the invoice’s clientEmail), each on or off.',
  fields: (t) => ({
    pending: t.exposeBoolean('pending', { description: 'After proceed: how much to send, where, until when.' }),
    done: t.exposeBoolean('done', { description: 'The receipt.' }),
    wrong: t.exposeBoolean('wrong', { description: 'A short payment: what arrived, what was expected, what happens next.' }),
    refunded: t.exposeBoolean('refunded', { description: 'The payment is sent back.' }),
    closed: t.exposeBoolean('closed', { description: 'Money arrived after the invoice expired: the merchant decides.' }),
  }),
});

const MerchantNotificationsType = builder.objectRef<NotificationSettingsAnswer['merchant']>('MerchantNotifications').implement({
  description: 'E-mails to the merchant.',
  fields: (t) => ({
    emails: t.exposeStringList('emails', { description: 'Where they go (none: no merchant e-mails).' }),
    done: t.exposeBoolean('done', { description: 'Payment received.' }),
    wrong: t.exposeBoolean('wrong', { description: 'A short payment waits for a decision.' }),
    withdrawalDone: t.exposeBoolean('withdrawalDone', { description: 'A withdrawal is done.' }),
    withdrawalRejected: t.exposeBoolean('withdrawalRejected', { description: 'A withdrawal was rejected.' }),
    depositFrozen: t.exposeBoolean('depositFrozen', { description: 'A deposit is frozen by the risk checks.' }),
    webhookFailing: t.exposeBoolean('webhookFailing', { description: 'The webhook endpoint has been failing for more than an hour.' }),
  }),
});

interface SettingsShape extends NotificationSettingsAnswer {
  companyId: string;
}

const NotificationSettingsType = builder.node(builder.objectRef<SettingsShape>('NotificationSettings'), {
  description: 'Which e-mails are sent (REST /api/company/settings/notifications); one per merchant and mode.',
  id: { resolve: (s) => s.companyId },
  loadOne: async (companyId, ctx) => (ctx.company?.id === companyId ? { companyId, ...(await getNotificationSettings(ctx.emails, ctx.company)) } : null),
  fields: (t) => ({
    client: t.field({ type: ClientNotificationsType, description: 'E-mails to the paying client.', resolve: (s) => s.client }),
    merchant: t.field({ type: MerchantNotificationsType, description: 'E-mails to the merchant.', resolve: (s) => s.merchant }),
  }),
});

builder.queryField('notificationSettings', (t) =>
  t.field({
    type: NotificationSettingsType,
    authScopes: { scope: 'settings:read' },
    description: 'The calling merchant’s e-mail settings (REST GET /api/company/settings/notifications).',
    resolve: async (_r, _a, ctx) => ({ companyId: ctx.company!.id, ...(await getNotificationSettings(ctx.emails, ctx.company!)) }),
  }),
);

const ClientNotificationsInput = builder.inputType('ClientNotificationsInput', {
  description: 'Client e-mail kinds to turn on (true) or off (false); absent ones stay as they are.',
  fields: (t) => ({
    pending: t.boolean({ required: false, description: 'After proceed.' }),
    done: t.boolean({ required: false, description: 'The receipt.' }),
    wrong: t.boolean({ required: false, description: 'A short payment.' }),
    refunded: t.boolean({ required: false, description: 'The payment is sent back.' }),
    closed: t.boolean({ required: false, description: 'Money arrived after the invoice expired.' }),
  }),
});

const MerchantNotificationsInput = builder.inputType('MerchantNotificationsInput', {
  description: 'The merchant’s addresses and kinds; absent fields stay as they are.',
  fields: (t) => ({
    emails: t.stringList({ required: false, description: 'At most 5 addresses (an empty list: no merchant e-mails).' }),
    done: t.boolean({ required: false, description: 'Payment received.' }),
    wrong: t.boolean({ required: false, description: 'A short payment waits for a decision.' }),
    withdrawalDone: t.boolean({ required: false, description: 'A withdrawal is done.' }),
    withdrawalRejected: t.boolean({ required: false, description: 'A withdrawal was rejected.' }),
    depositFrozen: t.boolean({ required: false, description: 'A deposit is frozen.' }),
    webhookFailing: t.boolean({ required: false, description: 'The webhook endpoint has been failing for more than an hour.' }),
  }),
});

const SetNotificationSettingsInput = builder.inputType('SetNotificationSettingsInput', {
  description: 'What to change in the e-mail settings.',
  fields: (t) => ({
    client: t.field({ type: ClientNotificationsInput, required: false, description: 'Client e-mail kinds.' }),
    merchant: t.field({ type: MerchantNotificationsInput, required: false, description: 'The merchant’s addresses and kinds.' }),
  }),
});

/** GraphQL nulls mean "leave as it is", like absent REST fields. */
const withoutNulls = (o: Record<string, unknown> | null | undefined) =>
  o ? Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) : undefined;

builder.mutationField('setNotificationSettings', (t) =>
  t.field({
    type: NotificationSettingsType,
    authScopes: { scope: 'settings:write' },
    description: 'Turns e-mails on or off and sets the merchant’s addresses (REST PUT /api/company/settings/notifications).',
    errors: mutationOutcome('notificationSettings', 'The settings after the change.', [ValidationError]),
    args: { input: t.arg({ type: SetNotificationSettingsInput, required: true, description: 'What to change.' }) },
    resolve: async (_r, { input }, ctx) => ({
      companyId: ctx.company!.id,
      ...(await setNotificationSettings(
        ctx.emails,
        ctx.company!,
        parseInput(notificationSettingsSchema, { client: withoutNulls(input.client), merchant: withoutNulls(input.merchant) }),
      )),
    }),
  }),
);
