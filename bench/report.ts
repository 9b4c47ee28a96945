// Turns measurements into the printed table, the target verdicts and the JSON written to bench/results/.
import type { StatementCheck } from './capture.ts';
import type { Measurement } from './load.ts';
import type { PaymentResult } from './payments.ts';

export type DbKind = 'postgres' | 'pglite';

export const RUNS = [
  { key: 'ceilingInsert', label: 'ceiling: 1 INSERT, no tx (bare http)' },
  { key: 'baselineCreate', label: 'baseline create, same SQL (bare http)' },
  { key: 'restCreate', label: 'REST create' },
  { key: 'graphqlCreate', label: 'GraphQL create' },
  { key: 'baselineRead', label: 'baseline read, REST SQL (bare http)' },
  { key: 'restRead', label: 'REST read' },
  { key: 'baselineGraphqlRead', label: 'baseline read, GraphQL SQL (bare http)' },
  { key: 'graphqlRead', label: 'GraphQL read' },
] as const;

export type RunKey = (typeof RUNS)[number]['key'];

/** What each run is divided by in the "ratio" column. */
const RATIO_OF: Partial<Record<RunKey, RunKey>> = {
  baselineCreate: 'ceilingInsert',
  restCreate: 'baselineCreate',
  graphqlCreate: 'baselineCreate',
  restRead: 'baselineRead',
  graphqlRead: 'baselineGraphqlRead',
};

/** Informational targets; they apply to the service on PostgreSQL. */
// Issue 8: REST create >= 45% of its same-SQL baseline, confirmed payments >= 60% of REST create, p99 < 100 ms.
export const TARGETS = { restCreateRatio: 0.45, graphqlCreateRatio: 0.3, paymentRatio: 0.6, p99Ms: 100 };
const SERVICE_RUNS: RunKey[] = ['restCreate', 'graphqlCreate', 'restRead', 'graphqlRead'];

export interface DbResult {
  db: DbKind;
  runs: Partial<Record<RunKey, Measurement>>;
  /** Set when the section crashed; the runs before the crash are kept. */
  error?: string;
  statementCheck?: StatementCheck[];
  payments?: PaymentResult;
}

export interface Verdict {
  db: DbKind;
  name: string;
  value: number | null;
  target: string;
  pass: boolean | null;
}

export function ratio(r: DbResult, key: RunKey): number | null {
  const of = RATIO_OF[key];
  const a = r.runs[key];
  const b = of ? r.runs[of] : undefined;
  return a && b && b.reqPerSec > 0 ? a.reqPerSec / b.reqPerSec : null;
}

/** Confirmed transfers per second over REST creates per second: the median of rounds of a create run right before a payment run. */
export function paymentRatio(r: DbResult): number | null {
  return r.payments && r.payments.rounds.length ? r.payments.ratio : null;
}

export function verdicts(results: DbResult[]): Verdict[] {
  const out: Verdict[] = [];
  for (const r of results.filter((x) => x.db === 'postgres')) {
    const rc = ratio(r, 'restCreate');
    const gc = ratio(r, 'graphqlCreate');
    out.push({ db: r.db, name: 'REST create / baseline create', value: rc, target: `>= ${pct(TARGETS.restCreateRatio)}`, pass: rc === null ? null : rc >= TARGETS.restCreateRatio });
    out.push({ db: r.db, name: 'GraphQL create / baseline create', value: gc, target: `>= ${pct(TARGETS.graphqlCreateRatio)}`, pass: gc === null ? null : gc >= TARGETS.graphqlCreateRatio });
    const pr = paymentRatio(r);
    out.push({ db: r.db, name: 'confirmed payments / REST create', value: pr, target: `>= ${pct(TARGETS.paymentRatio)}`, pass: pr === null ? null : pr >= TARGETS.paymentRatio });
    for (const key of SERVICE_RUNS) {
      const m = r.runs[key];
      out.push({ db: r.db, name: `${label(key)} p99`, value: m?.p99 ?? null, target: `< ${TARGETS.p99Ms} ms`, pass: m ? m.p99 < TARGETS.p99Ms : null });
    }
  }
  return out;
}

const paymentsConsistent = (p: PaymentResult) => p.doneInvoices === p.warmupConfirmed + p.confirmed;
const label = (key: RunKey) => RUNS.find((r) => r.key === key)!.label;
const pct = (x: number) => `${Math.round(x * 100)}%`;
const num = (x: number, digits = 0) => x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const verdictText = (pass: boolean | null) => (pass === null ? 'n/a' : pass ? 'PASS' : 'MISS');

