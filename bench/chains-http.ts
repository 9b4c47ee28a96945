// How fast each HTTP chain adapter's scan goes through a chain's history, against the fake APIs of the tests
// (test/support/fake-chains: answers built once and served from memory), next to a baseline in the same run that
// reads the very same answers with plain fetch and JSON.parse and does nothing with them.
//
//   Tron:   blocks of 100 transfers (50 TRX, 50 USDT) to addresses among 100,000 watched; unit: blocks
//           (getblockbynum + gettransactioninfobyblocknum each, 4 blocks at a time, as the adapter reads them).
//   TON:    pages of 100 wallet transactions whose comments are tags among 100,000 handed out; unit: pages
//           (getTransactions, paged by lt/hash: one at a time, each page names the next).
//   Solana: pages of 100 wallet signatures, each a payment naming one of 100,000 reference keys; unit: pages
//           (getSignaturesForAddress, then one getTransaction batch of 100). Polling each reference instead (Solana
//           Pay's own way) costs one call per open payment per poll: measured too, as calls/s and the time one poll
//           of 100,000 references would take at that rate.
//
// What the adapters do beyond the baseline: parsing with exact integers, matching against the watched set, building
// reports (delivered to a counter here, not to the payments processor: that is bench/payments.ts's subject), the
// scan's own database reads (watched-set refresh, open sends) on an embedded PGlite. The fake runs in this process,
// so its (small) serving cost is in both columns. Env: BENCH_ROUNDS (default 3; the median is shown).
//
// Then the providers' quotas: each adapter with the rateLimit of its provider's documented quota (TronGrid 100,000
// requests a day and 15/s per key; toncenter 1/s without a key; Solana's public RPC 40 calls per method and 100 in all
// per 10 s), its requests counted at the fake: per hour at steady state (the default poll, the chain's block rate and
// a payment every 10 s), and during a catch-up of 1,000 blocks (Tron) or 1,000 transactions (TON, Solana) after an
// outage. The limiter runs on a virtual clock that its waits move on (a request itself takes no time there): the hours
// of a provider are simulated in seconds, and what bounds a catch-up is the quota, not this machine.
// BENCH_QUOTAS_ONLY=1 runs only this part.
import { randomBytes, randomInt } from 'node:crypto';
import { base58 } from '@scure/base';
import { encodeAddress } from '../src/chains/address-formats.ts';
import { limiterKey } from '../src/chains/node-endpoint.ts';
import { useLimiterClock, type Clock, type RateLimitConfig } from '../src/chains/rate-limit.ts';
import { solanaChainSchema, tonChainSchema, tronChainSchema } from '../src/chains/config.ts';
import type { ChainContext, NodeAdapter } from '../src/chains/registry.ts';
import { Signer } from '../src/chains/signer.ts';
import { solanaAdapter } from '../src/chains/solana/adapter.ts';
import { tonAdapter } from '../src/chains/ton/adapter.ts';
import { tronAdapter, type TronState } from '../src/chains/tron/adapter.ts';
import type { Network } from '../src/domain/assets.ts';
import { openDatabase, type Db } from '../src/db/client.ts';
import { createLogger } from '../src/logger.ts';
import { FAKE_USDT_CONTRACT, startFakeChains, type FakeChains } from '../test/support/fake-chains/index.ts';
import { log } from './common.ts';

const WATCHED = 100_000;
const PER_BLOCK = 100;
const BLOCKS = 200;
const PAGES = 200;
const PER_PAGE = 100;
const REFERENCE_POLLS = 2_000;
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
/** The signer's mnemonic of the tests (never for money): the Tron adapter checks its xpub against it. */
const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

