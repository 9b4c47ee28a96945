import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder } from '../graphql/builder.ts';
import { presentAttempt, presentDelivery } from './presenter.ts';
import { parseInput } from '../core/validation.ts';
import {
  deliveryListSchema,
  getWebhookUrl,
  listDeliveries,
  redeliverEvent,
  redeliverFailed,
  sendTestWebhook,
  setWebhookUrl,
  webhookUrlSchema,
  type TestWebhookResult,
} from './service.ts';

const AttemptType = builder.objectRef<ReturnType<typeof presentAttempt>>('WebhookAttempt').implement({
  fields: (t) => ({
    attempt: t.exposeInt('attempt'),
    startedAt: t.field({ type: 'DateTime', resolve: (a) => new Date(a.startedAt) }),
    durationMs: t.exposeInt('durationMs'),
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'First 1 KiB of the answer.' }),
  }),
});

const DeliveryType = builder.objectRef<ReturnType<typeof presentDelivery>>('WebhookDelivery').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeID('eventId', { description: 'Also the webhook-id header the receiver sees.' }),
    eventType: t.exposeString('eventType'),
    url: t.exposeString('url'),
    status: t.exposeString('status', { description: 'pending, delivered or failed.' }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => (d.nextAttemptAt ? new Date(d.nextAttemptAt) : null) }),
    deliveredAt: t.field({ type: 'DateTime', nullable: true, resolve: (d) => (d.deliveredAt ? new Date(d.deliveredAt) : null) }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.field({ type: 'DateTime', resolve: (d) => new Date(d.createdAt) }),
    payload: t.string({ description: 'The event payload as JSON.', resolve: (d) => JSON.stringify(d.payload) }),
    attemptLog: t.field({ type: [AttemptType], resolve: (d) => d.attemptLog }),
  }),
});

const DeliveryPage = builder.objectRef<{ deliveries: ReturnType<typeof presentDelivery>[]; nextCursor: string | null }>('WebhookDeliveryPage').implement({
  fields: (t) => ({
    deliveries: t.field({ type: [DeliveryType], resolve: (p) => p.deliveries }),
    nextCursor: t.exposeString('nextCursor', { nullable: true, description: 'Pass as `after` for the next page; null at the end.' }),
  }),
});

const StatusEnum = builder.enumType('WebhookDeliveryStatus', {
  values: { PENDING: { value: 'pending' }, DELIVERED: { value: 'delivered' }, FAILED: { value: 'failed' } } as const,
});

builder.queryField('webhookDeliveries', (t) =>
  t.field({
    type: DeliveryPage,
    authScopes: { merchant: true },
    description: 'The delivery log, newest first: every attempt with time, status code, latency, error and answer.',
    args: {
      status: t.arg({ type: StatusEnum, required: false }),
      eventId: t.arg.id({ required: false }),
      first: t.arg.int({ required: false }),
      after: t.arg.string({ required: false }),
    },
    resolve: async (_root, args, ctx) => {
      const query = parseInput(deliveryListSchema, {
        status: args.status ?? undefined,
        eventId: args.eventId ? String(args.eventId) : undefined,
        limit: args.first ?? undefined,
        after: args.after ?? undefined,
      });
      const page = await listDeliveries(ctx.webhooks, ctx.company!, query);
      return { deliveries: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor };
    },
  }),
);

builder.queryField('webhookUrl', (t) =>
  t.string({ nullable: true, authScopes: { merchant: true }, resolve: async (_r, _a, ctx) => (await getWebhookUrl(ctx.webhooks, ctx.company!)).webHookUrl }),
);

builder.mutationField('setWebhookUrl', (t) =>
  t.string({
    nullable: true,
    authScopes: { merchant: true },
    description: 'http(s) URL that receives webhooks; null removes it.',
    errors: { types: [ValidationError] },
    args: { webHookUrl: t.arg.string({ required: false }) },
    resolve: async (_r, { webHookUrl }, ctx) => (await setWebhookUrl(ctx.webhooks, ctx.company!, parseInput(webhookUrlSchema, { webHookUrl: webHookUrl ?? null }))).webHookUrl,
  }),
);

builder.mutationField('redeliverWebhook', (t) =>
  t.field({
    type: DeliveryType,
    authScopes: { merchant: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: { eventId: t.arg.id({ required: true }) },
    resolve: async (_r, { eventId }, ctx) => presentDelivery(await redeliverEvent(ctx.webhooks, ctx.company!, String(eventId))),
  }),
);

builder.mutationField('redeliverFailed', (t) =>
  t.int({
    authScopes: { merchant: true },
    description: 'Redelivers every event whose delivery failed since then; answers how many.',
    errors: { types: [ValidationError] },
    args: { since: t.arg({ type: 'DateTime', required: true }) },
    resolve: async (_r, { since }, ctx) => (await redeliverFailed(ctx.webhooks, ctx.company!, { since })).redelivered,
  }),
);

const TestResultType = builder.objectRef<TestWebhookResult>('WebhookTestResult').implement({
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    url: t.exposeString('url'),
    eventId: t.exposeString('eventId'),
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    durationMs: t.exposeInt('durationMs'),
    error: t.exposeString('error', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true }),
  }),
});

builder.mutationField('sendTestWebhook', (t) =>
  t.field({
    type: TestResultType,
    authScopes: { merchant: true },
    errors: { types: [ValidationError] },
    resolve: (_r, _a, ctx) => sendTestWebhook(ctx.webhooks, ctx.company!),
  }),
);
