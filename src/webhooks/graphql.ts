// Webhook settings and the delivery log for GraphQL clients: the same service functions as the REST paths.
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { WebhookDelivery } from '../../generated/prisma/client.ts';
import { builder, mutationOutcome, type GraphQLContext } from '../graphql/builder.ts';
import { contextLoader } from '../graphql/loaders.ts';
import { InvoiceType } from '../invoices/graphql/types.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { eventTypeEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, registerNodeType } from '../graphql/node-ids.ts';
import { parseInput } from '../core/validation.ts';
import type { EventType } from '../domain/event-types.ts';
import { jsonText } from '../core/json.ts';
import {
  deliveryListOrder,
  exactPayloads,
  deliveryListWhere,
  getWebhookUrl,
  redeliverEvent,
  redeliverFailed,
  sendTestWebhook,
  setWebhookUrl,
  webhookUrlSchema,
  type TestWebhookResult,
} from './service.ts';

registerNodeType('WebhookDelivery', nodeIdFormats.uuid);
registerNodeType('WebhookAttempt', nodeIdFormats.uuid);
registerNodeType('WebhookSettings', nodeIdFormats.uuid);

const UUID = nodeIdFormats.uuid;

const StatusEnum = builder.enumType('WebhookDeliveryStatus', {
  description: 'Where a delivery stands.',
  values: {
    PENDING: { value: 'pending', description: 'Not delivered yet; retried on schedule. REST: "pending".' },
    DELIVERED: { value: 'delivered', description: 'The endpoint answered 2xx. REST: "delivered".' },
    FAILED: { value: 'failed', description: 'Every attempt failed; redeliver it when the endpoint is fixed. REST: "failed".' },
  } as const,
});

builder.prismaNode('WebhookAttempt', {
  description: 'One try at delivering a webhook.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, delivery: { companyId: callerCompanyId(ctx, 'settings:read') } }),
  nullable: true,
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: '1 for the first try, then counting up.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', description: 'When the request went out.' }),
    durationMs: t.exposeInt('durationMs', { description: 'Until the answer (or the failure), in milliseconds.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'HTTP status of the answer; null when none came.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed, when it did.' }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'First 1 KiB of the answer.' }),
  }),
});

export const DeliveryType = builder.prismaNode('WebhookDelivery', {
  description: 'One event sent (or being sent) to the merchant’s webhook URL.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'settings:read') }),
  nullable: true,
  fields: (t) => ({
    eventId: t.exposeID('eventId', { description: 'The event’s id, also the webhook-id header the receiver sees.' }),
    eventType: t.field({
      type: eventTypeEnum(),
      description: 'Kind of the event.',
      select: { event: { select: { type: true } } },
      resolve: (d) => d.event.type as EventType,
    }),
    url: t.exposeString('url', { description: 'Where it is sent.' }),
    status: t.field({ type: StatusEnum, description: 'Where the delivery stands.', resolve: (d) => d.status as 'pending' | 'delivered' | 'failed' }),
    attempts: t.exposeInt('attempts', { description: 'Tries so far.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the next try is due, while pending.',
      select: { status: true, nextAttemptAt: true },
      resolve: (d) => (d.status === 'pending' ? d.nextAttemptAt : null),
    }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true, description: 'When the endpoint accepted it.' }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true, description: 'HTTP status of the last answer.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last try failed.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the delivery was queued.' }),
    payload: t.string({
      description: 'The event body as sent, JSON text (numbers with their exact digits).',
      select: { eventId: true },
      resolve: async (d, _args, ctx) => jsonText(await payloadLoader(ctx).load(d.eventId)),
    }),
    attemptLog: t.relation('attemptLog', { description: 'Every try, oldest first.', query: { orderBy: { attempt: 'asc' } } }),
  }),
});

/** Event bodies by event id, one query per request for every delivery on a page. */
const payloadLoader = contextLoader<string, unknown, GraphQLContext>('webhook-payloads', async (eventIds, ctx) => {
  const payloads = await exactPayloads(ctx.db, [...eventIds]);
  return eventIds.map((id) => payloads.get(id));
});

