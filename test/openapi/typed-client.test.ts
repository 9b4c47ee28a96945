// A merchant's integration as the document promises it: a client generated from openapi.json (openapi-typescript
// types in generated/openapi.ts, `npm run codegen`) driving openapi-fetch through a whole flow: create an invoice
// (and replay it), the client fills it, the sandbox pays it, the webhook URL is set and the webhooks arrive, then a
// withdrawal, read back; errors come typed as the Error schema. Every answer is also checked against the document.
import createClient, { type Middleware } from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import type { paths } from '../../generated/openapi.ts';
import { checkApiExchange } from '../support/contract.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { startReceiver } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** The contract check on every answer the typed client gets. */
const contractCheck: Middleware = {
  async onResponse({ request, response }) {
    const url = new URL(request.url);
    const text = await response.clone().text();
    checkApiExchange({ method: request.method, path: `${url.pathname}${url.search}`, status: response.status, contentType: response.headers.get('content-type'), text });
    return undefined;
  },
};

describe.each(DATABASES)('a client generated from the OpenAPI document, on %s', (kind) => {
  const server = useServer(kind, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '100' });

  it('creates, fills, pays and reads an invoice, sets the webhook URL, withdraws and reads the withdrawal', { timeout: 60_000 }, async () => {
    const merchant = await server.merchant();
    const receiver = await startReceiver(() => merchant.secretKey);
    const api = createClient<paths>({ baseUrl: server.url, headers: { authorization: `Bearer ${merchant.publicToken}` } });
    const anonymous = createClient<paths>({ baseUrl: server.url });
    api.use(contractCheck);
    anonymous.use(contractCheck);
    try {
      const webhook = await api.PUT('/api/company/settings/webhook-url', { body: { webHookUrl: receiver.url } });
      expect(webhook.data?.webHookUrl).toBe(receiver.url);

      // Prices as a JSON number and as a string, as the document allows; answered as exact strings.
      const body = { invoiceCurrency: 'usd' as const, items: [{ name: 'Tea', price: 12.5 }, { name: 'Cake', price: '2.5' }] };
      const headers = { 'Idempotency-Key': `typed-${kind}-${merchant.companyId}` };
      const created = await api.POST('/api/invoices/v1/regular', { body, params: { header: headers } });
      expect(created.response.status).toBe(201);
      const invoice = created.data!;
      expect(invoice.status).toBe('created');
      expect(invoice.invoiceContent.items.map((i) => i.price)).toEqual(['12.50', '2.50']);
      const replay = await api.POST('/api/invoices/v1/regular', { body, params: { header: headers } });
      expect(replay.response.status).toBe(200);
      expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.data?.id).toBe(invoice.id);

      // The client fills it without a token, and pays the amount due on the sandbox chain.
      const filled = await anonymous.POST('/api/invoices/v1/regular/{id}/proceed', {
        params: { path: { id: invoice.id } },
        body: { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' },
      });
      expect(filled.data?.status).toBe('pending');
      const due = filled.data!.paymentDetails!.amount;
      const paid = await api.POST('/api/sandbox/transfers', { body: { invoiceId: invoice.id, amount: due, confirmations: 19 } });
      expect(paid.response.status).toBe(201);
      expect(paid.data?.state).toBe('confirmed');
      const read = await anonymous.GET('/api/invoices/v1/regular/{id}', { params: { path: { id: invoice.id } } });
      expect(read.data?.status).toBe('done');
      expect(read.data?.invoiceTransactions?.[0]?.amount).toBe(due);
      await receiver.waitFor((got) => got.some((r) => r.json['invoiceId'] === invoice.id && r.json['status'] === 'done'));
      const deliveries = await api.GET('/api/company/webhooks/deliveries', { params: { query: { limit: 10 } } });
      expect(deliveries.data?.deliveries.map((d) => d.eventType)).toContain('invoice.done');

      // A withdrawal of part of the balance, then read back.
      const balances = await api.GET('/api/company/balances');
      const before = balances.data!.balances.find((b) => b.asset === 'trc20usdt')!;
      expect(Number(before.available)).toBeGreaterThanOrEqual(15);
      const withdrawn = await api.POST('/api/transactions/withdraw', { body: { items: [{ amount: 5, tag: '', to: TRON, asset: 'trc20usdt' }] } });
      const [result] = withdrawn.data!;
      expect(result).toMatchObject({ success: true, message: 'Withdrawal accepted and processing' });
      const withdrawal = await api.GET('/api/transactions/withdrawals/{uid}', { params: { path: { uid: result!.uid } } });
      expect(withdrawal.data).toMatchObject({ uid: result!.uid, asset: 'trc20usdt', amount: '5', fee: '1', total: '6', to: TRON, origin: 'api' });
      await eventually(
        () => api.GET('/api/transactions/withdrawals', { params: { query: { status: 'processing' } } }),
        (page) => page.data?.withdrawals.some((w) => w.uid === result!.uid && w.txHash !== null) === true,
      );

      // Errors come as the Error schema, typed.
      const missing = await anonymous.GET('/api/invoices/v1/regular/{id}', { params: { path: { id: 'NoSuchInvoice1234567' } } });
      expect(missing.response.status).toBe(404);
      expect(missing.error?.error.code).toBe('NOT_FOUND');
      const invalid = await api.POST('/api/transactions/withdraw', { body: { items: [] } });
      expect(invalid.response.status).toBe(422);
      expect(invalid.error?.error.details).toEqual([{ path: 'items', message: 'must hold at least one item' }]);
    } finally {
      await receiver.close();
    }
  });
});
