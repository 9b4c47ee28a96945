// @payrail/sdk (sdk/): its generated types are openapi.json's; verifyWebhook checks both signatures and refuses stale
// timestamps; the example shop (examples/shop, Express + the SDK's middleware and typed client) is paid in the
// sandbox end to end against the running server; followInvoice follows the invoice live until it completes.
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createShop } from '../../examples/shop/shop.ts';
import { createPayrailClient, followInvoice, verifyWebhook, WebhookVerificationError, type LiveInvoice } from '../../sdk/src/index.ts';
import { DATABASES } from '../support/databases.ts';
import { whsec } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

const root = path.resolve(import.meta.dirname, '../..');
const SECRET = 'sk_test_0123456789abcdef';

function signed(body: string, at = Math.floor(Date.now() / 1000)) {
  return {
    signature: createHmac('sha512', SECRET).update(body).digest('hex'),
    'webhook-id': 'evt_1',
    'webhook-timestamp': String(at),
    'webhook-signature': `v1,${createHmac('sha256', Buffer.from(SECRET)).update(`evt_1.${at}.${body}`).digest('base64')}`,
  };
}

describe('@payrail/sdk', () => {
  it('its generated types are exactly what openapi-typescript makes of openapi.json (npm run sdk:generate)', () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-types-')), 'openapi.ts');
    execFileSync(path.join(root, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '--output', out], { cwd: root, stdio: 'pipe' });
    expect(fs.readFileSync(path.join(root, 'sdk/src/generated/openapi.ts'), 'utf8'), 'sdk types drifted: npm run sdk:generate').toBe(fs.readFileSync(out, 'utf8'));
  });

  it('verifyWebhook: the spec signature and Standard Webhooks (sk_ and whsec_ forms), typed; tampering and stale or future timestamps refused', () => {
    const body = JSON.stringify({ invoiceId: 'inv1', status: 'done', message: 'Invoice paid', orderId: 'o-1' });
    const headers = signed(body);
    const event = verifyWebhook(body, headers, SECRET);
    expect(event).toEqual({ kind: 'invoice', body: JSON.parse(body) });
    if (event.kind === 'invoice') expect(event.body.orderId).toBe('o-1');
    expect(verifyWebhook(Buffer.from(body), headers, whsec(SECRET)).kind).toBe('invoice');
    // The spec's signature alone (a receiver without the Standard Webhooks headers).
    expect(verifyWebhook(body, { signature: headers.signature }, SECRET).kind).toBe('invoice');
    expect(() => verifyWebhook(body, { signature: headers.signature }, 'sk_test_other')).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body.replace('done', 'wrong'), headers, SECRET)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body.replace('done', 'wrong'), headers, SECRET, { scheme: 'spec' })).toThrow(WebhookVerificationError);
    const stale = signed(body, Math.floor(Date.now() / 1000) - 301);
    expect(() => verifyWebhook(body, stale, SECRET)).toThrow(/timestamp/);
    expect(() => verifyWebhook(body, signed(body, Math.floor(Date.now() / 1000) + 301), SECRET)).toThrow(WebhookVerificationError);
    expect(verifyWebhook(body, stale, SECRET, { toleranceSeconds: 600 }).kind).toBe('invoice');
    const withdrawal = JSON.stringify({ type: 'withdrawal', status: 'done', asset: 'usdt', dchain: 'trc20usdt', amount: 1, fee: '1', to: 'T', txHash: 'ab', uid: 'u' });
    expect(verifyWebhook(withdrawal, signed(withdrawal), SECRET).kind).toBe('withdrawal');
  });
});

describe.each(DATABASES)('the example shop on @payrail/sdk, paid in the sandbox, on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('checkout -> pay -> the verified done webhook marks the order paid; the typed client and followInvoice agree', { timeout: 60_000 }, async () => {
    const m = await server.merchant();
    const shopServer = http.createServer(createShop({ payrailUrl: server.url, publicToken: m.publicToken, secretKey: m.secretKey }));
    await new Promise<void>((resolve) => shopServer.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          shopServer.closeAllConnections();
          shopServer.close(() => resolve());
        }),
    );
    const shop = `http://127.0.0.1:${(shopServer.address() as AddressInfo).port}`;

    const payrail = createPayrailClient({ baseUrl: server.url, token: m.publicToken });
    const set = await payrail.PUT('/api/company/settings/webhook-url', { body: { webHookUrl: `${shop}/webhooks` } });
    expect(set.error).toBeUndefined();

    const checkoutOnce = async () =>
      (await (await fetch(`${shop}/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orderId: 'A-100', total: '25.00' }) })).json()) as {
        invoiceId: string;
        payUrl: string;
      };
    const checkout = await checkoutOnce();
    expect(checkout.payUrl).toBe(`https://checkout.example/pay/${checkout.invoiceId}`);
    // A retried checkout of the same order answers the same invoice.
    expect((await checkoutOnce()).invoiceId).toBe(checkout.invoiceId);

    const seen: LiveInvoice[] = [];
    const live = followInvoice({ url: `${server.url.replace(/^http/, 'ws')}/graphql`, invoiceId: checkout.invoiceId, onInvoice: (i) => seen.push(i), webSocketImpl: WebSocket });
    closers.push(async () => live.stop());
    // Subscribed (its first message, the invoice as it stands) before the client pays.
    for (const end = Date.now() + 15_000; seen.length === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));

    // The client pays (the checkout page's proceed, then the sandbox chain).
    const filled = await payrail.POST('/api/invoices/v1/regular/{id}/proceed', {
      params: { path: { id: checkout.invoiceId } },
      body: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' },
    });
    expect(filled.data?.status).toBe('pending');
    const due = filled.data!.paymentDetails!.amount;
    const paid = await payrail.POST('/api/sandbox/transfers', { body: { invoiceId: checkout.invoiceId, amount: due, confirmations: 19 } });
    expect(paid.error).toBeUndefined();

    const deadline = Date.now() + 20_000;
    let order: { state?: string } = {};
    while (Date.now() < deadline && order.state !== 'paid') {
      order = (await (await fetch(`${shop}/orders/A-100`)).json()) as { state?: string };
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(order).toMatchObject({ state: 'paid', invoiceId: checkout.invoiceId });
    const read = await payrail.GET('/api/invoices/v1/regular/{id}', { params: { path: { id: checkout.invoiceId } } });
    expect(read.data).toMatchObject({ status: 'done', orderId: 'A-100', metadata: { source: 'example-shop' } });

    await live.done;
    expect(seen.map((i) => i.status)).toEqual(['CREATED', 'PENDING', 'DONE']);
    expect(seen.at(-1)!.orderId).toBe('A-100');

    // A forged webhook is refused by the shop's middleware.
    const forged = await fetch(`${shop}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', signature: 'f'.repeat(128) },
      body: '{"invoiceId":"x","status":"done","message":"Invoice paid","orderId":"A-100"}',
    });
    expect(forged.status).toBe(400);
  });
});