/**
 * The deliveries of each invoice's events, oldest first: one query finds them for every invoice of the request,
 * one more loads them with the nested fields asked for (`query`, the same for every invoice of one selection).
 */
const invoiceDeliveriesLoader = contextLoader<string, WebhookDelivery[], GraphQLContext>('invoice-deliveries', async (invoiceIds, ctx, query) => {
  const pairs = await ctx.db.$queryRaw<{ id: string; invoiceId: string }[]>`
    SELECT d."id"::text AS "id", e."subjectId" AS "invoiceId" FROM "WebhookDelivery" d JOIN "Event" e ON e."id" = d."eventId"
    WHERE e."subjectType" = 'invoice' AND e."subjectId" = ANY(${[...invoiceIds]}::text[]) AND d."companyId" = ${callerCompanyId(ctx, 'settings:read')}::uuid`;
  const rows = pairs.length
    ? await ctx.db.webhookDelivery.findMany({ ...(query as object), where: { id: { in: pairs.map((p) => p.id) } }, orderBy: [{ seq: 'asc' }, { createdAt: 'asc' }] })
    : [];
  const invoiceOf = new Map(pairs.map((p) => [p.id, p.invoiceId]));
  return invoiceIds.map((id) => rows.filter((r) => invoiceOf.get(r.id) === id));
});

builder.objectField(InvoiceType, 'webhookDeliveries', (t) =>
  t.prismaField({
    type: [DeliveryType],
    nullable: true,
    description: 'Every webhook delivery of this invoice’s events, oldest first; for the invoice’s merchant only (null for anyone else).',
    resolve: (query, invoice, _args, ctx) => (ctx.company?.id === invoice.companyId && ctx.access?.scopes.has('settings:read') ? invoiceDeliveriesLoader(ctx, query).load(invoice.id) : null),
  }),
);

const WebhookDeliveryFilter = builder.inputType('WebhookDeliveryFilter', {
  description: 'Narrows the delivery log; every condition given must hold.',
  fields: (t) => ({
    status: t.field({ type: [StatusEnum], required: false, description: 'Any of these statuses.' }),
    eventId: t.id({ required: false, description: 'Deliveries of this event only.' }),
  }),
});

builder.queryField('webhookDeliveries', (t) =>
  t.prismaConnection(
    {
      type: DeliveryType,
      cursor: 'id',
      authScopes: { scope: 'settings:read' },
      description: 'The delivery log, newest first: every attempt with time, status code, latency, error and answer.',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: WebhookDeliveryFilter, required: false, description: 'Only the deliveries that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.webhookDelivery.findMany({ ...query, where: deliveryListWhere(ctx.company!, filterOf(args.filter)), orderBy: deliveryListOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.webhookDelivery.count({ where: deliveryListWhere(ctx.company!, filterOf(args.filter)) });
      },
    },
    connectionNames('WebhookDelivery', 'webhook deliveries'),
    edgeNames('WebhookDelivery'),
  ),
);

function filterOf(filter: { status?: string[] | null; eventId?: string | number | null } | null | undefined) {
  const eventId = filter?.eventId == null ? undefined : String(filter.eventId);
  if (eventId !== undefined && eventId.length > 64) throw new ValidationError([{ path: 'filter.eventId', message: 'must be at most 64 characters' }]);
  return { status: filter?.status ?? undefined, eventId };
}

interface SettingsShape {
  companyId: string;
  url: string | null;
}

const WebhookSettingsType = builder.node(builder.objectRef<SettingsShape>('WebhookSettings'), {
  description: 'Where the merchant receives webhooks; one per merchant.',
  id: { resolve: (s) => s.companyId },
  loadOne: async (companyId, ctx) => (ctx.company?.id === companyId && ctx.access?.scopes.has('settings:read') ? { companyId, url: (await getWebhookUrl(ctx.webhooks, ctx.company)).webHookUrl } : null),
  fields: (t) => ({
    url: t.exposeString('url', { nullable: true, description: 'http(s) URL that receives webhooks; null when none is set.' }),
  }),
});

