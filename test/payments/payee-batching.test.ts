// Single payee lookups made at about the same moment share one statement (payeeBatcher, src/payments/payees.ts):
// under load each sandbox payment no longer pays a lookup of its own. Each caller still gets its own key's payee,
// modes never share a batch, nothing is cached, and a failed batch fails each of its callers.
import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/features.ts';
import type { Mode } from '../../src/domain/modes.ts';
import { payeeBatcher, type Payee, type PayeeKey } from '../../src/payments/payees.ts';
import { DATABASES } from '../support/databases.ts';
import { watchStatements } from '../support/statements.ts';
import { proceeded } from './support.ts';
import { useServer, type TestMerchant } from '../support/server.ts';

describe('payeeBatcher', () => {
  const recording = () => {
    const calls: { mode: Mode; keys: PayeeKey[] }[] = [];
    const find = async (mode: Mode, keys: readonly PayeeKey[]) => {
      calls.push({ mode, keys: [...keys] });
      return keys.map((key) => ('invoiceId' in key ? ({ invoiceId: key.invoiceId, mode } as unknown as Payee) : null));
    };
    return { calls, batched: payeeBatcher(find) };
  };

  it('lookups of one moment go out as one, each answered with its own key', async () => {
    const { calls, batched } = recording();
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const answers = await Promise.all(ids.map((invoiceId) => batched('test', { invoiceId })));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.keys).toEqual(ids.map((invoiceId) => ({ invoiceId })));
    expect(answers.map((p) => p?.invoiceId)).toEqual(ids);
  });

  it('each mode has its own batch; nothing is cached between moments', async () => {
    const { calls, batched } = recording();
    await Promise.all([batched('test', { invoiceId: 'a' }), batched('live', { invoiceId: 'a' }), batched('test', { invoiceId: 'b' })]);
    expect(calls.map((c) => [c.mode, c.keys.length]).sort()).toEqual([['live', 1], ['test', 2]]);
    await batched('test', { invoiceId: 'a' });
    await batched('test', { invoiceId: 'a' });
    expect(calls).toHaveLength(4);
  });

  it('a failed lookup fails every caller of its batch, and the next batch runs again', async () => {
    let fail = true;
    const batched = payeeBatcher(async (_mode, keys) => {
      if (fail) throw new Error('connection lost');
      return keys.map(() => null);
    });
    const settled = await Promise.allSettled([batched('test', { invoiceId: 'a' }), batched('test', { invoiceId: 'b' })]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batched('test', { invoiceId: 'a' })).resolves.toBeNull();
  });
});

describe.each(DATABASES)('batched payee lookups on %s', (kind) => {
  const server = useServer(kind);

  it('concurrent lookups through the service share one statement and each gets its own payee', async () => {
    const [a, b] = [await server.merchant(), await server.merchant()];
    const invoices = [await proceeded(server, a), await proceeded(server, b), await proceeded(server, a)];
    let lookups = 0;
    const count = (text: string) => void (text.includes('FROM "PaymentAddress" a') && lookups++);
    const { payments } = server.app.services;
    const found = await watchStatements(server, count, () =>
      Promise.all([...invoices.map(({ id }) => ({ invoiceId: id })), { invoiceId: 'UnknownInvoice000000000' }].map((key) => payments.findPayees('test', [key]))),
    );
    expect(lookups).toBe(1);
    expect(found.map(([p]) => p?.invoiceId ?? null)).toEqual([...invoices.map(({ id }) => id), null]);
    expect(found.map(([p]) => p?.companyId ?? null)).toEqual([a.tenantId, b.tenantId, a.tenantId, null]);
    // A live-mode lookup of a test invoice finds nothing, in a batch of its own.
    expect(await payments.findPayees('live', [{ invoiceId: invoices[0]!.id }])).toEqual([null]);
  });

  it('concurrent sandbox payments of two merchants: each paid once, foreign and unknown invoices refused', async () => {
    const [a, b] = [await server.merchant(), await server.merchant()];
    const ofA = await Promise.all(Array.from({ length: 6 }, () => proceeded(server, a)));
    const ofB = await Promise.all(Array.from({ length: 6 }, () => proceeded(server, b)));
    const pay = (m: TestMerchant, invoice: { id: string; amount: string }) =>
      server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: invoice.id, amount: invoice.amount, confirmations: 19 } });
    const answers = await Promise.all([
      ...ofA.map((invoice) => pay(a, invoice)),
      ...ofB.map((invoice) => pay(b, invoice)),
      pay(a, ofB[0]!), // another merchant's invoice
      pay(b, { id: 'UnknownInvoice000000000', amount: '1' }),
    ]);
    expect(answers.slice(0, 12).map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(answers.slice(12).map((r) => r.status)).toEqual([404, 404]);
    for (const invoice of [...ofA, ...ofB]) {
      const read = await server.request('GET', `/api/invoices/v1/regular/${invoice.id}`);
      expect(read.body.status).toBe('done');
    }
    // One transfer per invoice, each of its own merchant.
    const transfers = await server.app.db.prisma.chainTransfer.findMany({ where: { invoiceId: { in: [...ofA, ...ofB].map((i) => i.id) } }, select: { invoiceId: true, companyId: true } });
    expect(transfers).toHaveLength(12);
    for (const t of transfers) expect(t.companyId).toBe(ofA.some((i) => i.id === t.invoiceId) ? a.tenantId : b.tenantId);
    expect((await verifyLedger(server.app.db.prisma)).ok).toBe(true);
  });
});