interface Row {
  chain: string;
  unit: string;
  adapter: number;
  baseline: number;
  transfers: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(run: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** 100,000 identifiers handed out on `network`, as allocateIndex would have written them. */
async function watch(db: Db, network: Network, make: () => string): Promise<string[]> {
  const values = [...new Set(Array.from({ length: WATCHED * 1.01 }, make))].slice(0, WATCHED);
  for (let i = 0; i < values.length; i += 10_000) {
    const chunk = values.slice(i, i + 10_000);
    await db.$executeRaw`
      INSERT INTO "DerivedAddress" ("network", "index", "address", "ownerId")
      SELECT ${network}, t.i, t.a, 'bench' FROM unnest(${chunk.map((_, j) => i + j)}::int[], ${chunk}::text[]) AS t(i, a)`;
  }
  return values;
}

const pick = <T>(xs: T[]) => xs[randomInt(xs.length)]!;

async function fetchJson(url: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return JSON.parse(await res.text());
}

async function benchTron(fake: FakeChains, context: ChainContext, counted: { reports: number }): Promise<Row> {
  const addresses = await watch(context.db, 'tron', () => encodeAddress('tron', randomBytes(20)));
  const first = fake.tron.head.number + 1;
  for (let b = 0; b < BLOCKS; b++) {
    fake.tron.addBlock(Array.from({ length: PER_BLOCK }, (_, i) => ({ asset: i % 2 ? 'usdt' : 'trx', to: pick(addresses), units: BigInt(1 + randomInt(1_000_000_000)) }) as const));
  }
  const last = fake.tron.head.number;
  // The answers are built once, before anything is timed.
  for (let n = first; n <= last; n++) for (const path of ['/wallet/getblockbynum', '/wallet/gettransactioninfobyblocknum']) fake.tron.handle(path, { num: n });
  const adapter = tronAdapter('tron', tronChainSchema.parse({ apiUrl: fake.tronUrl, xpub: Signer.fromMnemonic(MNEMONIC).accountXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, confirmations: 1 }), context);
  const load = await timed(async () => void (await adapter.scan({ next: last + 1, recent: [], pending: [] })));
  log(`tron: ${WATCHED} watched addresses loaded in ${load.toFixed(2)} s (once per process)`);

  const adapterRuns: number[] = [];
  const baselineRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    counted.reports = 0;
    adapterRuns.push(
      await timed(async () => {
        let state: TronState = { next: first, recent: [], pending: [] };
        while (state.next <= last) state = await adapter.scan(state);
      }),
    );
    if (counted.reports !== BLOCKS * PER_BLOCK) throw new Error(`tron: ${counted.reports} reports, expected ${BLOCKS * PER_BLOCK}`);
    baselineRuns.push(
      await timed(async () => {
        for (let n = first; n <= last; n += 4) {
          await fetchJson(`${fake.tronUrl}/wallet/getnowblock`, {});
          const batch = Array.from({ length: Math.min(4, last - n + 1) }, (_, i) => n + i);
          await Promise.all(batch.flatMap((num) => [fetchJson(`${fake.tronUrl}/wallet/getblockbynum`, { num, visible: true }), fetchJson(`${fake.tronUrl}/wallet/gettransactioninfobyblocknum`, { num })]));
        }
      }),
    );
  }
  return { chain: 'tron', unit: 'blocks', adapter: BLOCKS / median(adapterRuns), baseline: BLOCKS / median(baselineRuns), transfers: (BLOCKS * PER_BLOCK) / median(adapterRuns) };
}

async function benchTon(fake: FakeChains, context: ChainContext, counted: { reports: number }): Promise<Row> {
  const tags = await watch(context.db, 'ton', () => String(randomInt(1, 2 ** 47)));
  const adapter = tonAdapter('ton', tonChainSchema.parse({ apiUrl: fake.tonUrl, address: fake.ton.wallet }), context);
  const start = await adapter.initialState();
  for (let i = 0; i < PAGES * PER_PAGE; i++) fake.ton.add({ amount: `0.${String(1 + randomInt(999_999_999)).padStart(9, '0')}`, comment: pick(tags) });
  const newest = await adapter.initialState();
  // Build every answer once.
  const pages: { lt?: string; hash?: string }[] = [{}];
  for (let page = 0; ; page++) {
    const answer = (await fetchJson(`${fake.tonUrl}/getTransactions?${new URLSearchParams({ address: fake.ton.wallet, limit: String(PER_PAGE), ...pages[page], archival: 'true' })}`)) as { result: { transaction_id: { lt: string; hash: string } }[] };
    const oldest = answer.result.at(-1)!.transaction_id;
    if (BigInt(oldest.lt) <= BigInt(start.floor!.lt)) break;
    pages.push({ lt: oldest.lt, hash: oldest.hash });
  }
  await adapter.scan({ floor: newest.floor, backlog: null });

  const adapterRuns: number[] = [];
  const baselineRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    counted.reports = 0;
    adapterRuns.push(
      await timed(async () => {
        let state = await adapter.scan(start);
        while (state.backlog) state = await adapter.scan(state);
      }),
    );
    if (counted.reports !== PAGES * PER_PAGE) throw new Error(`ton: ${counted.reports} reports, expected ${PAGES * PER_PAGE}`);
    baselineRuns.push(
      await timed(async () => {
        for (const position of pages) {
          await fetchJson(`${fake.tonUrl}/getTransactions?${new URLSearchParams({ address: fake.ton.wallet, limit: String(PER_PAGE), ...position, archival: 'true' })}`);
        }
      }),
    );
  }
  return { chain: 'ton', unit: 'pages', adapter: pages.length / median(adapterRuns), baseline: pages.length / median(baselineRuns), transfers: (PAGES * PER_PAGE) / median(adapterRuns) };
}

