// Reports booked at about the same moment share one statement (src/payments/batch.ts): all of them or none, so a
// stale one sends each alone (the stale one then the general way), a repeated output is booked once, and what they
// write is what the same reports one at a time write: transfers, journals, balances, invoices, events in order.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TransferReport } from '../../src/chains/adapter.ts';
import { Money } from '../../src/domain/money.ts';
import { verifyLedger } from '../../src/features.ts';
import { MAX_BOOKINGS_PER_STATEMENT, statementsOf } from '../../src/payments/batch.ts';
import type { PlannedBooking } from '../../src/payments/booking.ts';
import type { Payee } from '../../src/payments/payees.ts';
import { DATABASES } from '../support/databases.ts';
import { watchStatements } from '../support/statements.ts';
import { proceeded } from './support.ts';
import { useServer, type TestServer } from '../support/server.ts';

const BOOKING = 'new_transfer AS (INSERT INTO "ChainTransfer"';

describe('statementsOf', () => {
  const planned = (mode: string, companyId: string, asset: string, invoiceId: string, txHash: string = randomUUID()) =>
    ({ mode, companyId, asset, invoiceId, transfer: { report: { network: 'tron', txHash, outputIndex: 0 } } }) as unknown as PlannedBooking;

  it('one statement per mode, company and asset, each invoice and output once, at most the cap', () => {
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((id) => planned('test', 'm1', 'trc20usdt', id));
    const otherCompany = planned('test', 'm2', 'trc20usdt', 'f');
    const otherMode = planned('live', 'm1', 'trc20usdt', 'g');
    const otherAsset = planned('test', 'm1', 'trx', 'h');
    const sameInvoice = planned('test', 'm1', 'trc20usdt', 'a');
    const sameOutput = planned('test', 'm1', 'trc20usdt', 'i', b!.transfer.report.txHash);
    const statements = statementsOf([a!, otherCompany, b!, otherMode, sameInvoice, c!, otherAsset, sameOutput, d!, e!]);
    expect(statements).toEqual([[a, b, c, d, e], [otherCompany], [otherMode], [sameInvoice, sameOutput], [otherAsset]]);

    const many = Array.from({ length: MAX_BOOKINGS_PER_STATEMENT + 3 }, (_, i) => planned('test', 'm1', 'trc20usdt', `x${i}`));
    expect(statementsOf(many).map((s) => s.length)).toEqual([MAX_BOOKINGS_PER_STATEMENT, 3]);
  });
});

const reportTo = (payee: Payee, amount: string, txHash = `batch${randomUUID().replaceAll('-', '')}`): TransferReport => ({
  network: 'tron', asset: 'trc20usdt', txHash, outputIndex: 0, from: null, to: payee.address, tag: payee.tag, amount: new Money(amount), confirmations: 19, blockNumber: null, dropped: false,
});

/** The booking statements `fn` sends, each as the number of transfers it wrote. */
async function bookings<T>(server: TestServer, fn: () => Promise<T>): Promise<{ result: T; written: number[] }> {
  const written: number[] = [];
  const result = await watchStatements(server, (text) => (text.includes(BOOKING) ? (rows) => void written.push(rows.length) : undefined), fn);
  return { result, written };
}

