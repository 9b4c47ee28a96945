// The ledger's invariants, checked from scratch: every journal balances, every running balance (the sum of its
// shards) equals the sum of its entries and is not negative where it may not be, and what the ledger says moved on
// chain equals the chain records (transfers in, refunds out). Each feature checks its own objects against their
// money (a done invoice has its confirmed credit and its fee, etc.) in its ledger-checks.ts (LedgerCheck).
import { custodyProblems, type CustodySource } from '../chains/custody.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { Money, toMoney } from '../domain/money.ts';
import { ACCOUNTS, balanceBuckets, type LedgerAccountDeclaration } from './ledger.ts';
import { MODES, type Mode } from '../domain/modes.ts';

export interface LedgerProblem {
  /** The ledger's own checks (journal-balance, running-balance, negative-balance, chain-records, chain-custody) or a feature's (LedgerCheck.name). */
  check: string;
  /** Whose money it is about: test or live mode (docs/modes.md). The custody check is about real chains: live. */
  mode: Mode;
  key: string;
  expected: string;
  actual: string;
}

export interface ModeSummary {
  ok: boolean;
  journals: number;
  problems: number;
}

export interface LedgerReport {
  ok: boolean;
  /** The mode checked, or null for both. */
  mode: Mode | null;
  journals: number;
  entries: number;
  /** Running balances (company, asset, account), however many shards each has. */
  balances: number;
  problems: LedgerProblem[];
  /** Each mode on its own (only the checked one with `mode`). */
  modes: Partial<Record<Mode, ModeSummary>>;
  /** Watched addresses holding more than was credited to them (src/chains/custody.ts): reported, not a failure. */
  custodySurpluses: LedgerProblem[];
}

type Row = Record<string, unknown>;
export const key = (...parts: unknown[]) => parts.map(String).join('/');

/** A problem of one company's object, before its mode is known. */
export type CompanyProblem = Omit<LedgerProblem, 'mode'> & { companyId: string };

/**
 * A feature's check of its objects against their money (a done invoice has its credit and fee, ...), declared in its
 * folder (`ledger-checks.ts`, Feature.declares.ledgerChecks) and run by verifyLedger after the ledger's own.
 */
export interface LedgerCheck {
  /** Its LedgerProblem.check, e.g. `invoice-status`. */
  name: string;
  /** The objects that break it (offenders only, at most 1,000). */
  problems(db: Db): Promise<CompanyProblem[]>;
  /**
   * What the feature sent out on chain, as rows ("companyId" text, "asset", "amount"): the chain-records check holds
   * what came in (confirmed transfers) less all of these against the ledger's chain account.
   */
  paidOut?: Prisma.Sql;
}

declare module '../core/feature.ts' {
  interface Declarations {
    /** Its checks of its objects against the ledger, run by ledger:verify. */
    ledgerChecks?: readonly LedgerCheck[];
  }
}

export interface VerifyOptions {
  /** Check one mode's money only (docs/modes.md); both by default. */
  mode?: Mode | null;
  /** The features' checks (src/features.ts `declared.ledgerChecks`; its verifyLedger passes them all). */
  checks: readonly LedgerCheck[];
  /** The features' accounts (`declared.ledgerAccounts`): those of the merchant's available or held money may never be negative. */
  accounts: Readonly<Record<string, LedgerAccountDeclaration>>;
}

/**
 * `custody`: the real nodes to ask for the balances of our watched addresses (src/chains/custody.ts); without it the
 * chain is checked only through our own records. The features' checks run after the ledger's own.
 */
