// The checks after quiet: one line each, PASS or FAIL with its figures.
import type pg from 'pg';
import type { Address, Hex } from 'viem';
import type { Anvil } from '../../test/support/anvil-node.ts';
import type { AckedWrite, Ledger, Tenant } from './model.ts';
import type { Arrival } from './receivers.ts';
import type { Subscriber } from './subscribers.ts';

export interface Verdict {
  name: string;
  pass: boolean;
  figures: string;
}

/** Every acknowledged write is there, in the state its answer said. */
export async function acknowledgedWrites(db: pg.Pool, acked: AckedWrite[]): Promise<Verdict> {
  const byKind = new Map<AckedWrite['kind'], AckedWrite[]>();
  for (const w of acked) byKind.set(w.kind, [...(byKind.get(w.kind) ?? []), w]);
  const found = async (sql: string, ids: string[]) => new Set((await db.query<{ id: string }>(sql, [ids])).rows.map((r) => r.id));
  const missing: string[] = [];
  const figures: string[] = [];
  for (const [kind, writes] of byKind) {
    const ids = writes.map((w) => w.id);
    let present: Set<string>;
    switch (kind) {
      case 'invoice':
        present = await found(`SELECT "id" FROM "Invoice" WHERE "id" = ANY($1)`, ids);
        break;
      case 'proceed':
        present = await found(`SELECT "id" FROM "Invoice" WHERE "id" = ANY($1) AND "paymentCurrency" IS NOT NULL AND "status" <> 'created'`, ids);
        break;
      case 'transfer':
        present = await found(`SELECT "id"::text AS id FROM "ChainTransfer" WHERE "id" = ANY($1::uuid[])`, ids);
        break;
      case 'withdrawal':
        present = await found(`SELECT "uid"::text AS id FROM "Withdrawal" WHERE "uid" = ANY($1::uuid[])`, ids);
        break;
      case 'withdrawal-confirm': {
        const rows = (await db.query<{ id: string; status: string }>(`SELECT "uid"::text AS id, "status" FROM "Withdrawal" WHERE "uid" = ANY($1::uuid[])`, [ids])).rows;
        const status = new Map(rows.map((r) => [r.id, r.status]));
        present = new Set(writes.filter((w) => status.get(w.id) === w.detail).map((w) => w.id));
        break;
      }
      case 'refund':
        present = await found(`SELECT "invoiceId" AS id FROM "Refund" WHERE "invoiceId" = ANY($1)`, ids);
        break;
      case 'static-address':
        present = await found(`SELECT "id" FROM "StaticAddress" WHERE "id" = ANY($1)`, ids);
        break;
      case 'webhook-url': {
        const rows = (await db.query<{ id: string; url: string | null }>(`SELECT "id"::text AS id, "webhookUrl" AS url FROM "Company" WHERE "id" = ANY($1::uuid[])`, [ids])).rows;
        present = new Set(rows.filter((r) => writes.some((w) => w.id === r.id && w.detail === r.url)).map((r) => r.id));
        break;
      }
      case 'auto-withdrawal':
        present = await found(`SELECT "companyId"::text AS id FROM "AutoWithdrawal" WHERE "companyId" = ANY($1::uuid[]) AND "isEnabled"`, ids);
        break;
    }
    const lost = writes.filter((w) => !present.has(w.id));
    figures.push(`${kind} ${writes.length - lost.length}/${writes.length}`);
    missing.push(...lost.map((w) => `${kind} ${w.id}`));
  }
  return { name: 'acknowledged writes exist', pass: missing.length === 0, figures: `${acked.length} writes: ${figures.join(', ')}${missing.length ? `; missing: ${missing.slice(0, 5).join(', ')}` : ''}` };
}