/** What the reports to these invoices wrote, comparable between merchants (ids left out, events in seq order). */
async function outcome(server: TestServer, ids: string[]) {
  const db = server.app.db.prisma;
  return Promise.all(
    ids.map(async (id) => {
      const invoice = await db.invoice.findUniqueOrThrow({ where: { id } });
      const transfers = await db.chainTransfer.findMany({ where: { invoiceId: id } });
      const entries = await db.ledgerEntry.findMany({ where: { invoiceId: id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
      const events = await db.event.findMany({ where: { subjectId: id }, orderBy: { seq: 'asc' } });
      return {
        status: invoice.status,
        paidAmount: invoice.paidAmount.toFixed(),
        feeCharged: invoice.feeCharged?.toFixed() ?? null,
        transfers: transfers.map((t) => [t.state, t.role, t.amount.toFixed()]),
        entries: entries.map((e) => [e.kind, e.account, e.amount.toFixed()]),
        events: events.map((e) => e.type),
      };
    }),
  );
}

describe.each(DATABASES)('bookings of one moment on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind);

  it('are one statement, writing what the same reports one at a time write, events in report order', async () => {
    const { payments } = server.app.services;
    const pay = async (together: boolean) => {
      const m = await server.merchant();
      const invoices = [];
      for (let i = 0; i < 5; i++) invoices.push(await proceeded(server, m));
      const payees = await payments.findPayees('test', invoices.map((i) => ({ invoiceId: i.id })));
      const reports = invoices.map((inv, i) => reportTo(payees[i]!, inv.amount));
      const { written } = await bookings(server, async () => {
        if (together) return Promise.all(reports.map((r, i) => payments.report(r, 'test', payees[i])));
        for (const [i, r] of reports.entries()) await payments.report(r, 'test', payees[i]);
      });
      return { m, ids: invoices.map((i) => i.id), written };
    };
    const alone = await pay(false);
    const together = await pay(true);
    expect(alone.written).toEqual([1, 1, 1, 1, 1]);
    expect(together.written).toEqual([5]);
    expect(await outcome(server, together.ids)).toEqual(await outcome(server, alone.ids));
    expect((await outcome(server, together.ids)).map((o) => o.status)).toEqual(['done', 'done', 'done', 'done', 'done']);
    // Events took their sequence in the order of the reports.
    const events = await server.app.db.prisma.event.findMany({ where: { subjectId: { in: together.ids }, type: 'invoice.done' }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.subjectId)).toEqual(together.ids);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('a stale report makes the statement write nothing: each is booked alone, the stale one the general way', async () => {
    const { payments } = server.app.services;
    const m = await server.merchant();
    const invoices = [await proceeded(server, m), await proceeded(server, m), await proceeded(server, m)];
    const payees = await payments.findPayees('test', invoices.map((i) => ({ invoiceId: i.id })));
    // After the lookup the second invoice receives 50: its row and totals are no longer what was read.
    const partial = await server.request('POST', '/api/sandbox/transfers', { token: m.publicToken, json: { invoiceId: invoices[1]!.id, amount: '50', confirmations: 19 } });
    expect(partial.status, partial.text).toBe(201);
    const reports = invoices.map((inv, i) => reportTo(payees[i]!, i === 1 ? new Money(inv.amount).minus(50).toFixed() : inv.amount));
    const { result, written } = await bookings(server, () => Promise.all(reports.map((r, i) => payments.report(r, 'test', payees[i]))));
    // Together: nothing; then alone: the first and the third, not the stale second.
    expect(written[0]).toBe(0);
    expect(written.slice(1).sort()).toEqual([0, 1, 1]);
    expect(result.map((t) => t.state)).toEqual(['confirmed', 'confirmed', 'confirmed']);
    expect((await outcome(server, invoices.map((i) => i.id))).map((o) => [o.status, o.transfers.length])).toEqual([['done', 1], ['done', 2], ['done', 1]]);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });

  it('one output reported twice at once is booked once; both answers are that transfer', async () => {
    const { payments } = server.app.services;
    const m = await server.merchant();
    const invoice = await proceeded(server, m);
    const [payee] = await payments.findPayees('test', [{ invoiceId: invoice.id }]);
    const report = reportTo(payee!, invoice.amount);
    const [a, b] = await Promise.all([payments.report(report, 'test', payee), payments.report({ ...report }, 'test', payee)]);
    expect(a.id).toBe(b.id);
    const [o] = await outcome(server, [invoice.id]);
    expect(o).toMatchObject({ status: 'done', transfers: [['confirmed', 'payment', new Money(invoice.amount).toFixed()]] });
    expect(o!.entries.filter(([kind]) => kind === 'payment')).toHaveLength(2);
    expect((await verifyLedger(server.app.db.prisma)).problems).toEqual([]);
  });
});
