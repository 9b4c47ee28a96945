// The EVM adapter's scan rate (docs/chains-evm.md): blocks per second a scan processes when every block carries
// BENCH_PER_BLOCK (100) transfers to our addresses (half ether transfers, half ERC-20 Transfer logs of one
// batch transaction) and BENCH_ADDRESSES (100,000) addresses are watched, next to baselines measured in the same run on
// the same blocks, from the same anvil: the node's raw reads without our processing (each block with its
// transactions; and every call the scan makes, read as text).
//
// The scan is the adapter's own (watched-set lookups, receipts, log positions, report building, the saved state), with
// reports handed to a counter: what the payment processor then does per report is bench/invoices.ts's subject.
//
// Env: BENCH_DATABASE_URL (default postgres@127.0.0.1:5432), BENCH_ADDRESSES, BENCH_BLOCKS (default 100),
// BENCH_PER_BLOCK (default 100), BENCH_RUNS (default 3: the median is shown).
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { getAddress, numberToHex, parseEther, type Address } from 'viem';
import { evmChainSchema } from '../src/chains/config.ts';
import { EvmAdapter, TRANSFER_TOPIC, type EvmState } from '../src/chains/evm/adapter.ts';
import { EvmRpc, type RpcBlock } from '../src/chains/evm/rpc.ts';
import { Signer } from '../src/chains/signer.ts';
import { openDatabase } from '../src/db/client.ts';
import { createLogger } from '../src/logger.ts';
import { startAnvil, testToken } from '../test/support/anvil-node.ts';
import { DEFAULT_SERVER_URL, createBenchDatabase, log } from './common.ts';

