// The ledger's invariants, checked from scratch: every journal balances, every running balance equals the sum of
// its entries, and what the ledger says moved on chain equals the chain records (transfers in, refunds out).
import type { Db } from '../db/client.ts';
import { Money, toMoney } from '../domain/money.ts';
import { ACCOUNTS } from './ledger.ts';

export interface LedgerProblem {
  check: 'journal-balance' | 'running-balance' | 'chain-records';
  key: string;
  expected: string;
  actual: string;
}

export interface LedgerReport {
  ok: boolean;
  journals: number;
  entries: number;
  balances: number;
  problems: LedgerProblem[];
}

type Row = Record<string, unknown>;
const key = (...parts: unknown[]) => parts.map(String).join('/');

export async function verifyLedger(db: Db): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];

  const unbalanced = await db.$queryRaw<Row[]>`
    SELECT "journalId", "asset", SUM("amount")::text AS total FROM "LedgerEntry"
    GROUP BY "journalId", "asset" HAVING SUM("amount") <> 0`;
  for (const r of unbalanced) {
    problems.push({ check: 'journal-balance', key: key(r['journalId'], r['asset']), expected: '0', actual: new Money(String(r['total'])).toFixed() });
  }

  const sums = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", "account", SUM("amount")::text AS total
    FROM "LedgerEntry" GROUP BY "companyId", "asset", "account"`;
  const balances = await db.balance.findMany();
  const fromEntries = new Map(sums.map((r) => [key(r['companyId'], r['asset'], r['account']), new Money(String(r['total']))]));
  const running = new Map(balances.map((b) => [key(b.companyId, b.asset, b.account), toMoney(b.amount)]));
  for (const k of new Set([...fromEntries.keys(), ...running.keys()])) {
    const expected = fromEntries.get(k) ?? new Money(0);
    const actual = running.get(k) ?? new Money(0);
    if (!expected.eq(actual)) problems.push({ check: 'running-balance', key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }

  // On-chain view: confirmed transfers we received minus refunds we sent, per company and asset.
  const received = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", SUM("amount")::text AS total FROM "ChainTransfer"
    WHERE "state" = 'confirmed' GROUP BY "companyId", "asset"`;
  const sent = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", SUM("amount")::text AS total FROM "Refund" GROUP BY "companyId", "asset"`;
  const chain = new Map<string, Money>();
  for (const r of received) chain.set(key(r['companyId'], r['asset']), new Money(String(r['total'])).neg());
  for (const r of sent) {
    const k = key(r['companyId'], r['asset']);
    chain.set(k, (chain.get(k) ?? new Money(0)).plus(String(r['total'])));
  }
  const ledgerExternal = new Map<string, Money>();
  for (const [k, v] of fromEntries) {
    const [companyId, asset, account] = k.split('/');
    if (account === ACCOUNTS.chainExternal) ledgerExternal.set(key(companyId, asset), v);
  }
  for (const k of new Set([...chain.keys(), ...ledgerExternal.keys()])) {
    const expected = chain.get(k) ?? new Money(0);
    const actual = ledgerExternal.get(k) ?? new Money(0);
    if (!expected.eq(actual)) problems.push({ check: 'chain-records', key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }

  const [counts] = await db.$queryRaw<Row[]>`
    SELECT COUNT(DISTINCT "journalId")::int AS journals, COUNT(*)::int AS entries FROM "LedgerEntry"`;
  return {
    ok: problems.length === 0,
    journals: Number(counts?.['journals'] ?? 0),
    entries: Number(counts?.['entries'] ?? 0),
    balances: balances.length,
    problems,
  };
}
