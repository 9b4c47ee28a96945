// A tiny Express shop paid through Payrail with @payrail/sdk: POST /checkout creates the order's invoice (its
// orderId makes a retried checkout answer the same invoice) and answers where to pay; POST /webhooks verifies
// Payrail's webhooks on the raw body and marks the order paid. Run against a Payrail server (sandbox in test mode).
import express from 'express';
import { createPayrailClient, webhookMiddleware, type WebhookRequest } from '../../sdk/src/index.ts';

export interface ShopOptions {
  /** The Payrail server, e.g. http://localhost:4000. */
  payrailUrl: string;
  /** The merchant's public token (pk_test_… in the sandbox). */
  publicToken: string;
  /** The merchant's secret key (sk_test_…) or its whsec_ form: verifies webhooks. */
  secretKey: string;
}

export type OrderState = 'awaiting_payment' | 'paid' | 'failed';

export function createShop(options: ShopOptions) {
  const payrail = createPayrailClient({ baseUrl: options.payrailUrl, token: options.publicToken });
  const orders = new Map<string, { state: OrderState; invoiceId: string }>();
  const app = express();

  // Webhooks first, on the raw body: no JSON parser may read it before the signature is checked.
  app.post('/webhooks', webhookMiddleware(options.secretKey), (req, res) => {
    const event = (req as WebhookRequest).payrailEvent!;
    if (event.kind === 'invoice' && event.body.orderId) {
      const order = orders.get(event.body.orderId);
      if (order && event.body.status === 'done') order.state = 'paid';
      if (order && (event.body.status === 'closed' || event.body.status === 'refunded')) order.state = 'failed';
    }
    res.sendStatus(204);
  });

  app.post('/checkout', express.json(), async (req, res) => {
    const { orderId, total } = req.body as { orderId: string; total: string };
    const { data, error } = await payrail.POST('/api/invoices/v1/regular', {
      body: { invoiceCurrency: 'usd', items: [{ name: `Order ${orderId}`, price: total }], orderId, metadata: { source: 'example-shop' } },
    });
    if (error) return void res.status(502).json(error);
    orders.set(orderId, { state: 'awaiting_payment', invoiceId: data.id });
    res.json({ invoiceId: data.id, payUrl: data.payUrl });
  });

  app.get('/orders/:id', (req, res) => {
    const order = orders.get(req.params.id);
    if (!order) return void res.sendStatus(404);
    res.json(order);
  });

  return app;
}
