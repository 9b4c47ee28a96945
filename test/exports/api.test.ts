// The exports through the real server: a sandbox payment flow (payments and fees, a short payment refunded, a
// withdrawal done, a two-item withdrawal in flight), then both CSV files checked row by row against what happened;
// tenant isolation, authentication, exact range boundaries, hostile query values, and the GraphQL download link.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_COLUMNS } from '../../src/ledger/entries.ts';
import { INVOICE_COLUMNS } from '../../src/exports/invoices.ts';
import { Money } from '../../src/domain/money.ts';
import { rotatePublicToken } from '../../src/companies/service.ts';
import { DATABASES } from '../support/databases.ts';
import { balanceOf, eventually, fund } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { download, rangeQuery, type CsvDownload, type CsvRow } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const PUBLIC_BASE_URL = 'https://payrail.example';
const ALL_UNTIL = '9999-12-31T23:59:59.999Z';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const hash = () => randomBytes(32).toString('hex');

const LINK_MUTATION = `mutation($input: CreateExportLinkInput!) {
  createExportLink(input: $input) {
    __typename
    ... on CreateExportLinkSuccess { link { url kind from to expiresAt fileName } }
    ... on ValidationError { code details { path message } }
  }
}`;

interface Flow {
  from: string;
  token: string;
  companyId: string;
  paid: { invoiceId: string; transferId: string; txHash: string };
  refunded: { invoiceId: string; transferId: string; txHash: string; refundId: string; refundTxHash: string };
  single: { uid: string; txHash: string };
  batch: { uids: string[]; txHashes: string[] };
}

/** Everything happens through the API, as a merchant and its client would do it. */
async function runFlow(server: TestServer): Promise<Flow> {
  // The database's clock is the machine's: a second of margin before the first entry.
  const from = new Date(Date.now() - 1_000).toISOString();
  const m = await server.merchant();
  const token = m.publicToken;
  const call = async (method: string, path: string, json?: unknown, auth = true) => {
    const res = await server.request(method, path, { token: auth ? token : undefined, json });
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const invoice = async (email: string, order: Record<string, unknown> = {}) => {
    const created = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }], ...order });
    await call('POST', `/api/invoices/v1/regular/${created.id}/proceed`, { clientEmail: email, paymentCurrency: 'trc20usdt' }, false);
    return created.id as string;
  };

  // 100 usd in trc20usdt: 101 due (1% fee), paid in full and final at once -> done, fee charged.
  const paidId = await invoice('-2+3@example.com', { orderId: '=1+2', metadata: { customer: 'c_1', note: 'a, "b"' } });
  const paidHash = hash();
  const paidTransfer = await call('POST', '/api/sandbox/transfers', { invoiceId: paidId, amount: '101', confirmations: 19, txHash: paidHash });
  // 60 of 101 -> wrong -> refunded (59 out, 1 network fee).
  const shortId = await invoice('client@example.com');
  const shortHash = hash();
  const shortTransfer = await call('POST', '/api/sandbox/transfers', { invoiceId: shortId, amount: '60', confirmations: 19, txHash: shortHash });
  const refunded = await call('POST', `/api/invoices/v1/regular/${shortId}/refund`, { address: TRON });
  expect(refunded).toMatchObject({ status: 'refunded', refund: { status: 'sent', amount: '59', networkFee: '1' } });

  // A withdrawal of 10 (fee 1), sent and confirmed; then two of 5 in one call, sent, not confirmed.
  const [single] = await call('POST', '/api/transactions/withdraw', { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }] });
  const batch = await call('POST', '/api/transactions/withdraw', {
    items: [
      { amount: '5', tag: '', to: TRON, asset: 'trc20usdt' },
      { amount: '5', tag: '', to: TRON, asset: 'trc20usdt' },
    ],
  });
  const uids = [single.uid as string, ...batch.map((r: { uid: string }) => r.uid)];
  const txHashes: string[] = [];
  for (const uid of uids) {
    const sent = await eventually(() => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token }), (r) => r.body.txHash !== null);
    txHashes.push(sent.body.txHash as string);
  }
  expect((await call('POST', `/api/sandbox/withdrawals/${uids[0]}/confirm`)).status).toBe('done');
  return {
    from,
    token,
    companyId: m.companyId,
    paid: { invoiceId: paidId, transferId: paidTransfer.id, txHash: paidHash },
    refunded: { invoiceId: shortId, transferId: shortTransfer.id, txHash: shortHash, refundId: refunded.refund.id, refundTxHash: refunded.refund.txHash },
    single: { uid: uids[0]!, txHash: txHashes[0]! },
    batch: { uids: uids.slice(1), txHashes: txHashes.slice(1) },
  };
}