async function benchSolana(fake: FakeChains, context: ChainContext, counted: { reports: number }): Promise<{ row: Row; pollsPerSecond: number }> {
  const references = await watch(context.db, 'solana', () => base58.encode(randomBytes(32)));
  const adapter = solanaAdapter('solana', solanaChainSchema.parse({ rpcUrl: fake.solanaUrl, address: fake.solana.wallet }), context);
  const start = await adapter.initialState();
  for (let i = 0; i < PAGES * PER_PAGE; i++) fake.solana.add({ amount: `0.${String(1 + randomInt(999_999_999)).padStart(9, '0')}`, references: [pick(references)] });
  fake.solana.finalize();
  const rpc = (method: string, params: unknown[]) => ({ jsonrpc: '2.0', id: 1, method, params });
  const pages: string[][] = [];
  for (let before: string | undefined; ; ) {
    const answer = (await fetchJson(fake.solanaUrl, rpc('getSignaturesForAddress', [fake.solana.wallet, { limit: PER_PAGE, before, until: start.history.floor!.signature, commitment: 'confirmed' }]))) as { result: { signature: string }[] };
    if (answer.result.length === 0) break;
    pages.push(answer.result.map((s) => s.signature));
    before = answer.result.at(-1)!.signature;
  }
  // Build every answer once, and load the references.
  for (const page of pages) await fetchJson(fake.solanaUrl, page.map((s) => rpc('getTransaction', [s, { encoding: 'json', maxSupportedTransactionVersion: 0 }])));
  await adapter.scan({ history: { floor: (await adapter.initialState()).history.floor, backlog: null }, pending: [] });

  const adapterRuns: number[] = [];
  const baselineRuns: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    counted.reports = 0;
    adapterRuns.push(
      await timed(async () => {
        let state = await adapter.scan(start);
        while (state.history.backlog) state = await adapter.scan(state);
      }),
    );
    if (counted.reports !== PAGES * PER_PAGE) throw new Error(`solana: ${counted.reports} reports, expected ${PAGES * PER_PAGE}`);
    baselineRuns.push(
      await timed(async () => {
        let before: string | undefined;
        for (const page of pages) {
          await fetchJson(fake.solanaUrl, rpc('getSignaturesForAddress', [fake.solana.wallet, { limit: PER_PAGE, before, until: start.history.floor!.signature, commitment: 'confirmed' }]));
          await fetchJson(fake.solanaUrl, page.map((s) => rpc('getTransaction', [s, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }])));
          before = page.at(-1);
        }
      }),
    );
  }
  const pollTime = await timed(async () => {
    const worker = async (offset: number) => {
      for (let i = offset; i < REFERENCE_POLLS; i += 8) await fetchJson(fake.solanaUrl, rpc('getSignaturesForAddress', [references[i]!, { limit: 10, commitment: 'confirmed' }]));
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => worker(i)));
  });
  return {
    row: { chain: 'solana', unit: 'pages', adapter: pages.length / median(adapterRuns), baseline: pages.length / median(baselineRuns), transfers: (PAGES * PER_PAGE) / median(adapterRuns) },
    pollsPerSecond: REFERENCE_POLLS / pollTime,
  };
}

