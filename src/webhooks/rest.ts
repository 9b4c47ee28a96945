import type { Services } from '../core/feature.ts';
import { JsonText, jsonText } from '../core/json.ts';
import { route, type Route } from '../http/router.ts';
import { z } from 'zod';
import {
  eventPageSchema,
  presentDelivery,
  redeliveredSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookTestResultSchema,
  webhookUrlAnswerSchema,
} from './presenter.ts';
import {
  exactPayloads,
  deliveryListSchema,
  eventsQuerySchema,
  getDelivery,
  getWebhookUrl,
  listDeliveries,
  listEvents,
  redeliverEvent,
  redeliverFailed,
  redeliverFailedSchema,
  sendTestWebhook,
  setWebhookUrl,
  webhookUrlSchema,
} from './service.ts';

// Event payloads keep their numbers' exact digits (a withdrawal `amount` is a JSON number).
const exactJson = (body: unknown) => new JsonText(jsonText(body));

const TAG = 'Webhooks';

export const webhookRoutes: Route<Services>[] = [
  route({
    method: 'PUT',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    scope: 'settings:write',
    body: webhookUrlSchema,
    doc: {
      operationId: 'setWebhookUrl',
      summary: 'Set the webhook URL',
      description: 'Where signed webhooks go (null removes it). Only http(s) URLs without credentials; addresses that are not public are refused (docs/webhooks.md).',
      tag: TAG,
      requestExample: { webHookUrl: 'https://shop.example/hooks' },
      responses: { 200: { description: 'The URL now set.', schema: webhookUrlAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await setWebhookUrl(ctx.webhooks, req.company!, req.access!.actor, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'getWebhookUrl',
      summary: 'Read the webhook URL',
      tag: TAG,
      responses: { 200: { description: 'The URL set, or null.', schema: webhookUrlAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await getWebhookUrl(ctx.webhooks, req.company!) }),
  }),
  route({
    method: 'POST',
    path: '/api/company/settings/webhook-url/test',
    auth: 'required',
    scope: 'settings:write',
    doc: {
      operationId: 'sendTestWebhook',
      summary: 'Send a test webhook',
      description: 'Sends a signed test event to the webhook URL now and reports what happened; 422 when no URL is set.',
      tag: TAG,
      responses: { 200: { description: 'What the endpoint answered.', schema: webhookTestResultSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: await sendTestWebhook(ctx.webhooks, req.company!) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/webhooks/deliveries',
    auth: 'required',
    scope: 'settings:read',
    query: deliveryListSchema,
    doc: {
      operationId: 'listWebhookDeliveries',
      summary: 'List webhook deliveries',
      description: 'Newest first, a page at a time (`after`: the last id of the previous page).',
      tag: TAG,
      responses: { 200: { description: 'A page of deliveries.', schema: webhookDeliveryPageSchema } },
    },
    handler: async (req, ctx) => {
      const page = await listDeliveries(ctx.webhooks, req.company!, req.query);
      const payloads = await exactPayloads(ctx.db, page.deliveries.map((d) => d.eventId));
      return { status: 200, body: exactJson({ deliveries: page.deliveries.map((d) => presentDelivery(d, payloads)), nextCursor: page.nextCursor }) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/company/webhooks/deliveries/:id',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'getWebhookDelivery',
      summary: 'Read a webhook delivery',
      tag: TAG,
      params: { id: z.string().meta({ description: 'The delivery id.' }) },
      responses: { 200: { description: 'The delivery with every attempt.', schema: webhookDeliverySchema } },
      errors: [404],
    },
    handler: async (req, ctx) => {
      const delivery = await getDelivery(ctx.webhooks, req.company!, req.params['id']!);
      return { status: 200, body: exactJson(presentDelivery(delivery, await exactPayloads(ctx.db, [delivery.eventId]))) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/company/webhooks/events/:eventId/redeliver',
    auth: 'required',
    scope: 'settings:write',
    doc: {
      operationId: 'redeliverEvent',
      summary: 'Send an event again',
      description: 'A new delivery of the event, with the same webhook-id; 422 when no URL is set.',
      tag: TAG,
      params: { eventId: z.string().meta({ description: 'The event id (webhook-id).' }) },
      responses: { 202: { description: 'The new delivery, pending.', schema: webhookDeliverySchema } },
      errors: [404],
    },
    handler: async (req, ctx) => ({ status: 202, body: presentDelivery(await redeliverEvent(ctx.webhooks, req.company!, req.params['eventId']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/company/webhooks/redeliver-failed',
    auth: 'required',
    scope: 'settings:write',
    body: redeliverFailedSchema,
    doc: {
      operationId: 'redeliverFailed',
      summary: 'Send failed events again',
      description: 'Every event whose latest delivery failed since the given time, except those delivered or pending again; 422 when no URL is set.',
      tag: TAG,
      requestExample: { since: '2026-11-21T10:00:00.000Z' },
      responses: { 202: { description: 'How many were sent again.', schema: redeliveredSchema } },
    },
    handler: async (req, ctx) => ({ status: 202, body: await redeliverFailed(ctx.webhooks, req.company!, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/events',
    auth: 'required',
    scope: 'settings:read',
    query: eventsQuerySchema,
    doc: {
      operationId: 'listEvents',
      summary: 'Read the event feed',
      description: 'Every event of the merchant in order, after a cursor: the catch-up for a receiver that was down.',
      tag: TAG,
      responses: { 200: { description: 'A page of events.', schema: eventPageSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: exactJson(await listEvents(ctx.webhooks, req.company!, req.query)) }),
  }),
];
