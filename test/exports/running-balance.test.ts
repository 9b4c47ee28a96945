// The ledger export's balance after is a balance that existed: every kind of journal the service writes is made
// through the API, and in the export each account's running balance is the sum of its rows so far, a merchant's
// balances are never negative, the entries of a journal stay together, and within one transaction (one created_at)
// a credit comes before its fee and a hold before what ends it (docs/exports.md, "Order").
import { describe, expect, it } from 'vitest';
import { Money } from '../../src/domain/money.ts';
import { DATABASES } from '../support/databases.ts';
import { eventually } from '../support/funding.ts';
import { useServer, type TestServer } from '../support/server.ts';
import { declared } from '../../src/features.ts';
import { balanceBuckets } from '../../src/ledger/ledger.ts';
import { download, rangeQuery, type CsvRow } from './support.ts';

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ALL_UNTIL = '9999-12-31T23:59:59.999Z';
const FINAL = 19;

/** Every journal kind the features declare (src/features.ts `declared`; docs/exports.md, journal_kind). */
const ALL_KINDS = declared.journalKinds;
/** The merchant's money: the ledger's own accounts of it and those features declare (autoswap's swap_hold). */
const MERCHANT_ACCOUNTS = new Set(balanceBuckets(declared.ledgerAccounts).keys());