/** A clock that only the limiter's waits (and the simulation) move on. */
function virtualClock(): Clock & { advance(ms: number): void } {
  let t = Date.UTC(2026, 0, 1, 0, 5);
  return {
    now: () => t,
    sleep: async (ms) => void (t += ms),
    advance: (ms) => void (t += ms),
  };
}

interface QuotaRow {
  chain: string;
  quota: string;
  /** Requests per hour the quota allows on average (the binding one). */
  quotaPerHour: number;
  steadyPerHour: number;
  /** Of the method with the most calls (Solana's per-method limit). */
  steadyBusiestMethodPerHour: number;
  catchUp: { what: string; requests: number; seconds: number; perHour: number; peakPerSecond: number; peakPer10s: number };
}

const HOUR = 3_600_000;
/** Polls in the steady stretch each provider is measured over. */
const STEADY_POLLS = 60;

/** A provider's row from what one steady stretch and one catch-up cost (`times`: when each catch-up request went out). */
function quotaRow(
  provider: { chain: string; quota: string; quotaPerHour: number; what: string },
  pollMs: number,
  steady: { total: number; byMethod: Map<string, number> },
  catchUp: { total: number },
  seconds: number,
  times: number[],
): QuotaRow {
  const steadyMs = STEADY_POLLS * pollMs;
  return {
    chain: provider.chain,
    quota: provider.quota,
    quotaPerHour: provider.quotaPerHour,
    steadyPerHour: (steady.total * HOUR) / steadyMs,
    steadyBusiestMethodPerHour: (Math.max(...steady.byMethod.values()) * HOUR) / steadyMs,
    catchUp: { what: provider.what, requests: catchUp.total, seconds, perHour: (catchUp.total * 3_600) / seconds, peakPerSecond: peak(times, 1_000), peakPer10s: peak(times, 10_000) },
  };
}

/** Requests (calls, for JSON-RPC batches) the fake saw from `provider` since `from`, and per route. */
function countSince(fake: FakeChains, provider: 'tron' | 'ton' | 'solana', from: number): { total: number; byMethod: Map<string, number> } {
  const byMethod = new Map<string, number>();
  let total = 0;
  for (const entry of fake.log.slice(from)) {
    if (entry.provider !== provider) continue;
    // A Solana batch is logged as its methods joined; each call counts.
    for (const method of entry.route.replace(/^\w+ /, '').split(',')) {
      byMethod.set(method, (byMethod.get(method) ?? 0) + 1);
      total++;
    }
  }
  return { total, byMethod };
}

