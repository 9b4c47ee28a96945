// `npm run ledger:verify -- --export <file>` (src/bin/ledger-verify.ts) on a ledger export downloaded from the real
// server (a child process): through the server's admin API while it holds the database, then on the database opened
// directly; the file as downloaded passes (exit 0), tampered files list their problems (exit 1), usage errors exit 2.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.ts';
import { databaseEntrySource, verifyLedgerExport } from '../../src/ledger/verify-export.ts';
import { DATABASES, type TestDatabase } from '../support/databases.ts';
import { databaseUrlOf, environment, someMerchant } from '../support/server-env.ts';
import { runCli, startServerProcess, stopAllChildren, stopServer, tempDir, type ServerProcess } from '../support/processes.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** The file's lines (CRLF), the header first. */
const linesOf = (text: string) => text.split('\r\n').slice(0, -1);
const textOf = (lines: string[]) => `${lines.join('\r\n')}\r\n`;
const cellsOf = (line: string) => line.split(',');
/** A line with one cell replaced. */
const withCell = (line: string, column: number, value: string) => cellsOf(line).map((c, i) => (i === column ? value : c)).join(',');

describe.each(DATABASES)('ledger:verify --export on %s', { timeout: 180_000 }, (kind) => {
  const databases: TestDatabase[] = [];
  let env: Record<string, string>;
  let server: ServerProcess | null = null;
  let dir: string;
  let file: string;
  let text: string;
  let range: { from: string; to: string };
  let companyId: string;

  const verify = (args: string[]) => runCli('src/bin/ledger-verify.ts', args, env);
  const write = (name: string, content: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, content);
    return p;
  };

  beforeAll(async () => {
    env = await environment(kind, databases);
    dir = tempDir('payrail-exports-');
    server = await startServerProcess({ ...env, WITHDRAWAL_SEND_INTERVAL_MS: '200' });
    const m = await someMerchant(server, env);
    companyId = m.companyId;
    const call = async (method: string, p: string, json?: unknown, token: string | undefined = m.publicToken) => {
      const res = await server!.request(method, p, { token, json });
      expect(res.status, `${method} ${p}: ${res.text}`).toBeLessThan(300);
      return res.body;
    };
    range = { from: new Date(Date.now() - 1_000).toISOString(), to: '9999-01-01T00:00:00.000Z' };
    for (const amount of ['101', '60']) {
      const invoice = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] });
      await call('POST', `/api/invoices/v1/regular/${invoice.id}/proceed`, { clientEmail: 'client@example.com', paymentCurrency: 'trc20usdt' }, undefined);
      await call('POST', '/api/sandbox/transfers', { invoiceId: invoice.id, amount, confirmations: 19 });
      if (amount === '60') await call('POST', `/api/invoices/v1/regular/${invoice.id}/refund`, { address: TRON });
    }
    const [w] = await call('POST', '/api/transactions/withdraw', { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }] });
    for (let i = 0; i < 200; i++) {
      if ((await call('GET', `/api/transactions/withdrawals/${w.uid}`)).txHash) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await call('POST', `/api/sandbox/withdrawals/${w.uid}/confirm`);
    const res = await fetch(`${server.url}/api/company/exports/ledger.csv?from=${range.from}&to=${range.to}`, { headers: { authorization: `Bearer ${m.publicToken}` } });
    expect(res.status).toBe(200);
    text = await res.text();
    // Saved under the name the API gives it: the range is read from it.
    const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition')!)![1]!;
    file = write(name, text);
    expect(linesOf(text)).toHaveLength(1 + 4 + 5 + 5);
  });

  afterAll(async () => {
    await stopAllChildren();
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('through the running server: the file as downloaded passes (exit 0); a changed amount is named (exit 1)', async () => {
    const ok = await verify(['--export', file]);
    expect(ok.stderr).toContain('through the running server');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json).toEqual({ file, ok: true, companyId, from: range.from, to: range.to, rows: 14, entries: 14, problemCount: 0, problems: [] });

    const lines = linesOf(text);
    const amount = cellsOf(lines[3]!)[6]!;
    lines[3] = withCell(lines[3]!, 6, amount.startsWith('-') ? amount.slice(1) : `-${amount}`);
    const bad = await verify(['--export', write('tampered.csv', textOf(lines)), '--from', range.from, '--to', range.to]);
    expect(bad.code, bad.stderr).toBe(1);
    expect(bad.json.problems).toEqual([{ check: 'mismatch', line: 4, entryId: cellsOf(lines[3]!)[0], column: 'amount', expected: amount, actual: cellsOf(lines[3]!)[6] }]);
  });

  it('on the database opened directly: passes, and lists every tampering of one file', async () => {
    await stopServer(server!);
    server = null;
    const ok = await verify(['--export', file]);
    expect(ok.stderr).toContain('opened directly');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json.ok).toBe(true);

    const lines = linesOf(text);
    const id = (n: number) => cellsOf(lines[n]!)[0]!;
    const removed = lines[9]!;
    const tampered = [...lines];
    tampered[2] = withCell(lines[2]!, 7, '1000000'); // balance_after
    tampered[5] = withCell(lines[5]!, 11, 'f'.repeat(64)); // tx_hash
    tampered[6] = withCell(lines[6]!, 8, 'invoice'); // source_type
    tampered.splice(9, 1); // a row left out
    const res = await verify(['--export', write('several.csv', textOf(tampered)), '--from', range.from, '--to', range.to, '--company', companyId]);
    expect(res.code).toBe(1);
    expect(res.json.problemCount).toBe(4);
    expect(res.json.problems).toEqual([
      { check: 'mismatch', line: 3, entryId: id(2), column: 'balance_after', expected: cellsOf(lines[2]!)[7], actual: '1000000' },
      { check: 'mismatch', line: 6, entryId: id(5), column: 'tx_hash', expected: cellsOf(lines[5]!)[11], actual: 'f'.repeat(64) },
      { check: 'mismatch', line: 7, entryId: id(6), column: 'source_type', expected: cellsOf(lines[6]!)[8], actual: 'invoice' },
      { check: 'missing', line: null, entryId: cellsOf(removed)[0], expected: `a row for entry ${cellsOf(removed)[0]} (${cellsOf(removed)[1]})`, actual: 'none' },
    ]);
  });

  it('a renamed file: the range from --from and --to', async () => {
    const renamed = write('mine.csv', text);
    const res = await verify(['--export', renamed, '--from', range.from, '--to', range.to]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.json).toMatchObject({ ok: true, rows: 14 });
  });

  describe('what the check finds (in process)', () => {
    let db: Awaited<ReturnType<typeof openDatabase>>;
    beforeAll(async () => {
      // Only one process may open an embedded database.
      if (server) await stopServer(server);
      server = null;
      db = await openDatabase({ url: databaseUrlOf(env), migrate: false, poolSize: 1, role: 'test' });
    });
    afterAll(async () => {
      await db?.close();
    });
    const check = (content: string, options: { from?: string; to?: string; companyId?: string; batchSize?: number } = {}) =>
      verifyLedgerExport(databaseEntrySource(db.prisma), Readable.from([content]).pipe(parse({ relax_column_count: true })), {
        from: new Date(options.from ?? range.from),
        to: new Date(options.to ?? range.to),
        companyId: options.companyId ?? null,
        batchSize: options.batchSize ?? 2,
      });
    const lines = () => linesOf(text);

    it('passes in pages of any size', async () => {
      for (const batchSize of [1, 2, 3, 14, 1000]) expect((await check(text, { batchSize })).problems, `pages of ${batchSize}`).toEqual([]);
    });

    it('rows out of order, repeated, invented or of another range', async () => {
      const l = lines();
      const swapped = [l[0]!, l[1]!, l[3]!, l[2]!, ...l.slice(4)];
      const report = await check(textOf(swapped));
      expect(report.ok).toBe(false);
      // Walked side by side with the ledger: the entry of line 4 is missing where it belongs, then comes too late.
      expect(report.problems.map((p) => [p.check, p.line, p.entryId])).toEqual([
        ['missing', null, cellsOf(l[2]!)[0]],
        ['order', 4, cellsOf(l[2]!)[0]],
        ['unknown', 4, cellsOf(l[2]!)[0]],
      ]);
      const repeated = await check(textOf([...l.slice(0, 5), l[4]!, ...l.slice(5)]));
      expect(repeated.problems.map((p) => [p.check, p.line])).toEqual([
        ['order', 6],
        ['unknown', 6],
      ]);
      const invented = withCell(l[14]!, 0, randomUUID());
      const extra = await check(textOf([...l, withCell(invented, 1, '9998-01-01T00:00:00.000Z')]));
      expect(extra.problems.map((p) => [p.check, p.line])).toEqual([['unknown', 16]]);
      // A narrower range than the file's: its rows past the end are not entries of that range.
      const cut = cellsOf(l[10]!)[1]!;
      const narrower = await check(text, { to: cut });
      expect(narrower.problems.map((p) => p.check)).toEqual(l.slice(1).filter((x) => cellsOf(x)[1]! >= cut).map(() => 'unknown'));
    });

    it('a truncated file misses the entries after it; a wrong header or a broken row is named', async () => {
      const l = lines();
      const truncated = await check(textOf(l.slice(0, 8)));
      expect(truncated.problems.map((p) => p.check)).toEqual(Array(7).fill('missing'));
      expect(truncated.problems.map((p) => p.entryId)).toEqual(l.slice(8).map((x) => cellsOf(x)[0]));
      expect((await check(textOf([l[0]!.replace('amount', 'amt'), ...l.slice(1)]))).problems).toEqual([
        expect.objectContaining({ check: 'header', line: 1 }),
      ]);
      const broken = await check(textOf([...l.slice(0, 3), `${l[3]!},extra`, ...l.slice(4)]));
      expect(broken.problems.map((p) => [p.check, p.line])).toEqual([
        ['format', 4],
        ['missing', null],
      ]);
      // No rows and no company: nothing to check against.
      expect((await check(textOf([l[0]!]))).problems).toEqual([expect.objectContaining({ check: 'company' })]);
      // The company given: an empty file of a range with entries misses them all.
      expect((await check(textOf([l[0]!]), { companyId })).problems).toHaveLength(14);
      // Another company's file is not this company's ledger.
      const other = await check(text, { companyId: randomUUID() });
      expect(other.problems.every((p) => p.check === 'unknown')).toBe(true);
    });
  });
});