interface EventRow {
  id: string;
  seq: string;
  subjectId: string | null;
  type: string;
  delivered: boolean;
  failed: boolean;
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/** An event's recorded attempts (start, answer) and its arrivals at the receiver (time, answer), for a sample. */
async function attemptHistory(db: pg.Pool, arrivals: Arrival[], eventId: string): Promise<string> {
  const attempts = (
    await db.query<{ attempt: number; startedAt: Date; durationMs: number; statusCode: number | null; error: string | null }>(
      `SELECT a."attempt", a."startedAt", a."durationMs", a."statusCode", a."error" FROM "WebhookAttempt" a
       JOIN "WebhookDelivery" d ON d."id" = a."deliveryId" WHERE d."eventId" = $1 ORDER BY a."startedAt"`,
      [eventId],
    )
  ).rows;
  const recorded = attempts.map((a) => `#${a.attempt} ${clock(a.startedAt.getTime())}+${a.durationMs}ms ${a.statusCode ?? a.error?.slice(0, 40) ?? '?'}`);
  const seen = arrivals.filter((a) => a.eventId === eventId).map((a) => `${clock(a.at)} ${a.answered || 'hang'}`);
  return `attempts [${recorded.join(', ')}] arrivals [${seen.join(', ')}]`;
}

/**
 * Webhooks, per endpoint: every event with a delivery reached the receiver with a 2xx at least once; an event of a
 * type that is delivered elsewhere has its delivery (the outbox wrote it); the first arrivals keep event order within
 * the documented window; acknowledged duplicates stay within the duplicate bound.
 */
export async function webhookChecks(db: pg.Pool, tenants: Tenant[], ledger: Ledger, pipeline: number): Promise<{ verdicts: Verdict[]; notes: string[] }> {
  const deliveredTypes = new Set((await db.query<{ type: string }>(`SELECT DISTINCT e."type" FROM "Event" e JOIN "WebhookDelivery" d ON d."eventId" = e."id"`)).rows.map((r) => r.type));
  let events = 0;
  let lost = 0;
  let withoutDelivery = 0;
  let badSignatures = 0;
  let notReserialisable = 0;
  const reserialisedSamples: string[] = [];
  const lostSamples: string[] = [];
  let inversions = 0;
  let worstInversion = 0;
  let beyondWindow = 0;
  const orderSamples: string[] = [];
  let duplicates = 0;
  let worstDuplicates = 0;
  const resends = (ledger.faults.counts.get('kill -9 webhooks-worker') ?? 0) + (ledger.faults.counts.get('pg_terminate_backend') ?? 0);
  const bound = pipeline * resends;
  let overBound = 0;
  for (const t of tenants) {
    const rows = (
      await db.query<EventRow>(
        `SELECT e."id", e."seq"::text AS seq, e."subjectId", e."type",
           EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."eventId" = e."id") AS delivered,
           EXISTS (SELECT 1 FROM "WebhookDelivery" d WHERE d."eventId" = e."id" AND d."status" = 'failed') AS failed
         FROM "Event" e WHERE e."companyId" = $1 ORDER BY e."seq"`,
        [t.tenantId],
      )
    ).rows;
    const acknowledged = new Map<string, number>();
    const firstArrival = new Map<string, number>();
    t.receiver.arrivals.forEach((a) => {
      if (!a.signatureValid) badSignatures++;
      if (a.signatureValid && !a.reserialisedValid) {
        notReserialisable++;
        if (a.body && reserialisedSamples.length < 2) reserialisedSamples.push(a.body.slice(0, 300));
      }
      if (!firstArrival.has(a.eventId)) firstArrival.set(a.eventId, firstArrival.size);
      if (a.acknowledged) acknowledged.set(a.eventId, (acknowledged.get(a.eventId) ?? 0) + 1);
    });
    const expected = rows.filter((r) => r.delivered);
    withoutDelivery += rows.filter((r) => !r.delivered && deliveredTypes.has(r.type)).length;
    events += expected.length;
    for (const r of expected) {
      if (!acknowledged.has(r.id)) {
        lost++;
        if (lostSamples.length < 5) lostSamples.push(`${t.label} ${r.type} ${r.id}${r.failed ? ' (failed)' : ''}`);
      }
    }
    // Order: events of one subject are committed in seq order (its row lock), so the worker starts their first
    // attempts in that order; with WEBHOOK_PIPELINE requests in flight, an earlier event may arrive after a later
    // one, with at most 2 x (pipeline - 1) other first arrivals between them (those in flight beside it).
    const bySubject = new Map<string, EventRow[]>();
    for (const r of expected) bySubject.set(r.subjectId ?? r.id, [...(bySubject.get(r.subjectId ?? r.id) ?? []), r]);
    for (const list of bySubject.values()) {
      for (let i = 0; i < list.length; i++) {
        for (let j = i + 1; j < list.length; j++) {
          const earlier = firstArrival.get(list[i]!.id);
          const later = firstArrival.get(list[j]!.id);
          if (earlier === undefined || later === undefined || later > earlier) continue;
          inversions++;
          const distance = earlier - later;
          worstInversion = Math.max(worstInversion, distance);
          if (distance > 2 * (pipeline - 1)) {
            beyondWindow++;
            if (orderSamples.length < 3) {
              const [a, b] = [list[i]!, list[j]!];
              orderSamples.push(
                `${t.label}: ${a.type} ${a.id} (seq ${a.seq}) arrived ${distance} after ${b.type} ${b.id} (seq ${b.seq}); ` +
                  `earlier ${await attemptHistory(db, t.receiver.arrivals, a.id)}; later ${await attemptHistory(db, t.receiver.arrivals, b.id)}`,
              );
            }
          }
        }
      }
    }
    let endpointDuplicates = 0;
    for (const n of acknowledged.values()) endpointDuplicates += n - 1;
    duplicates += endpointDuplicates;
    worstDuplicates = Math.max(worstDuplicates, endpointDuplicates);
    if (endpointDuplicates > bound) overBound++;
  }
  const notes = notReserialisable
    ? [
        `${notReserialisable} webhooks whose spec signature holds over the body but not over the parsed JSON serialised again (the spec's example; docs/webhooks.md says both work), e.g. ${reserialisedSamples.join(' | ')}`,
      ]
    : [];
  const verdicts = [
    {
      name: 'every committed event delivered at least once',
      pass: lost === 0 && withoutDelivery === 0 && badSignatures === 0,
      figures: `${events} events to ${tenants.length} endpoints, ${lost} never acknowledged, ${withoutDelivery} without a delivery row, ${badSignatures} bad signatures${lostSamples.length ? `; e.g. ${lostSamples.join(', ')}` : ''}`,
    },
    {
      name: 'webhooks in order per endpoint within the pipeline window',
      pass: beyondWindow === 0,
      figures: `${inversions} same-subject pairs arrived swapped, the widest ${worstInversion} arrivals apart (window ${2 * (pipeline - 1)}, WEBHOOK_PIPELINE=${pipeline}), ${beyondWindow} beyond it${orderSamples.length ? `; e.g. ${orderSamples.join('; ')}` : ''}`,
    },
    {
      name: 'webhook duplicates within the documented bound',
      pass: overBound === 0,
      figures: `${duplicates} acknowledged twice, at most ${worstDuplicates} on one endpoint; bound ${bound} per endpoint (pipeline ${pipeline} x ${resends} worker kills and session terminations)`,
    },
  ];
  return { verdicts, notes };
}

const cursorKey = (c: string) => {
  const [txid, seq] = c.split('.');
  return [BigInt(txid!), BigInt(seq!)] as const;
};

/** Every subscriber that resumed saw every change of its subjects since its first message, once per connection. */
export async function subscriberCheck(db: pg.Pool, subscribers: Subscriber[]): Promise<Verdict> {
  let resumed = 0;
  let expectedTotal = 0;
  let missing = 0;
  let phantom = 0;
  let repeated = 0;
  let errors = 0;
  const samples: string[] = [];
  for (const s of subscribers) {
    if (s.resumes === 0) continue;
    resumed++;
    const { expected, got } = await subscriberSets(db, s, 'last');
    expectedTotal += expected.size;
    for (const c of expected) if (!got.has(c)) missing++;
    for (const c of got) if (!expected.has(c)) phantom++;
    for (const conn of s.connections) repeated += conn.length - new Set(conn).size;
    errors += s.errors.length;
    if (s.errors.length && samples.length < 3) samples.push(`${s.label}: ${s.errors[0]}`);
  }
  const resumes = subscribers.reduce((n, s) => n + s.resumes, 0);
  return {
    name: 'resumed subscribers saw every change exactly once',
    pass: resumed > 0 && missing === 0 && phantom === 0 && repeated === 0,
    figures: `${resumed}/${subscribers.length} subscribers resumed ${resumes} times; ${expectedTotal} changes expected, ${missing} missing, ${phantom} unknown, ${repeated} repeated within a connection; ${errors} errors${samples.length ? ` (${samples.join('; ')})` : ''}`,
  };
}

/**
 * What a subscriber should have seen and what it saw (de-duplicated by cursor): the events of its merchant's invoices
 * from its first message on, up to its last one (`until: 'last'`, the check: events committed after it stopped are
 * not its to see; the quiet phase already waited until it had every event in the table) or all of them (`'all'`).
 */
export async function subscriberSets(db: pg.Pool, s: Subscriber, until: 'last' | 'all'): Promise<{ expected: Set<string>; got: Set<string> }> {
  const all = s.connections.flat();
  const got = new Set(all);
  if (all.length === 0) return { expected: new Set(), got };
  const [txid, seq] = cursorKey(all[0]!);
  const last = all.reduce((a, b) => {
    const [at, as] = cursorKey(a);
    const [bt, bs] = cursorKey(b);
    return bt > at || (bt === at && bs > as) ? b : a;
  });
  const [lastTxid, lastSeq] = until === 'last' ? cursorKey(last) : [BigInt('9223372036854775807'), BigInt('9223372036854775807')];
  const rows = (
    await db.query<{ c: string }>(
      `SELECT "txid"::text || '.' || "seq"::text AS c FROM "Event"
       WHERE "companyId" = $1 AND "subjectType" = 'invoice' AND "subjectId" IS NOT NULL
         AND ("txid", "seq") >= ($2::bigint, $3::bigint) AND ("txid", "seq") <= ($4::bigint, $5::bigint)`,
      [s.tenantId, txid.toString(), seq.toString(), lastTxid.toString(), lastSeq.toString()],
    )
  ).rows;
  return { expected: new Set(rows.map((r) => r.c)), got };
}

/**
 * No withdrawal or refund paid twice: every transaction from the hot wallet on anvil matches one recorded live
 * withdrawal or refund (hash and receiver), and each recorded one is on chain once.
 */
export async function chainPayoutCheck(db: pg.Pool, anvil: Anvil, hot: Address): Promise<Verdict> {
  const records = (
    await db.query<{ id: string; to: string; txHash: string | null; kind: string }>(
      `SELECT w."uid"::text AS id, w."toAddress" AS "to", w."txHash", 'withdrawal' AS kind FROM "Withdrawal" w JOIN "Company" c ON c."id" = w."companyId" WHERE c."mode" = 'live'
       UNION ALL SELECT r."id"::text, r."toAddress", r."txHash", 'refund' FROM "Refund" r JOIN "Company" c ON c."id" = r."companyId" WHERE c."mode" = 'live'`,
    )
  ).rows;
  const head = await anvil.height();
  const sent: { hash: Hex; to: string }[] = [];
  for (let n = 0; n <= head; n++) {
    const block = await anvil.public.getBlock({ blockNumber: BigInt(n), includeTransactions: true });
    for (const tx of block.transactions) if (tx.from.toLowerCase() === hot.toLowerCase() && tx.to) sent.push({ hash: tx.hash, to: tx.to.toLowerCase() });
  }
  const byTo = new Map<string, number>();
  for (const s of sent) byTo.set(s.to, (byTo.get(s.to) ?? 0) + 1);
  const recordedTo = new Map<string, number>();
  const hashes = new Set<string>();
  for (const r of records) {
    if (!r.txHash) continue;
    hashes.add(r.txHash.toLowerCase());
    recordedTo.set(r.to.toLowerCase(), (recordedTo.get(r.to.toLowerCase()) ?? 0) + 1);
  }
  let twice = 0;
  for (const [to, n] of byTo) if (n > (recordedTo.get(to) ?? 0)) twice++;
  const unrecorded = sent.filter((s) => !hashes.has(s.hash.toLowerCase())).length;
  const onChain = new Set(sent.map((s) => s.hash.toLowerCase()));
  const notOnChain = [...hashes].filter((h) => !onChain.has(h)).length;
  const withdrawals = records.filter((r) => r.kind === 'withdrawal' && r.txHash).length;
  const refunds = records.filter((r) => r.kind === 'refund' && r.txHash).length;
  return {
    name: 'no withdrawal or refund paid twice on chain',
    pass: twice === 0 && unrecorded === 0 && notOnChain === 0,
    figures: `${sent.length} hot-wallet transactions in ${head + 1} blocks for ${withdrawals} live withdrawals and ${refunds} refunds sent; ${twice} receivers paid more often than recorded, ${unrecorded} transactions unrecorded, ${notOnChain} recorded hashes not on chain`,
  };
}

/** No merchant balance below zero: in every read during the run, and summed from the ledger at the end. */
export async function balanceCheck(db: pg.Pool, ledger: Ledger): Promise<Verdict> {
  const { rows } = await db.query<{ k: string; total: string }>(
    `SELECT "companyId"::text || ' ' || "asset" || ' ' || "account" AS k, SUM("amount")::text AS total FROM "LedgerEntry"
     WHERE "account" IN ('merchant_available', 'merchant_held') GROUP BY "companyId", "asset", "account" HAVING SUM("amount") < 0`,
  );
  const { rows: count } = await db.query<{ n: number }>(
    `SELECT COUNT(*)::int AS n FROM (SELECT 1 FROM "LedgerEntry" WHERE "account" IN ('merchant_available', 'merchant_held') GROUP BY "companyId", "asset", "account") b`,
  );
  const reads = ledger.ops.counts;
  const balanceReads = [...reads.entries()].filter(([k]) => k.endsWith('balances.read')).reduce((n, [, v]) => n + v, 0);
  return {
    name: 'balances never negative',
    pass: rows.length === 0 && ledger.negativeBalances.length === 0,
    figures: `${balanceReads} reads during the run (${ledger.negativeBalances.length} negative), ${count[0]!.n} balances at the end (${rows.length} negative)${rows.length ? `: ${rows[0]!.k} ${rows[0]!.total}` : ''}`,
  };
}