const ADDRESSES = Number(process.env['BENCH_ADDRESSES'] ?? 100_000);
const BLOCKS = Number(process.env['BENCH_BLOCKS'] ?? 100);
const PER_BLOCK = Number(process.env['BENCH_PER_BLOCK'] ?? 100);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const CONFIRMATIONS = 2;
const PARALLEL = 10;
// Any account works for watching; this one is BIP-39's first test vector's (never use it for money).
const xpub = Signer.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about').accountXpub('ethereum', false);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
async function timed(what: string, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  log(`${what}: ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
  return median(times);
}

/** Raw JSON-RPC, answers read as text only (what the node costs before any parsing of ours). */
async function rawBatch(url: string, calls: { method: string; params: unknown[] }[]): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i, ...c }))),
  });
  return (await res.text()).length;
}

const anvil = await startAnvil({ accounts: 4 });
const database = await createBenchDatabase(process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL, 'payrail_bench_evm');
const db = await openDatabase({ url: database.url, role: 'bench' });
try {
  // Watched addresses as handed out; which key they derive from does not matter to the scan.
  log(`handing out ${ADDRESSES} addresses`);
  const addresses: Address[] = Array.from({ length: ADDRESSES }, () => getAddress(`0x${randomBytes(20).toString('hex')}`));
  for (let from = 0; from < ADDRESSES; from += 10_000) {
    const slice = addresses.slice(from, from + 10_000);
    await db.prisma.$executeRaw`
      INSERT INTO "DerivedAddress" ("network", "index", "address", "ownerId")
      SELECT 'ethereum', i - 1 + ${from}::int, a, 'bench' FROM unnest(${slice}::text[]) WITH ORDINALITY AS t(a, i)`;
  }

  const token = await anvil.deployToken(6, 10n ** 15n);
  const { abi } = testToken();
  const start = (await anvil.height()) + 1;
  const pick = () => addresses[Math.floor(Math.random() * ADDRESSES)]!;
  const natives = Math.ceil(PER_BLOCK / 2);
  const logs = PER_BLOCK - natives;
  log(`mining ${BLOCKS} blocks of ${natives} ether transfers and ${logs} token transfers`);
  for (let b = 0; b < BLOCKS; b++) {
    // anvil signs for its own unlocked accounts: one batch per block keeps the set-up short.
    await rawBatch(
      anvil.rpcUrl,
      Array.from({ length: natives }, (_, i) => ({
        method: 'eth_sendTransaction',
        params: [{ from: anvil.payers[1 + (i % 3)]!.address, to: pick(), value: numberToHex(parseEther('0.001')), gas: numberToHex(21_000) }],
      })),
    );
    if (logs > 0) {
      const to = Array.from({ length: logs }, pick);
      await anvil.call(token, abi, 'transferMany', [to, to.map(() => 1_000_000n)], 0, { gas: 2_000_000n + BigInt(logs) * 40_000n });
    }
    await anvil.mine(1);
  }
  await anvil.mine(CONFIRMATIONS);
  const end = start + BLOCKS - 1;

  let reports = 0;
  const config = evmChainSchema.parse({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, xpub, tokens: { usdterc20: token }, confirmations: CONFIRMATIONS, batchBlocks: PARALLEL });
  const adapter = new EvmAdapter('ethereum', config, {
    db: db.prisma,
    sendsHere: true,
    logger: createLogger('warn'),
    signer: null,
    report: async () => void reports++,
    reportOutgoing: async () => undefined,
  });
  await adapter.connect();
  const from: EvmState = { next: start, recent: [], pending: [], waiting: {}, sweptAt: null };
  const loadStarted = performance.now();
  await adapter.scan({ ...from, next: end + CONFIRMATIONS + 1 }); // loads the watched set
  const loadMs = performance.now() - loadStarted;

  const numbers = Array.from({ length: BLOCKS }, (_, i) => numberToHex(start + i));
  const rpc = new EvmRpc(anvil.rpcUrl);
  const blocks: RpcBlock[] = [];
  for (const n of numbers) blocks.push((await rpc.block(BigInt(n), false))!);
  const inParallel = async (fn: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < BLOCKS; i += PARALLEL) await Promise.all(Array.from({ length: Math.min(PARALLEL, BLOCKS - i) }, (_, j) => fn(i + j)));
  };
  const blockMs = await timed('node: eth_getBlockByNumber with transactions, text', () =>
    inParallel((i) => rawBatch(anvil.rpcUrl, [{ method: 'eth_getBlockByNumber', params: [numbers[i], true] }])),
  );
  const callsMs = await timed('node: the scan\'s calls (block, logs, receipts), text', () =>
    inParallel(async (i) => {
      await rawBatch(anvil.rpcUrl, [{ method: 'eth_getBlockByNumber', params: [numbers[i], true] }]);
      await rawBatch(anvil.rpcUrl, [{ method: 'eth_getLogs', params: [{ blockHash: blocks[i]!.hash, address: [token], topics: [TRANSFER_TOPIC] }] }]);
      await rawBatch(anvil.rpcUrl, [{ method: 'eth_getBlockReceipts', params: [blocks[i]!.hash] }]);
    }),
  );
  const scanMs = await timed('adapter scan', async () => {
    reports = 0;
    await adapter.scan(from);
    if (reports !== BLOCKS * PER_BLOCK) throw new Error(`the scan reported ${reports} transfers, ${BLOCKS * PER_BLOCK} expected`);
  });
  const tip = await adapter.scan(from);
  const idleMs = await timed('adapter scan at the tip (nothing new)', () => adapter.scan(tip));

  const rate = (ms: number) => (BLOCKS / (ms / 1000)).toFixed(1);
  console.log(`\nEVM scan, anvil: ${BLOCKS} blocks x ${PER_BLOCK} transfers (${natives} ether, ${logs} ERC-20) to ${ADDRESSES.toLocaleString('en')} watched addresses (median of ${RUNS})\n`);
  console.log('| what | ms | blocks/s | transfers/s |');
  console.log('|---|---:|---:|---:|');
  for (const [what, ms] of [
    ['node: each block with its transactions, read as text (baseline)', blockMs],
    ["node: the scan's calls per block (block, logs, receipts), read as text (baseline)", callsMs],
    ['adapter scan (parsed, matched, reported)', scanMs],
  ] as const) {
    console.log(`| ${what} | ${ms.toFixed(0)} | ${rate(ms)} | ${Math.round((BLOCKS * PER_BLOCK) / (ms / 1000))} |`);
  }
  console.log(`\nadapter / blocks read raw: ${(blockMs / scanMs).toFixed(2)} of the node's rate; adapter / the same calls raw: ${(callsMs / scanMs).toFixed(2)}`);
  console.log(`a scan with nothing new: ${idleMs.toFixed(0)} ms; loading ${ADDRESSES.toLocaleString('en')} watched addresses: ${loadMs.toFixed(0)} ms`);
} finally {
  await db.close();
  await database.drop();
  await anvil.stop();
}