const ledgerPath = (from: string, to: string) => `/api/company/exports/ledger.csv?${rangeQuery(from, to)}`;
const invoicesPath = (from: string, to: string) => `/api/company/exports/invoices.csv?${rangeQuery(from, to)}`;
const fields = ['journal_kind', 'account', 'amount', 'source_type', 'source_id', 'invoice_id', 'tx_hash'] as const;
const pick = (row: CsvRow) => fields.map((f) => row[f]!).join(' | ');

describe.each(DATABASES)('exports on %s', { timeout: 120_000 }, (kind) => {
  // Three rows per query, so the flow's export spans many pages (and the same instant across pages).
  const server = useServer(kind, { EXPORT_BATCH_SIZE: '3', WITHDRAWAL_SEND_INTERVAL_MS: '200', PUBLIC_BASE_URL });
  let flow: Flow;
  let ledger: CsvDownload;

  beforeAll(async () => {
    flow = await runFlow(server);
    ledger = await download(server, ledgerPath(flow.from, ALL_UNTIL), flow.token);
  });

  it('the ledger export: one row per entry, exactly as it happened, with the source and its chain transaction', async () => {
    expect(ledger.status, ledger.text).toBe(200);
    expect(ledger.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(ledger.headers.get('content-disposition')).toBe(
      `attachment; filename="ledger_${flow.from.replace(/[-:.]/g, '')}_99991231T235959999Z.csv"`,
    );
    expect(ledger.headers.get('cache-control')).toBe('no-store');
    expect(ledger.text.startsWith(`${LEDGER_COLUMNS.join(',')}\r\n`)).toBe(true);
    expect(ledger.columns).toEqual([...LEDGER_COLUMNS]);
    const { paid, refunded, single, batch } = flow;
    const [a, b] = batch.uids as [string, string];
    const holdJournal = ledger.rows.find((r) => r.journal_kind === 'withdrawal_hold' && r.amount === '-12')!.journal_id;
    expect(ledger.rows.map(pick).sort()).toEqual(
      [
        ['payment', 'chain_external', '-101', 'chain_transfer', paid.transferId, paid.invoiceId, paid.txHash],
        ['payment', 'merchant_available', '101', 'chain_transfer', paid.transferId, paid.invoiceId, paid.txHash],
        ['fee', 'merchant_available', '-1', 'invoice', paid.invoiceId, paid.invoiceId, ''],
        ['fee', 'platform_fees', '1', 'invoice', paid.invoiceId, paid.invoiceId, ''],
        ['payment', 'chain_external', '-60', 'chain_transfer', refunded.transferId, refunded.invoiceId, refunded.txHash],
        ['payment', 'merchant_available', '60', 'chain_transfer', refunded.transferId, refunded.invoiceId, refunded.txHash],
        ['refund', 'merchant_available', '-60', 'refund', refunded.refundId, refunded.invoiceId, refunded.refundTxHash],
        ['refund', 'chain_external', '59', 'refund', refunded.refundId, refunded.invoiceId, refunded.refundTxHash],
        ['refund', 'network_fees', '1', 'refund', refunded.refundId, refunded.invoiceId, refunded.refundTxHash],
        // The hold's debit of available names no withdrawal itself: its journal's one withdrawal...
        ['withdrawal_hold', 'merchant_available', '-11', 'withdrawal', single.uid, '', single.txHash],
        ['withdrawal_hold', 'merchant_held', '11', 'withdrawal', single.uid, '', single.txHash],
        ['withdrawal', 'merchant_held', '-11', 'withdrawal', single.uid, '', single.txHash],
        ['withdrawal', 'chain_external', '10', 'withdrawal', single.uid, '', single.txHash],
        ['withdrawal', 'network_fees', '1', 'withdrawal', single.uid, '', single.txHash],
        // ...or, for a call of two, the batch (its journal).
        ['withdrawal_hold', 'merchant_available', '-12', 'withdrawal_batch', holdJournal, '', ''],
        ['withdrawal_hold', 'merchant_held', '6', 'withdrawal', a, '', batch.txHashes[0]!],
        ['withdrawal_hold', 'merchant_held', '6', 'withdrawal', b, '', batch.txHashes[1]!],
      ]
        .map((r) => r.join(' | '))
        .sort(),
    );
    for (const row of ledger.rows) {
      expect(row.entry_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.journal_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.created_at).toMatch(ISO_MS);
      expect(row.asset).toBe('trc20usdt');
    }
  });

  it('rows in (created_at, entry_id) order; every journal balances; balances after run on to GET /api/company/balances', async () => {
    const keys = ledger.rows.map((r) => [r.created_at, r.entry_id] as const);
    const sorted = [...keys].sort(([t1, i1], [t2, i2]) => (t1 !== t2 ? (t1 < t2 ? -1 : 1) : i1 < i2 ? -1 : 1));
    expect(keys).toEqual(sorted);
    const journals = new Map<string, Money>();
    for (const r of ledger.rows) journals.set(r.journal_id, (journals.get(r.journal_id) ?? new Money(0)).plus(r.amount));
    expect([...journals.values()].every((sum) => sum.isZero())).toBe(true);
    expect(journals.size).toBe(7);
    // The range starts before the merchant's first entry: every balance opens at 0.
    const running = new Map<string, Money>();
    for (const r of ledger.rows) {
      const after = (running.get(r.account) ?? new Money(0)).plus(r.amount);
      running.set(r.account, after);
      expect(r.balance_after, `${r.entry_id} ${r.account}`).toBe(after.toFixed());
    }
    // 101 - 1 + 60 - 60 - 11 - 12 available; the two withdrawals in flight hold 12.
    expect(await balanceOf(server, flow.token, 'trc20usdt')).toEqual({ available: '77', held: '12' });
    const last = (account: string) => ledger.rows.filter((r) => r.account === account).at(-1)!.balance_after;
    expect(last('merchant_available')).toBe('77');
    expect(last('merchant_held')).toBe('12');
    expect(last('chain_external')).toBe('-92'); // -101 - 60 + 59 + 10
    expect(last('platform_fees')).toBe('1');
    expect(last('network_fees')).toBe('2');
  });

  it('the range is [from, to): a row at `to` is left out, a row at `from` is in, and balances after are the same in any range', async () => {
    // Split at the refund's instant: the payment of the short invoice before it, the refund itself after.
    const at = ledger.rows.find((r) => r.journal_kind === 'refund')!.created_at;
    const before = await download(server, ledgerPath(flow.from, at), flow.token);
    const after = await download(server, ledgerPath(at, ALL_UNTIL), flow.token);
    expect(before.rows.length).toBeGreaterThan(0);
    expect(after.rows[0]!.created_at).toBe(at);
    expect(before.rows.every((r) => r.created_at < at)).toBe(true);
    expect([...before.rows, ...after.rows]).toEqual(ledger.rows);
    // One millisecond: exactly the entries of that instant.
    const instant = await download(server, ledgerPath(at, new Date(Date.parse(at) + 1).toISOString()), flow.token);
    expect(instant.rows).toEqual(ledger.rows.filter((r) => r.created_at === at));
    // A range with nothing in it is the header alone.
    const empty = await download(server, ledgerPath('2000-01-01T00:00:00Z', '2000-01-02T00:00:00+02:00'), flow.token);
    expect(empty.text).toBe(`${LEDGER_COLUMNS.join(',')}\r\n`);
    // Offsets are instants: the same range written in another zone.
    const shifted = await download(server, ledgerPath(at.replace('Z', '+00:00'), '9999-12-31T23:59:59.999Z'), flow.token);
    expect(shifted.rows).toEqual(after.rows);
  });

  it('the invoice export: one row per invoice with its amounts, times and refund; a client’s formula stays text', async () => {
    const res = await download(server, invoicesPath(flow.from, ALL_UNTIL), flow.token);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="invoices_\d{8}T\d{9}Z_99991231T235959999Z\.csv"$/);
    expect(res.columns).toEqual([...INVOICE_COLUMNS]);
    expect(res.rows.map((r) => r.invoice_id)).toEqual([flow.paid.invoiceId, flow.refunded.invoiceId]);
    const [paid, refunded] = res.rows as [CsvRow, CsvRow];
    expect(paid).toMatchObject({
      status: 'done',
      invoice_currency: 'usd',
      total: '100.00',
      payment_currency: 'trc20usdt',
      merchant_pays_fee: 'false',
      rate: '1',
      amount_due: '101',
      invoice_fee: '1',
      paid_amount: '101',
      overpaid_amount: '0',
      fee_charged: '1',
      // -2+3@example.com is a valid address and a formula: a spreadsheet shows it as text.
      client_email: "'-2+3@example.com",
      accepted_at: '',
      refund_id: '',
      refund_tx_hash: '',
      settlement: '',
      // The merchant's texts: made safe for spreadsheets as the client's e-mail is; metadata as its JSON.
      order_id: "'=1+2",
      metadata: '{"customer":"c_1","note":"a, \\"b\\""}',
    });
    expect(res.text).toContain(",'-2+3@example.com,");
    // What the locked rate was made of: test mode's static table on both sides (docs/rates.md).
    expect(paid.rate_sources).toMatch(/^static; spread 0%; invoice usd=1 USD \[static RATES_FILE 1 @ \d{4}-\d\d-\d\dT[\d:.]+Z\]; payment usdt=1 USD \[static RATES_FILE 1 @ [\dT:.Z-]+\]$/);
    expect(refunded).toMatchObject({
      status: 'refunded',
      paid_amount: '60',
      fee_charged: '',
      client_email: 'client@example.com',
      refund_id: flow.refunded.refundId,
      refund_status: 'sent',
      refund_amount: '59',
      refund_network_fee: '1',
      refund_tx_hash: flow.refunded.refundTxHash,
      settlement: 'refunded',
      order_id: '',
      metadata: '',
    });
    const invoice = (await server.request('GET', `/api/invoices/v1/regular/${flow.paid.invoiceId}`)).body;
    for (const r of [paid, refunded]) {
      for (const c of ['created_at', 'proceeded_at', 'expired_at', 'settled_at'] as const) expect(r[c], c).toMatch(ISO_MS);
    }
    expect(paid.expired_at).toBe(invoice.expiredAt);
  });

  it('each merchant sees its own rows only', async () => {
    const other = await server.merchant();
    await fund(server, other.publicToken, 'trc20usdt', '5');
    const theirs = await download(server, ledgerPath(flow.from, ALL_UNTIL), other.publicToken);
    expect(theirs.rows.map((r) => r.journal_kind).sort()).toEqual(['fee', 'fee', 'payment', 'payment']);
    expect(theirs.rows.filter((r) => ledger.rows.some((mine) => mine.entry_id === r.entry_id))).toEqual([]);
    const mine = await download(server, ledgerPath(flow.from, ALL_UNTIL), flow.token);
    expect(mine.rows).toEqual(ledger.rows);
    const theirInvoices = await download(server, invoicesPath(flow.from, ALL_UNTIL), other.publicToken);
    expect(theirInvoices.rows).toHaveLength(1);
    expect([flow.paid.invoiceId, flow.refunded.invoiceId]).not.toContain(theirInvoices.rows[0]!.invoice_id);
  });

  it('401 without a token or with a bad one, in the one error shape', async () => {
    for (const path of [ledgerPath(flow.from, ALL_UNTIL), invoicesPath(flow.from, ALL_UNTIL)]) {
      const none = await server.request('GET', path);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect(none.body).toEqual({ error: { code: 'UNAUTHENTICATED', message: expect.any(String), details: [], requestId: expect.any(String) } });
      expect((await server.request('GET', path, { token: 'not-a-token' })).status).toBe(401);
    }
    // Anonymous is told so first, whatever else is wrong with the request (a NUL byte in a value).
    expect((await server.request('GET', '/api/company/exports/ledger.csv?from=%00&to=x')).status).toBe(401);
  });

  it('hostile range values: 422 naming the field, never a file', async () => {
    const cases: [string, string[]][] = [
      ['', ['from', 'to']],
      [`from=${encodeURIComponent(flow.from)}`, ['to']],
      ['from=yesterday&to=today', ['from', 'to']],
      [rangeQuery('0000-12-31T23:59:59Z', '2026-01-01T00:00:00Z'), ['from']],
      [rangeQuery('2026-01-01T00:00:00Z', '10000-01-01T00:00:00Z'), ['to']],
      [rangeQuery('2026-01-01T00:00:00Z', '+010000-01-01T00:00:00Z'), ['to']],
      [rangeQuery('2026-01-01T00:00:00', '2026-02-01T00:00:00Z'), ['from']],
      [rangeQuery('2026-02-30T00:00:00Z', '2026-03-01T00:00:00Z'), ['from']],
      [rangeQuery('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'), ['to']],
      [rangeQuery('2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00Z'), ['to']],
      [rangeQuery('2026-01-01T02:00:00+02:00', '2026-01-01T00:00:00Z'), ['to']],
      [rangeQuery('1e3', '2026-01-01T00:00:00Z'), ['from']],
      [rangeQuery('2026-01-01T00:00:00Z'.repeat(500), '2026-01-01T00:00:00Z'), ['from']],
      [`from=2026-01-01T00:00:00Z%00&to=2027-01-01T00:00:00Z`, ['from']],
      [`from=%ED%A0%80&to=2027-01-01T00:00:00Z`, ['from']],
    ];
    for (const [query, paths] of cases) {
      for (const path of ['/api/company/exports/ledger.csv', '/api/company/exports/invoices.csv']) {
        const res = await server.request('GET', `${path}?${query}`, { token: flow.token });
        expect(res.status, `${path}?${query}: ${res.text}`).toBe(422);
        expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
        expect(res.body.error.code).toBe('VALIDATION_FAILED');
        expect(res.body.error.details.map((d: { path: string }) => d.path).sort(), query).toEqual(paths);
      }
    }
  });

  describe('the GraphQL download link', () => {
    const createLink = async (token: string | undefined, input: Record<string, unknown>) => server.graphql(LINK_MUTATION, { input }, token);

    it('serves the same file without the Authorization header, for its company, kind and range only', async () => {
      const res = await createLink(flow.token, { kind: 'LEDGER', from: flow.from, to: ALL_UNTIL });
      expect(res.body.errors).toBeUndefined();
      const link = res.body.data.createExportLink.link;
      expect(res.body.data.createExportLink.__typename).toBe('CreateExportLinkSuccess');
      expect(link).toMatchObject({ kind: 'LEDGER', from: flow.from, to: ALL_UNTIL, fileName: expect.stringMatching(/^ledger_\d{8}T\d{9}Z_99991231T235959999Z\.csv$/) });
      expect(link.url).toMatch(/^https:\/\/payrail\.example\/api\/exports\/[A-Za-z0-9_-]{43}$/);
      // Expires 15 minutes after it was made (the default).
      expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
      expect(Date.parse(link.expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60_000);
      const path = new URL(link.url).pathname;
      const viaLink = await download(server, path);
      expect(viaLink.status, viaLink.text).toBe(200);
      expect(viaLink.text).toBe(ledger.text);
      expect(viaLink.headers.get('content-disposition')).toBe(`attachment; filename="${link.fileName}"`);
      // The link works again until it expires (a browser may retry), also with its own company's token.
      expect((await download(server, path, flow.token)).text).toBe(ledger.text);
      // Only a hash of the token is stored.
      const token = path.split('/').pop()!;
      const stored = await server.app.db.prisma.exportLink.findMany({ where: { companyId: flow.companyId } });
      expect(JSON.stringify(stored)).not.toContain(token);

      const invoices = (await createLink(flow.token, { kind: 'INVOICES', from: flow.from, to: ALL_UNTIL })).body.data.createExportLink.link;
      const viaInvoiceLink = await download(server, new URL(invoices.url).pathname);
      expect(viaInvoiceLink.text).toBe((await download(server, invoicesPath(flow.from, ALL_UNTIL), flow.token)).text);
    });

    it('another company cannot use it; unknown, malformed and expired links are 404; a bad token 401', async () => {
      const link = (await createLink(flow.token, { kind: 'LEDGER', from: flow.from, to: ALL_UNTIL })).body.data.createExportLink.link;
      const path = new URL(link.url).pathname;
      const other = await server.merchant();
      const foreign = await server.request('GET', path, { token: other.publicToken });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe('NOT_FOUND');
      expect((await server.request('GET', path, { token: 'wrong' })).status).toBe(401);
      const token = path.split('/').pop()!;
      const altered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
      for (const bad of [altered, randomBytes(32).toString('base64url'), 'short', 'x'.repeat(2000), '%00', token.slice(1)]) {
        const res = await server.request('GET', `/api/exports/${bad}`);
        expect(res.status, bad).toBe(bad === '%00' ? 422 : 404);
        expect(res.body.error.code).toBe(bad === '%00' ? 'VALIDATION_FAILED' : 'NOT_FOUND');
      }
      expect((await download(server, path)).status).toBe(200);
      // Past its expiry (15 minutes of real time, moved here in the database) the link is gone.
      await server.app.db.prisma.exportLink.updateMany({ where: { companyId: flow.companyId }, data: { expiresAt: new Date(Date.now() - 1) } });
      const expired = await server.request('GET', path);
      expect(expired.status).toBe(404);
      expect(expired.body.error.message).toMatch(/expired/);
    });

    it("rotating a merchant's token ends the links it made; another merchant's links stay", async () => {
      const m = await server.merchant();
      const mine = new URL((await createLink(m.publicToken, { kind: 'LEDGER', from: flow.from, to: ALL_UNTIL })).body.data.createExportLink.link.url).pathname;
      const theirs = new URL((await createLink(flow.token, { kind: 'LEDGER', from: flow.from, to: ALL_UNTIL })).body.data.createExportLink.link.url).pathname;
      expect((await download(server, mine)).status).toBe(200);
      await rotatePublicToken(server.app.db.prisma, { companyId: m.companyId, mode: 'test' });
      server.app.auth.invalidate();
      const gone = await server.request('GET', mine);
      expect(gone.status).toBe(404);
      expect((await download(server, theirs)).status).toBe(200);
    });

    it('the same range rules as REST; merchants only', async () => {
      const same = await createLink(flow.token, { kind: 'LEDGER', from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00.000Z' });
      expect(same.body.data.createExportLink).toEqual({ __typename: 'ValidationError', code: 'VALIDATION_FAILED', details: [{ path: 'to', message: 'must be after `from`' }] });
      const bad = await createLink(flow.token, { kind: 'LEDGER', from: '10000-01-01T00:00:00Z', to: ALL_UNTIL });
      expect(bad.body.errors[0].message).toMatch(/DateTime must be an ISO 8601 date-time/);
      const kind = await createLink(flow.token, { kind: 'PAYOUTS', from: flow.from, to: ALL_UNTIL });
      expect(kind.body.errors[0].message).toMatch(/ExportKind/);
      const anonymous = await createLink(undefined, { kind: 'LEDGER', from: flow.from, to: ALL_UNTIL });
      expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    });
  });
});