function table(header: string[], rows: string[][], rightAligned: Set<number>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * What makes the run fail (exit status 1): errors and failed correctness checks. Missed speed targets are only
 * reported.
 */
export function problems(results: DbResult[]): string[] {
  const found: string[] = [];
  for (const r of results) {
    if (r.error) found.push(`${r.db} section crashed: ${r.error}`);
    for (const { key, label } of RUNS) {
      const m = r.runs[key];
      if (m && m.failures > 0) found.push(`ERRORS during ${r.db} ${label}: ${JSON.stringify(m.detail)}`);
    }
    for (const c of r.statementCheck ?? []) {
      if (!c.ok) found.push(`${r.db}: the SQL of "${c.operation}" drifted from bench/sql.ts (see above)`);
    }
    const p = r.payments;
    if (p) {
      for (const [i, round] of p.rounds.entries()) {
        if (round.payments.failures > 0) found.push(`ERRORS during ${r.db} payments, round ${i + 1}: ${JSON.stringify(round.payments.detail)}`);
        if (round.create.failures > 0) found.push(`ERRORS during ${r.db} creates, round ${i + 1}: ${JSON.stringify(round.create.detail)}`);
      }
      if (p.complete && !paymentsConsistent(p)) found.push(`${r.db} payments: ${p.doneInvoices} invoices done, ${p.warmupConfirmed + p.confirmed} transfers confirmed`);
      for (const problem of p.ledger.problems) found.push(`${r.db} ledger ${problem.check} ${problem.key}: expected ${problem.expected}, found ${problem.actual}`);
      if (!p.ledger.ok && p.ledger.problems.length === 0) found.push(`${r.db} ledger: verification failed`);
    }
  }
  return found;
}

export function renderReport(results: DbResult[], settings: { connections: number; durationSec: number; warmupSec: number }): string {
  const out: string[] = [];
  out.push(`Payrail invoice benchmark — ${settings.connections} connections, ${settings.durationSec} s per run after ${settings.warmupSec} s warm-up, DB pool 10`);
  const rows: string[][] = [];
  for (const r of results) {
    for (const { key, label } of RUNS) {
      const m = r.runs[key];
      const q = ratio(r, key);
      const of = RATIO_OF[key];
      let target = '';
      if (r.db === 'postgres' && key === 'restCreate' && q !== null) target = `>=${pct(TARGETS.restCreateRatio)} ${verdictText(q >= TARGETS.restCreateRatio)}`;
      if (r.db === 'postgres' && key === 'graphqlCreate' && q !== null) target = `>=${pct(TARGETS.graphqlCreateRatio)} ${verdictText(q >= TARGETS.graphqlCreateRatio)}`;
      if (r.db === 'postgres' && m && SERVICE_RUNS.includes(key)) target += `${target ? ', ' : ''}p99 ${verdictText(m.p99 < TARGETS.p99Ms)}`;
      rows.push([
        r.db,
        label,
        m ? num(m.reqPerSec) : '-',
        m ? num(m.p50) : '-',
        m ? num(m.p99) : '-',
        m ? (m.failures ? `${num(m.failures)} !!` : '0') : '-',
        q === null ? '' : `${pct(q)} of ${of === 'ceilingInsert' ? 'ceiling' : 'baseline'}`,
        target,
      ]);
    }
  }
  out.push(table(['db', 'operation', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'ratio', 'target'], rows, new Set([2, 3, 4, 5])));

  const paid = results.filter((r) => r.payments);
  if (paid.length) {
    out.push('');
    out.push('Payments: confirmed sandbox transfers (POST /api/sandbox/transfers), each paying its own proceeded invoice;');
    out.push('each round a REST create run right before a payment run, the median round shown');
    const prows = paid.map((r) => {
      const p = r.payments!;
      const q = paymentRatio(r);
      const failures = p.rounds.reduce((n, x) => n + x.payments.failures, 0);
      const done = `${num(p.doneInvoices)} = ${num(p.warmupConfirmed)} + ${num(p.confirmed)}`;
      return [
        r.db,
        num(p.run.reqPerSec),
        num(p.run.p50),
        num(p.run.p99),
        failures ? `${num(failures)} !!` : '0',
        q === null ? '' : pct(q),
        `${done} ${!p.complete ? 'n/a (cut by time)' : paymentsConsistent(p) ? 'ok' : 'MISMATCH'}`,
        p.ledger.ok ? `ok (${num(p.ledger.journals)} journals)` : `${p.ledger.problems.length} PROBLEMS`,
      ];
    });
    out.push(
      table(
        ['db', 'transfers/s', 'p50 ms', 'p99 ms', 'errors', 'of REST create', 'done invoices = warm-up + run', 'ledger'],
        prows,
        new Set([1, 2, 3, 4, 5]),
      ),
    );
    for (const r of paid) {
      const p = r.payments!;
      const rounds = p.rounds.map((x) => `${num(x.create.reqPerSec)} creates/s then ${num(x.payments.reqPerSec)} transfers/s (${pct(x.ratio)})`);
      out.push(`  ${r.db}: rounds (median shown above): ${rounds.join('; ')}`);
      out.push(`  ${r.db}: ${num(p.invoices)} transfers in the timed runs; ${num(p.prepared)} invoices prepared in ${num(p.prepareSec, 1)} s`);
      for (const problem of p.ledger.problems) out.push(`  !!! ${r.db} ledger ${problem.check} ${problem.key}: expected ${problem.expected}, found ${problem.actual}`);
    }
  }

  out.push('');
  out.push('Targets (PostgreSQL, informational):');
  for (const v of verdicts(results)) {
    const value = v.value === null ? 'n/a' : v.name.endsWith('p99') ? `${num(v.value)} ms` : pct(v.value);
    out.push(`  ${verdictText(v.pass).padEnd(4)}  ${v.name}: ${value} (target ${v.target})`);
  }

  for (const r of results) {
    for (const c of r.statementCheck ?? []) {
      if (!c.ok) {
        out.push('');
        out.push(`!!! ${r.db}: the service's SQL for "${c.operation}" differs from bench/sql.ts; the baseline no longer replays it. Observed:`);
        const observed = c.observed ?? [];
        if (!observed.length) out.push('      (no statements: the request failed before reaching the database?)');
        for (const s of observed) out.push(`      ${s}`);
      }
    }
  }
  const found = problems(results);
  if (found.length) {
    out.push('');
    out.push('!'.repeat(100));
    for (const f of found) out.push(`!!! ${f}`);
    out.push('!!! Numbers from runs with errors are not comparable; the bench exits with status 1.');
    out.push('!'.repeat(100));
  }
  return out.join('\n');
}
