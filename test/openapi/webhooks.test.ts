// The webhook contract (OpenAPI `webhooks`): every body a feature's event builder writes matches its published
// schema, and the check the test receiver runs on every webhook the suite receives (test/support/contract.ts)
// refuses what breaks it: an unknown field, a wrong message, a missing signature header, a body of no kind.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jsonText } from '../../src/core/json.ts';
import { apiReference } from '../../src/features.ts';
import { depositEvent } from '../../src/deposits/processor.ts';
import { invoiceStatusEvent, INVOICE_STATUSES } from '../../src/invoices/status.ts';
import { withdrawalEvent } from '../../src/withdrawals/model.ts';
import { webhookViolation } from '../support/contract.ts';

const headersFor = (body: string) => ({
  'content-type': 'application/json',
  signature: createHmac('sha512', 'sk_test_x').update(body).digest('hex'),
  'webhook-id': 'evt_1',
  'webhook-timestamp': '1790000000',
  'webhook-signature': 'v1,abc=',
  'payrail-mode': 'test',
  'user-agent': 'Payrail-Webhooks/1',
});
const check = (payload: unknown) => {
  // As the outbox writes a payload (exact numbers: a withdrawal amount is a JSON number with every digit).
  const body = jsonText(payload);
  return webhookViolation(body, headersFor(body));
};

describe('the OpenAPI webhooks', () => {
  it('publishes every kind the features send, with the signature headers; autoswap included', () => {
    const doc = apiReference().document() as unknown as { webhooks: Record<string, { post: { parameters: { name: string; required: boolean }[] } }> };
    expect(Object.keys(doc.webhooks).sort()).toEqual(['autoswap', 'deposit', 'invoice', 'test', 'withdrawal']);
    for (const hook of Object.values(doc.webhooks)) {
      expect(hook.post.parameters.filter((p) => p.required).map((p) => p.name)).toEqual(
        expect.arrayContaining(['signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'payrail-mode']),
      );
    }
  });

  it("matches every event builder's payload", () => {
    for (const status of INVOICE_STATUSES) {
      expect(check(invoiceStatusEvent('c', 'inv1', status).payload)).toBeNull();
      expect(check(invoiceStatusEvent('c', 'inv1', status, { orderId: 'o-1', metadata: { a: 'b' }, settlement: 'accepted_short' }).payload)).toBeNull();
    }
    const w = { uid: 'u1', companyId: 'c', asset: 'trc20usdt', amount: '10.5' as never, fee: '1' as never, toAddress: 'TXYZ' };
    for (const status of ['processing', 'done', 'rejected'] as const) expect(check(withdrawalEvent(w, status, 'ab').payload)).toBeNull();
    const transfer = { id: 't1', companyId: 'c', asset: 'trc20usdt', amount: '25' as never, txHash: 'ab' } as never;
    const address = { address: 'TXYZ', staticAddress: { id: 's1', internalUserId: 'user-1', email: 'u@example.com' } } as never;
    for (const status of ['processing', 'done', 'failed', 'frozen'] as const) expect(check(depositEvent(transfer, address, status).payload)).toBeNull();
    expect(check({ type: 'test', message: 'Test webhook from Payrail', eventId: 'test_1', sentAt: '2026-11-26T12:00:00.000Z' })).toBeNull();
  });

  it('refuses what breaks the contract, saying what', () => {
    const paid = { invoiceId: 'inv1', status: 'done', message: 'Invoice paid' };
    expect(check({ ...paid, surprise: 1 })).toMatch(/matches 0 of the published webhooks/);
    expect(check({ ...paid, message: 'Paid!' })).toMatch(/invoice: .*message/);
    expect(check({ ...paid, settlement: 'maybe' })).toMatch(/settlement/);
    expect(check({ ...paid, metadata: { k: 1 } })).toMatch(/metadata/);
    expect(check({ type: 'withdrawal', status: 'done' })).toMatch(/matches 0/);
    expect(check({ type: 'autoswap.done' })).toMatch(/matches 0/);
    const body = JSON.stringify(paid);
    const { signature: _dropped, ...unsigned } = headersFor(body);
    expect(webhookViolation(body, unsigned)).toBe('the invoice webhook lacks the documented header signature');
    expect(webhookViolation(body, { ...headersFor(body), 'payrail-mode': 'staging' })).toMatch(/payrail-mode/);
    expect(webhookViolation('not json', headersFor('not json'))).toMatch(/not JSON/);
  });
});
