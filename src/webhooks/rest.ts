import type { Services } from '../core/feature.ts';
import { JsonText, jsonText } from '../core/json.ts';
import { route, type Route } from '../http/router.ts';
import { presentDelivery } from './presenter.ts';
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

export const webhookRoutes: Route<Services>[] = [
  route({
    method: 'PUT',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    body: webhookUrlSchema,
    handler: async (req, ctx) => ({ status: 200, body: await setWebhookUrl(ctx.webhooks, req.company!, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await getWebhookUrl(ctx.webhooks, req.company!) }),
  }),
  route({
    method: 'POST',
    path: '/api/company/settings/webhook-url/test',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await sendTestWebhook(ctx.webhooks, req.company!) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/webhooks/deliveries',
    auth: 'required',
    query: deliveryListSchema,
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
    handler: async (req, ctx) => {
      const delivery = await getDelivery(ctx.webhooks, req.company!, req.params['id']!);
      return { status: 200, body: exactJson(presentDelivery(delivery, await exactPayloads(ctx.db, [delivery.eventId]))) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/company/webhooks/events/:eventId/redeliver',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 202, body: presentDelivery(await redeliverEvent(ctx.webhooks, req.company!, req.params['eventId']!)) }),
  }),
  route({
    method: 'POST',
    path: '/api/company/webhooks/redeliver-failed',
    auth: 'required',
    body: redeliverFailedSchema,
    handler: async (req, ctx) => ({ status: 202, body: await redeliverFailed(ctx.webhooks, req.company!, req.body) }),
  }),
  route({
    method: 'GET',
    path: '/api/company/events',
    auth: 'required',
    query: eventsQuerySchema,
    handler: async (req, ctx) => ({ status: 200, body: exactJson(await listEvents(ctx.webhooks, req.company!, req.query)) }),
  }),
];