/** The most requests in any `windowMs` of virtual time. */
function peak(times: number[], windowMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

async function benchQuotas(fake: FakeChains, context: ChainContext): Promise<QuotaRow[]> {
  const rows: QuotaRow[] = [];

  // --- Tron: TronGrid with a key ---
  {
    // At most 15 in any second (burst + one second's refill), the day's 100,000 spent evenly: docs/chains-http.md.
    const limit: RateLimitConfig = { perSecond: 10, burst: 5, perDay: 100_000 };
    const clock = virtualClock();
    const limiter = useLimiterClock(limiterKey(fake.tronUrl), limit, clock);
    const times: number[] = [];
    limiter.observe({ requested: (n) => times.push(...Array<number>(n).fill(clock.now())), throttled: () => undefined });
    const config = tronChainSchema.parse({ apiUrl: fake.tronUrl, xpub: Signer.fromMnemonic(MNEMONIC).accountXpub('tron', false), usdtContract: FAKE_USDT_CONTRACT, rateLimit: limit });
    const adapter = tronAdapter('tron', config, context);
    let state = await adapter.initialState();
    const blocksPerPoll = config.pollMs / 3_000;
    let from = fake.log.length;
    for (let poll = 0; poll < STEADY_POLLS; poll++) {
      fake.tron.advance(blocksPerPoll);
      clock.advance(config.pollMs);
      state = await adapter.scan(state);
    }
    const steady = countSince(fake, 'tron', from);
    // 1,000 blocks behind; blocks go on arriving every 3 s meanwhile, and the watcher polls again after each scan.
    fake.tron.advance(1_000);
    from = fake.log.length;
    times.length = 0;
    const started = clock.now();
    let madeUntil = started;
    // Caught up once a scan leaves no more behind than a poll brings.
    while (fake.tron.head.number - state.next + 1 > blocksPerPoll) {
      state = await adapter.scan(state);
      clock.advance(config.pollMs);
      const due = Math.floor((clock.now() - madeUntil) / 3_000);
      fake.tron.advance(due);
      madeUntil += due * 3_000;
    }
    const catchUp = countSince(fake, 'tron', from);
    rows.push(quotaRow({ chain: 'tron', quota: 'TronGrid: 100,000/day, 15/s per key', quotaPerHour: 100_000 / 24, what: '1,000 blocks' }, config.pollMs, steady, catchUp, (clock.now() - started) / 1_000, times));
  }

  // --- TON: toncenter without a key ---
  {
    const limit: RateLimitConfig = { perSecond: 1 };
    const clock = virtualClock();
    const limiter = useLimiterClock(limiterKey(fake.tonUrl), limit, clock);
    const times: number[] = [];
    limiter.observe({ requested: (n) => times.push(...Array<number>(n).fill(clock.now())), throttled: () => undefined });
    const config = tonChainSchema.parse({ apiUrl: fake.tonUrl, address: fake.ton.wallet, rateLimit: limit });
    const adapter = tonAdapter('ton', config, context);
    await adapter.connect();
    let state = await adapter.initialState();
    let from = fake.log.length;
    for (let poll = 0, due = 0; poll < STEADY_POLLS; poll++) {
      for (due += config.pollMs / 10_000; due >= 1; due--) fake.ton.add({ amount: '1', comment: '1' });
      clock.advance(config.pollMs);
      state = await adapter.scan(state);
    }
    const steady = countSince(fake, 'ton', from);
    for (let i = 0; i < 1_000; i++) fake.ton.add({ amount: '1', comment: '1' });
    from = fake.log.length;
    times.length = 0;
    const started = clock.now();
    do {
      state = await adapter.scan(state);
      clock.advance(config.pollMs);
    } while (state.backlog);
    const catchUp = countSince(fake, 'ton', from);
    rows.push(quotaRow({ chain: 'ton', quota: 'toncenter without a key: 1/s', quotaPerHour: 3_600, what: '1,000 transactions' }, config.pollMs, steady, catchUp, (clock.now() - started) / 1_000, times));
  }

  // --- Solana: the public RPC ---
  {
    // At most 40 in any 10 s (burst + ten seconds' refill): within 40 per method and 100 in all.
    const limit: RateLimitConfig = { perSecond: 2, burst: 20 };
    const clock = virtualClock();
    const limiter = useLimiterClock(limiterKey(fake.solanaUrl), limit, clock);
    const times: number[] = [];
    limiter.observe({ requested: (n) => times.push(...Array<number>(n).fill(clock.now())), throttled: () => undefined });
    const config = solanaChainSchema.parse({ rpcUrl: fake.solanaUrl, address: fake.solana.wallet, rateLimit: limit });
    const adapter = solanaAdapter('solana', config, context);
    let state = await adapter.initialState();
    let from = fake.log.length;
    const reference = base58.encode(randomBytes(32));
    for (let poll = 0, due = 0; poll < STEADY_POLLS; poll++) {
      for (due += config.pollMs / 10_000; due >= 1; due--) fake.solana.add({ amount: '0.5', references: [reference] });
      // A transaction is finalized about 13 s after it is confirmed.
      if (poll % Math.ceil(13_000 / config.pollMs) === 0) fake.solana.finalize();
      clock.advance(config.pollMs);
      state = await adapter.scan(state);
    }
    const steady = countSince(fake, 'solana', from);
    fake.solana.finalize();
    state = await adapter.scan(state);
    for (let i = 0; i < 1_000; i++) fake.solana.add({ amount: '0.5', references: [reference] });
    fake.solana.finalize();
    from = fake.log.length;
    times.length = 0;
    const started = clock.now();
    do {
      state = await adapter.scan(state);
      clock.advance(config.pollMs);
    } while (state.history.backlog);
    const catchUp = countSince(fake, 'solana', from);
    rows.push(quotaRow({ chain: 'solana', quota: 'public RPC: 40/10 s per method, 100/10 s in all', quotaPerHour: 14_400, what: '1,000 transactions' }, config.pollMs, steady, catchUp, (clock.now() - started) / 1_000, times));
  }
  return rows;
}

function printQuotas(rows: QuotaRow[]): void {
  const n = (x: number) => Math.round(x).toLocaleString('en');
  console.log('\nRequests per hour against each provider\'s documented quota (rateLimit set to it; virtual clock)\n');
  console.log('chain    quota                                           allows/h   steady/h  (busiest method/h)  share   catch-up                requests  took     req/h during  peak/s  peak/10 s');
  for (const r of rows) {
    console.log(
      `${r.chain.padEnd(8)} ${r.quota.padEnd(47)} ${n(r.quotaPerHour).padStart(8)}   ${n(r.steadyPerHour).padStart(8)}  (${n(r.steadyBusiestMethodPerHour).padStart(6)})            ${((100 * r.steadyPerHour) / r.quotaPerHour).toFixed(0).padStart(3)}%   ` +
        `${r.catchUp.what.padEnd(22)}  ${n(r.catchUp.requests).padStart(8)}  ${r.catchUp.seconds.toFixed(0).padStart(5)} s  ${n(r.catchUp.perHour).padStart(12)}  ${String(r.catchUp.peakPerSecond).padStart(6)}  ${String(r.catchUp.peakPer10s).padStart(9)}`,
    );
  }
}

async function main(): Promise<void> {
  log('starting: embedded PGlite in memory, the fake chain APIs');
  const database = await openDatabase({ url: 'pglite:memory://', role: 'bench' });
  const fake = await startFakeChains();
  const counted = { reports: 0 };
  const context: ChainContext = {
    db: database.prisma,
    sendsHere: true,
    logger: createLogger('silent'),
    signer: Signer.fromMnemonic(MNEMONIC),
    report: async () => void counted.reports++,
    reportOutgoing: async () => undefined,
  };
  try {
    if (process.env['BENCH_QUOTAS_ONLY'] === '1') return printQuotas(await benchQuotas(fake, context));
    const rows: Row[] = [];
    log('tron');
    rows.push(await benchTron(fake, context, counted));
    log('ton');
    rows.push(await benchTon(fake, context, counted));
    log('solana');
    const solana = await benchSolana(fake, context, counted);
    rows.push(solana.row);

    const fmt = (x: number) => x.toFixed(1).padStart(9);
    console.log(`\nHTTP chain scans, ${WATCHED.toLocaleString('en')} watched per chain, ${PER_BLOCK} transfers per block/page, median of ${ROUNDS} rounds\n`);
    console.log('chain    unit      adapter/s  baseline/s   ratio  transfers/s');
    for (const r of rows) {
      console.log(`${r.chain.padEnd(8)} ${r.unit.padEnd(7)} ${fmt(r.adapter)}   ${fmt(r.baseline)}   ${(r.adapter / r.baseline).toFixed(2).padStart(5)}  ${r.transfers.toFixed(0).padStart(11)}`);
    }
    console.log(
      `\nsolana, polling each reference instead: ${solana.pollsPerSecond.toFixed(0)} getSignaturesForAddress calls/s (8 at a time) here, ` +
        `so one poll of ${WATCHED.toLocaleString('en')} open references takes ${(WATCHED / solana.pollsPerSecond).toFixed(1)} s, every poll, before any getTransaction`,
    );
    log('quotas');
    printQuotas(await benchQuotas(fake, context));
  } finally {
    await fake.close();
    await database.close();
  }
}

await main();