builder.queryField('webhookSettings', (t) =>
  t.field({
    type: WebhookSettingsType,
    authScopes: { scope: 'settings:read' },
    description: 'The calling merchant’s webhook settings (REST GET /api/company/settings/webhook-url).',
    resolve: async (_r, _a, ctx) => ({ companyId: ctx.company!.id, url: (await getWebhookUrl(ctx.webhooks, ctx.company!)).webHookUrl }),
  }),
);

const SetWebhookUrlInput = builder.inputType('SetWebhookUrlInput', {
  description: 'The new webhook URL.',
  fields: (t) => ({ url: t.string({ required: false, description: 'http(s) URL that receives webhooks; null removes it.' }) }),
});

builder.mutationField('setWebhookUrl', (t) =>
  t.field({
    type: WebhookSettingsType,
    authScopes: { scope: 'settings:write' },
    description: 'Sets or clears the URL that receives webhooks; clearing answers settings with a null url.',
    errors: mutationOutcome('webhookSettings', 'The settings after the change.', [ValidationError]),
    args: { input: t.arg({ type: SetWebhookUrlInput, required: true, description: 'The URL to set, or null.' }) },
    resolve: async (_r, { input }, ctx) => {
      const { webHookUrl } = await setWebhookUrl(ctx.webhooks, ctx.company!, ctx.access!.actor, parseInput(webhookUrlSchema, { webHookUrl: input.url ?? null }));
      return { companyId: ctx.company!.id, url: webHookUrl };
    },
  }),
);

const RedeliverWebhookInput = builder.inputType('RedeliverWebhookInput', {
  description: 'The event to send again.',
  fields: (t) => ({ eventId: t.id({ required: true, description: 'The event id (`WebhookDelivery.eventId`).' }) }),
});

builder.mutationField('redeliverWebhook', (t) =>
  t.field({
    type: DeliveryType,
    authScopes: { scope: 'settings:write' },
    description: 'Sends one event again to the current URL; the receiver sees the same webhook-id as before.',
    errors: mutationOutcome('delivery', 'The new delivery, pending.', [ValidationError, NotFoundError]),
    args: { input: t.arg({ type: RedeliverWebhookInput, required: true, description: 'The event to redeliver.' }) },
    resolve: (_r, { input }, ctx) => redeliverEvent(ctx.webhooks, ctx.company!, String(input.eventId)),
  }),
);

const RedeliverFailedInput = builder.inputType('RedeliverFailedInput', {
  description: 'Which failed deliveries to send again.',
  fields: (t) => ({ since: t.field({ type: 'DateTime', required: true, description: 'Events whose delivery failed at or after this instant.' }) }),
});

builder.mutationField('redeliverFailed', (t) =>
  t.int({
    authScopes: { scope: 'settings:write' },
    description: 'Redelivers every event whose delivery failed since then; answers how many.',
    errors: mutationOutcome('redeliveredCount', 'How many events were queued again.', [ValidationError]),
    args: { input: t.arg({ type: RedeliverFailedInput, required: true, description: 'Since when.' }) },
    resolve: async (_r, { input }, ctx) => (await redeliverFailed(ctx.webhooks, ctx.company!, { since: input.since })).redelivered,
  }),
);

const TestResultType = builder.objectRef<TestWebhookResult>('WebhookTestResult').implement({
  description: 'What happened to a test webhook (sent once, not retried, not logged).',
  fields: (t) => ({
    ok: t.exposeBoolean('ok', { description: 'The endpoint answered 2xx.' }),
    url: t.exposeString('url', { description: 'Where it was sent.' }),
    eventId: t.exposeID('eventId', { description: 'The test event’s id, the webhook-id header the receiver saw.' }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: 'HTTP status of the answer; null when none came.' }),
    durationMs: t.exposeInt('durationMs', { description: 'Until the answer (or the failure), in milliseconds.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed, when it did.' }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'First 1 KiB of the answer.' }),
  }),
});

builder.mutationField('sendTestWebhook', (t) =>
  t.field({
    type: TestResultType,
    authScopes: { scope: 'settings:write' },
    description: 'Sends a signed test event to the webhook URL now and reports what happened.',
    errors: mutationOutcome('result', 'What the endpoint answered.', [ValidationError]),
    resolve: (_r, _a, ctx) => sendTestWebhook(ctx.webhooks, ctx.company!),
  }),
);
