// A page of invoices with their nested fields costs a constant number of SQL statements, whatever its size:
// relations ride on the page's query (Pothos' Prisma selections) and per-row fields batch through dataloader.
// Statements are counted at the database driver (pg for PostgreSQL, PGlite for the embedded database).
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { useServer } from '../support/server.ts';

const PAID_STEPS = [['INVOICE_CREATED', true], ['INVOICE_PENDING', true], ['INVOICE_PROCESSING', true], ['INVOICE_WRONG', true]];

const PAGE = `query($first: Int!) {
  invoices(first: $first) {
    totalCount
    nodes {
      id status createdAt payUrl clientEmail expiredAt redirectURL
      company { id name logoUrl assets { asset isAllowed } }
      content { invoiceCurrency isMerchantPaysFee items { name price } }
      total { amount currency }
      address { id address tag asset }
      paymentDetails { rate amount paidAmount amountMoney { amount currency } }
      transactions { id txHash amount status confirmations kind address { address } }
      refund { id txHash amount }
      webhookDeliveries { id eventType status payload attempts attemptLog { attempt statusCode } }
    }
  }
}`;

/** Counts the statements sent to the database while `fn` runs. */
async function statementsDuring(fn: () => Promise<unknown>): Promise<number> {
  let count = 0;
  const patched = [
    [pg.Client.prototype, 'query'],
    [PGlite.prototype, 'query'],
  ] as const;
  const originals = patched.map(([proto, name]) => proto[name]);
  patched.forEach(([proto, name], i) => {
    (proto as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      count++;
      return (originals[i] as (...a: unknown[]) => unknown).apply(this, args);
    };
  });
  try {
    await fn();
  } finally {
    patched.forEach(([proto, name], i) => ((proto as unknown as Record<string, unknown>)[name] = originals[i]));
  }
  return count;
}

/**
 * Waits until the server sends no statement for a while: after the receiver got the last webhooks, the worker still
 * records their attempts and claims again, which a page counted meanwhile would take for its own.
 */
async function quiet(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await statementsDuring(() => new Promise((resolve) => setTimeout(resolve, 300)))) === 0) return;
  }
  throw new Error('the server never went quiet');
}

describe.each(DATABASES)('statements per invoice page on %s', (kind) => {
  // Background work stays out of the count: no polls or sweeps while it is taken.
  const server = useServer(kind, {
    WEBHOOK_ALLOW_PRIVATE: '1',
    EVENT_POLL_MS: '60000',
    WEBHOOK_POLL_MS: '60000',
    SWEEP_INTERVAL_MS: '3600000',
    REFUND_RETRY_INTERVAL_MS: '3600000',
    WITHDRAWAL_SEND_INTERVAL_MS: '3600000',
    AUTOSWAP_INTERVAL_MS: '3600000',
    // The e-mail planner and sender poll every 5 s by default: a planner step is 8 statements.
    EMAIL_POLL_MS: '600000',
  });
  let receiver: Receiver;
  let token = '';
  beforeAll(async () => {
    const m = await server.merchant();
    token = m.publicToken;
    receiver = await startReceiver(() => m.secretKey);
    await server.request('PUT', '/api/company/settings/webhook-url', { token, json: { webHookUrl: receiver.url } });
    // 100 invoices; every fifth filled, paid (seen and confirmed) and so with address, quote, transfers, deliveries.
    for (let i = 0; i < 100; i++) {
      const id = (await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: `x${i}`, price: 10 }, { name: 'y', price: 1 }] } })).body.id as string;
      if (i % 5 !== 0) continue;
      await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trc20usdt' } });
      const seen = await server.request('POST', '/api/sandbox/transfers', { token, json: { invoiceId: id, amount: '5' } });
      await server.request('POST', `/api/sandbox/transfers/${seen.body.id}/confirm`, { token, json: {} });
    }
    await receiver.waitFor((got) => got.length >= 100 + 20 * 3, 60_000);
  }, 120_000);
  afterAll(() => receiver?.close());

  it('a page of 100 costs the same statements as a page of 10, and few', async () => {
    const run = async (first: number) => {
      let body: any;
      const statements = await statementsDuring(async () => {
        body = (await server.graphql(PAGE, { first }, token)).body;
      });
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      return { statements, nodes: body.data.invoices.nodes as any[] };
    };
    await quiet();
    await run(10); // warm: the token cache, prepared plans
    const small = await run(10);
    const large = await run(100);
    expect(small.nodes).toHaveLength(10);
    expect(large.nodes).toHaveLength(100);
    // The page really holds nested data: transfers, deliveries with their payload and attempts.
    const paid = large.nodes.filter((n) => n.transactions.length > 0);
    expect(paid).toHaveLength(20);
    expect(paid.map((n) => n.webhookDeliveries.map((d: any) => [d.eventType, d.attemptLog.length > 0]))).toEqual(paid.map(() => PAID_STEPS));
    expect(JSON.parse(paid[0].webhookDeliveries[0].payload)).toMatchObject({ invoiceId: paid[0].id, status: 'created' });
    expect(large.nodes.every((n) => n.webhookDeliveries.length >= 1 && n.company.name)).toBe(true);
    console.info(`[statements ${kind}] page of 10: ${small.statements}, page of 100: ${large.statements}`);
    expect(large.statements).toBe(small.statements);
    expect(large.statements).toBeLessThanOrEqual(15);
  });

  it('an invoice’s deliveries are its merchant’s only: null for anyone else', async () => {
    const list = (await server.graphql('{ invoices(first: 1) { nodes { id } } }', {}, token)).body.data.invoices.nodes;
    const id = list[0].id as string;
    const query = 'query($id: ID!) { invoice(id: $id) { id webhookDeliveries { id } } }';
    expect((await server.graphql(query, { id }, token)).body.data.invoice.webhookDeliveries.length).toBeGreaterThan(0);
    expect((await server.graphql(query, { id })).body.data.invoice).toEqual({ id, webhookDeliveries: null });
    // With a token, the invoice read is the caller's own only (docs/modes.md): another merchant's is not found.
    const other = await server.merchant();
    expect((await server.graphql(query, { id }, other.publicToken)).body.data.invoice).toBeNull();
  });
});