describe('ledger:verify --export usage', () => {
  it('exits 2 before opening any database: a renamed file without --from/--to, bad instants, no file, an invoice export, an unknown option', async () => {
    const dir = tempDir('payrail-exports-usage-');
    const write = (name: string) => {
      const p = path.join(dir, name);
      fs.writeFileSync(p, 'entry_id\r\n');
      return p;
    };
    // No database is reachable from here: each case must stop before it looks for one.
    const env = { DATA_DIR: dir, DATABASE_URL: 'postgresql://nobody@127.0.0.1:1/none' };
    const verify = (args: string[]) => runCli('src/bin/ledger-verify.ts', args, env);
    const renamed = write('mine.csv');
    const cases: [string[], RegExp][] = [
      [['--export', renamed], /give --from and --to/],
      [['--export', renamed, '--from', 'yesterday', '--to', '2027-01-01T00:00:00Z'], /ISO 8601 instants/],
      [['--export', renamed, '--from', '2027-01-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z'], /--to must be after --from/],
      [['--export', renamed, '--from', '2026-01-01T00:00:00Z', '--to', '2027-01-01T00:00:00Z', '--company', 'acme'], /--company must be a company id/],
      [['--export', path.join(dir, 'nope.csv')], /no such file/],
      [['--export', write('invoices_20260101T000000000Z_20270101T000000000Z.csv')], /is an invoices export/],
      [['--export', renamed, '--bogus'], /Unknown option '--bogus'/],
      [['--from', '2026-01-01T00:00:00Z'], /go with --export/],
    ];
    for (const [args, message] of cases) {
      const res = await verify(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(message);
    }
  });
});