function client(server: TestServer, token: string) {
  const call = async (method: string, path: string, json?: unknown, auth = true) => {
    const res = await server.request(method, path, { token: auth ? token : undefined, json });
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const invoice = async (paymentCurrency = 'trc20usdt') => {
    const created = await call('POST', '/api/invoices/v1/regular', { invoiceCurrency: 'usd', items: [{ name: 'Order', price: 100 }] });
    await call('POST', `/api/invoices/v1/regular/${created.id}/proceed`, { clientEmail: 'a@b.co', paymentCurrency }, false);
    return created.id as string;
  };
  const pay = (invoiceId: string, amount: string, asset?: string) =>
    call('POST', '/api/sandbox/transfers', { invoiceId, amount, confirmations: FINAL, ...(asset ? { asset } : {}) });
  const sent = (uid: string) => eventually(() => server.request('GET', `/api/transactions/withdrawals/${uid}`, { token }), (r) => r.body.txHash !== null);
  return { call, invoice, pay, sent };
}

/** A merchant with every journal kind but auto-withdrawals: payments and fees, late, unexpected, refund, accept, deposits, withdrawals. */
async function everyJournal(server: TestServer): Promise<string> {
  const m = await server.merchant();
  const { call, invoice, pay, sent } = client(server, m.publicToken);
  for (let i = 0; i < 4; i++) await pay(await invoice(), '101'); // payment + fee, one transaction
  await pay(await invoice(), '5', 'trx'); // unexpected_asset
  const refunded = await invoice();
  await pay(refunded, '60');
  await call('POST', `/api/invoices/v1/regular/${refunded}/refund`, { address: TRON }); // refund
  const accepted = await invoice();
  await pay(accepted, '50');
  await call('POST', `/api/invoices/v1/regular/${accepted}/accept`); // fee on accept
  const late = await invoice();
  await call('POST', '/api/sandbox/clock/advance', { minutes: 31 });
  await pay(late, '101'); // late_payment
  await call('POST', `/api/invoices/v1/regular/${late}/accept`);
  const address = await call('POST', '/api/static-addresses', { asset: 'trc20usdt', internalUserId: 'u1' });
  for (let i = 0; i < 6; i++) await call('POST', '/api/sandbox/transfers', { address: address.address, amount: '10', confirmations: FINAL }); // deposit + deposit_fee
  const [done] = await call('POST', '/api/transactions/withdraw', { items: [{ amount: '10', tag: '', to: TRON, asset: 'trc20usdt' }] });
  const [rejected] = await call('POST', '/api/transactions/withdraw', { items: [{ amount: '5', tag: '', to: TRON, asset: 'trc20usdt' }] });
  await sent(done.uid);
  await sent(rejected.uid);
  await call('POST', `/api/sandbox/withdrawals/${done.uid}/confirm`); // withdrawal_hold, withdrawal
  await call('POST', `/api/sandbox/withdrawals/${rejected.uid}/reject`); // withdrawal_release
  return m.publicToken;
}

/** A merchant whose deposits each start an auto-withdrawal in their own transaction: deposit, fee, hold. */
/** A merchant whose trc20usdt credits are swapped to usdterc20: a fill (hold, both legs, the venue's fee and ours) and a failed swap's release. */
async function autoswaps(server: TestServer): Promise<string> {
  const m = await server.merchant();
  const { call, invoice, pay } = client(server, m.publicToken);
  const swaps = () => server.app.db.prisma.autoSwap.findMany({ where: { companyId: m.companyId } });
  await call('PATCH', '/api/company/autoswap', { assets: { trc20usdt: { isEnabled: true, toCurrency: 'usdterc20', maxSlippagePercent: '1' } } });
  await call('PUT', '/api/sandbox/autoswap-venue', { slippagePercent: '0', feePercent: '0.3', behaviour: 'fill' });
  await pay(await invoice(), '101'); // autoswap_hold, autoswap, autoswap_venue_fee, autoswap_fee
  await eventually(swaps, (s) => s.length === 1 && s[0]!.status === 'done');
  await call('PUT', '/api/sandbox/autoswap-venue', { slippagePercent: '5', feePercent: '0', behaviour: 'fill' });
  await pay(await invoice(), '101'); // beyond the slippage cap: autoswap_release
  await eventually(swaps, (s) => s.length === 2 && s.every((x) => x.status === 'done' || x.status === 'failed'));
  return m.publicToken;
}

async function autoWithdrawals(server: TestServer): Promise<string> {
  const m = await server.merchant();
  const { call } = client(server, m.publicToken);
  await call('PATCH', '/api/company/auto-withdrawals', { assets: { trc20usdt: { amount: 8, isEnabled: true, withdrawalTag: null, withdrawalAddress: TRON } } });
  const address = await call('POST', '/api/static-addresses', { asset: 'trc20usdt', internalUserId: 'u2' });
  for (let i = 0; i < 5; i++) await call('POST', '/api/sandbox/transfers', { address: address.address, amount: '10', confirmations: FINAL });
  expect(await server.app.db.prisma.withdrawal.count({ where: { companyId: m.companyId } })).toBe(5);
  return m.publicToken;
}

/** The problems of an export's order and balances after (empty when each balance after is one that existed). */
function runningBalanceProblems(rows: CsvRow[]): string[] {
  const problems: string[] = [];
  const balances = new Map<string, Money>();
  const seenJournals = new Set<string>();
  rows.forEach((row, i) => {
    const line = `row ${i + 2} (${row.journal_kind} ${row.account} ${row.amount} -> ${row.balance_after})`;
    const key = `${row.asset}/${row.account}`;
    const sum = (balances.get(key) ?? new Money(0)).plus(row.amount);
    balances.set(key, sum);
    if (!sum.eq(row.balance_after)) problems.push(`${line}: the sum of the account's rows so far is ${sum.toFixed()}`);
    if (MERCHANT_ACCOUNTS.has(row.account) && sum.isNegative()) problems.push(`${line}: a merchant balance that never was negative`);
    // A journal's rows are together: once another journal's row came, it never returns.
    const previous = rows[i - 1];
    if (previous && previous.journal_id !== row.journal_id && seenJournals.has(row.journal_id)) problems.push(`${line}: journal ${row.journal_id} split`);
    seenJournals.add(row.journal_id);
  });
  // Within one transaction (one instant): what causes a fee, a hold's end or an auto-withdrawal comes first.
  const FIRST: Record<string, string[]> = {
    fee: ['payment', 'late_payment'],
    deposit_fee: ['deposit'],
    withdrawal: ['withdrawal_hold'],
    withdrawal_release: ['withdrawal_hold'],
    withdrawal_hold: ['deposit', 'deposit_fee', 'payment', 'fee'],
  };
  rows.forEach((row, i) => {
    const before = FIRST[row.journal_kind];
    if (!before) return;
    const later = rows.slice(i + 1).find((r) => r.created_at === row.created_at && before.includes(r.journal_kind) && sameSubject(r, row));
    if (later) problems.push(`row ${i + 2}: ${row.journal_kind} before the ${later.journal_kind} of the same transaction`);
  });
  return problems;
}

/** Rows about the same thing: one invoice, one transfer, one withdrawal, or (auto-withdrawals) the same transaction. */
const sameSubject = (a: CsvRow, b: CsvRow) =>
  (a.invoice_id !== '' && a.invoice_id === b.invoice_id) ||
  (a.source_type === 'chain_transfer' && a.source_id === b.source_id) ||
  (a.source_type === 'withdrawal' && a.source_id === b.source_id) ||
  (b.journal_kind === 'withdrawal_hold' && a.created_at === b.created_at);

describe.each(DATABASES)('the running balance of the ledger export on %s', { timeout: 120_000 }, (kind) => {
  const server = useServer(kind, { EXPORT_BATCH_SIZE: '4', WITHDRAWAL_SEND_INTERVAL_MS: '100', AUTOSWAP_FEE_PERCENT: '0.5', AUTOSWAP_INTERVAL_MS: '100' });

  it('every journal kind: each balance after is the sum so far, never a state the balance was not in', async () => {
    const from = new Date(Date.now() - 1_000).toISOString();
    const tokens = [await everyJournal(server), await autoWithdrawals(server), await autoswaps(server)];
    const kinds = new Set<string>();
    for (const token of tokens) {
      const ledger = await download(server, `/api/company/exports/ledger.csv?${rangeQuery(from, ALL_UNTIL)}`, token);
      expect(ledger.status, ledger.text).toBe(200);
      for (const row of ledger.rows) kinds.add(row.journal_kind);
      expect(runningBalanceProblems(ledger.rows)).toEqual([]);
    }
    expect([...kinds].sort()).toEqual([...ALL_KINDS].sort());
  });
});
