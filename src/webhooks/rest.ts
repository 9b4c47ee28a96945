import type { Route } from '../http/router.ts';
import { presentDelivery } from './presenter.ts';
import {
  getDelivery,
  getWebhookUrl,
  listDeliveries,
  listEvents,
  redeliverEvent,
  redeliverFailed,
  sendTestWebhook,
  setWebhookUrl,
  type WebhookDeps,
} from './service.ts';

export interface WebhookRestContext {
  webhooks: WebhookDeps;
}

export const webhookRoutes: Route<WebhookRestContext>[] = [
  {
    method: 'PUT',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await setWebhookUrl(ctx.webhooks, req.company!, req.body) }),
  },
  {
    method: 'GET',
    path: '/api/company/settings/webhook-url',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await getWebhookUrl(ctx.webhooks, req.company!) }),
  },
  {
    method: 'POST',
    path: '/api/company/settings/webhook-url/test',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await sendTestWebhook(ctx.webhooks, req.company!) }),
  },
  {
    method: 'GET',
    path: '/api/company/webhooks/deliveries',
    auth: 'required',
    handler: async (req, ctx) => {
      const page = await listDeliveries(ctx.webhooks, req.company!, Object.fromEntries(req.query));
      return { status: 200, body: { deliveries: page.deliveries.map(presentDelivery), nextCursor: page.nextCursor } };
    },
  },
  {
    method: 'GET',
    path: '/api/company/webhooks/deliveries/:id',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: presentDelivery(await getDelivery(ctx.webhooks, req.company!, req.params['id']!)) }),
  },
  {
    method: 'POST',
    path: '/api/company/webhooks/events/:eventId/redeliver',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 202, body: presentDelivery(await redeliverEvent(ctx.webhooks, req.company!, req.params['eventId']!)) }),
  },
  {
    method: 'POST',
    path: '/api/company/webhooks/redeliver-failed',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 202, body: await redeliverFailed(ctx.webhooks, req.company!, req.body) }),
  },
  {
    method: 'GET',
    path: '/api/company/events',
    auth: 'required',
    handler: async (req, ctx) => ({ status: 200, body: await listEvents(ctx.webhooks, req.company!, Object.fromEntries(req.query)) }),
  },
];