export async function verifyLedger(db: Db, custody: CustodySource[], options: VerifyOptions): Promise<LedgerReport> {
  // Called without the features' checks it would pass a ledger they fail: src/features.ts verifyLedger passes them.
  if (!options?.checks || !options.accounts) throw new Error('verifyLedger needs the features\' ledger checks and accounts (use verifyLedger of src/features.ts)');
  const problems: LedgerProblem[] = [];
  // Every company's mode (a tenant's never changes): each problem says whose money it is about.
  const companyModes = new Map((await db.company.findMany({ select: { id: true, mode: true } })).map((c) => [c.id, c.mode]));
  const modeOf = (companyId: unknown): Mode => companyModes.get(String(companyId)) ?? 'test';
  const held = await custodyProblems(db, custody);
  const custodyProblem = (p: (typeof held.problems)[number]): LedgerProblem => ({ check: 'chain-custody', mode: 'live', key: key(p.network, p.address, p.asset), expected: p.expected, actual: p.onChain });
  problems.push(...held.problems.map(custodyProblem));
  const custodySurpluses = held.surpluses.map(custodyProblem);

  const unbalanced = await db.$queryRaw<Row[]>`
    SELECT "journalId", "asset", MIN("companyId"::text) AS "companyId", SUM("amount")::text AS total FROM "LedgerEntry"
    GROUP BY "journalId", "asset" HAVING SUM("amount") <> 0`;
  for (const r of unbalanced) {
    problems.push({ check: 'journal-balance', mode: modeOf(r['companyId']), key: key(r['journalId'], r['asset']), expected: '0', actual: new Money(String(r['total'])).toFixed() });
  }

  const sums = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", "account", SUM("amount")::text AS total
    FROM "LedgerEntry" GROUP BY "companyId", "asset", "account"`;
  const balances = await db.balance.groupBy({ by: ['companyId', 'asset', 'account'], _sum: { amount: true } });
  const fromEntries = new Map(sums.map((r) => [key(r['companyId'], r['asset'], r['account']), new Money(String(r['total']))]));
  const running = new Map(balances.map((b) => [key(b.companyId, b.asset, b.account), toMoney(b._sum.amount ?? 0)]));
  for (const k of new Set([...fromEntries.keys(), ...running.keys()])) {
    const expected = fromEntries.get(k) ?? new Money(0);
    const actual = running.get(k) ?? new Money(0);
    if (!expected.eq(actual)) problems.push({ check: 'running-balance', mode: modeOf(k.split('/')[0]), key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }
  // Single shards may be negative; the merchant's available money (their sum) never is (postJournal's exact check),
  // nor what operations in flight hold (withdrawals', and any feature's account of held money).
  const buckets = balanceBuckets(options.accounts);
  const neverNegative = new Set([...buckets].filter(([, b]) => b === 'available' || b === 'held').map(([account]) => account));
  for (const [k, amount] of running) {
    if (neverNegative.has(k.slice(k.lastIndexOf('/') + 1)) && amount.isNegative()) {
      problems.push({ check: 'negative-balance', mode: modeOf(k.split('/')[0]), key: k, expected: '>= 0', actual: amount.toFixed() });
    }
  }

  // On-chain view: confirmed transfers we received minus what the features sent (refunds, done withdrawals, ...), per company and asset.
  const received = await db.$queryRaw<Row[]>`
    SELECT "companyId"::text AS "companyId", "asset", SUM("amount")::text AS total FROM "ChainTransfer"
    WHERE "state" = 'confirmed' GROUP BY "companyId", "asset"`;
  const paidOut = options.checks.flatMap((c) => (c.paidOut ? [c.paidOut] : []));
  const sent = paidOut.length === 0 ? [] : await db.$queryRaw<Row[]>`
    SELECT "companyId", "asset", SUM("amount")::text AS total FROM (${Prisma.join(paidOut, ' UNION ALL ')}) sent GROUP BY "companyId", "asset"`;
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
    if (!expected.eq(actual)) problems.push({ check: 'chain-records', mode: modeOf(k.split('/')[0]), key: k, expected: expected.toFixed(), actual: actual.toFixed() });
  }

  for (const check of options.checks) {
    problems.push(...(await check.problems(db)).map(({ companyId, ...p }) => ({ ...p, mode: modeOf(companyId) })));
  }

  const counts = await db.$queryRaw<{ mode: Mode; journals: number; entries: number }[]>`
    SELECT c."mode", COUNT(DISTINCT e."journalId")::int AS journals, COUNT(*)::int AS entries
    FROM "LedgerEntry" e JOIN "Company" c ON c."id" = e."companyId" GROUP BY c."mode"`;
  const checked = MODES.filter((m) => !options.mode || m === options.mode);
  const mine = problems.filter((p) => checked.includes(p.mode));
  const mineCounts = counts.filter((c) => checked.includes(c.mode));
  return {
    ok: mine.length === 0,
    mode: options.mode ?? null,
    journals: mineCounts.reduce((n, c) => n + c.journals, 0),
    entries: mineCounts.reduce((n, c) => n + c.entries, 0),
    balances: options.mode ? [...running.keys()].filter((k) => checked.includes(modeOf(k.split('/')[0]))).length : balances.length,
    problems: mine,
    modes: Object.fromEntries(
      checked.map((m) => {
        const n = mine.filter((p) => p.mode === m).length;
        return [m, { ok: n === 0, journals: counts.find((c) => c.mode === m)?.journals ?? 0, problems: n }];
      }),
    ),
    custodySurpluses: checked.includes('live') ? custodySurpluses : [],
  };
}
