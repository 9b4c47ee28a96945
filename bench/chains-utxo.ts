// The UTXO adapter's scan rate (docs/chains-utxo.md): blocks per second a scan processes when every block carries
// BENCH_PER_BLOCK (100) transfers to our addresses and the node's watch-only wallet watches BENCH_ADDRESSES (100,000)
// derived addresses, next to baselines measured in the same run on the same blocks: the node's raw reads without our
// processing (listsinceblock on the watching wallet, and getblock verbosity 2 for every block, batched).
//
// The scan is the adapter's own (derived-address lookup in PostgreSQL, the ChainTransfer rows it compares with,
// report building), with reports handed to a counter: what the payment processor then does per report is
// bench/payments.ts's subject. Importing the addresses into the node is timed too (legacy wallets import slowly).
//
// Env: BENCH_LITECOIND (default Debian's), BENCH_DATABASE_URL (default postgres@127.0.0.1:5432), BENCH_ADDRESSES,
// BENCH_BLOCKS (default 100), BENCH_PER_BLOCK (default 100), BENCH_RUNS (default 3: the median is shown).
import { performance } from 'node:perf_hooks';
import { deriveAddress, parseExtendedPublicKey } from '../src/chains/hd.ts';
import { utxoChainSchema } from '../src/chains/config.ts';
import { UtxoAdapter, type UtxoScanState } from '../src/chains/utxo/adapter.ts';
import { chainDescriptor } from '../src/chains/utxo/descriptors.ts';
import { openDatabase } from '../src/db/client.ts';
import { createLogger } from '../src/logger.ts';
import { DEFAULT_LITECOIND, startLitecoind } from '../test/support/litecoind-node.ts';
import { DEFAULT_SERVER_URL, createBenchDatabase, log } from './common.ts';
import { Signer } from '../src/chains/signer.ts';

const ADDRESSES = Number(process.env['BENCH_ADDRESSES'] ?? 100_000);
const BLOCKS = Number(process.env['BENCH_BLOCKS'] ?? 100);
const PER_BLOCK = Number(process.env['BENCH_PER_BLOCK'] ?? 100);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const OUTPUTS_PER_TX = 10;
const CONFIRMATIONS = 2;
// Any account works for watching; this one is BIP-39's first test vector's (never use it for money).
const signer = Signer.fromMnemonic('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const xpub = signer.accountXpub('litecoin', true);
const account = parseExtendedPublicKey(xpub);

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

const node = await startLitecoind(process.env['BENCH_LITECOIND'] ?? DEFAULT_LITECOIND);
const database = await createBenchDatabase(process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER_URL, 'payrail_bench_utxo');
const db = await openDatabase({ url: database.url, role: 'bench' });
try {
  // The addresses as handed out: the node derives them (fast), and a sample is checked against our derivation.
  log(`deriving ${ADDRESSES} addresses`);
  const descriptor = chainDescriptor('litecoin', account, true, 0);
  const addresses: string[] = [];
  for (let from = 0; from < ADDRESSES; from += 10_000) {
    addresses.push(...(await node.node.call<string[]>('deriveaddresses', [descriptor, [from, Math.min(ADDRESSES, from + 10_000) - 1]])));
  }
  for (const i of [0, 1, ADDRESSES - 1]) {
    if (addresses[i] !== deriveAddress(account, 'litecoin', i, { regtest: true })) throw new Error(`the node derives another address at ${i}`);
  }
  for (let from = 0; from < ADDRESSES; from += 10_000) {
    const slice = addresses.slice(from, from + 10_000);
    await db.prisma.$executeRaw`
      INSERT INTO "DerivedAddress" ("network", "index", "address", "ownerId")
      SELECT 'litecoin', i - 1 + ${from}::int, a, 'bench' FROM unnest(${slice}::text[]) WITH ORDINALITY AS t(a, i)`;
  }

  let reports = 0;
  const adapter = new UtxoAdapter(
    'litecoin',
    utxoChainSchema.parse({ rpcUrl: node.rpcUrl, wallet: 'payrail', xpub, chain: 'regtest', confirmations: CONFIRMATIONS, lookahead: 20 }),
    { db: db.prisma, sendsHere: true, logger: createLogger('warn'), signer: null, report: async () => void reports++, reportOutgoing: async () => undefined },
  );
  // connect(): the handed-out addresses are not watched yet, so it imports them all (with one rescan at the end).
  log(`importing ${ADDRESSES} addresses into a legacy watch-only wallet`);
  const importStarted = performance.now();
  await adapter.connect();
  const importMs = performance.now() - importStarted;
  log(`import: ${(importMs / 1000).toFixed(1)} s`);

  const start: UtxoScanState = { block: await node.node.call<string>('getbestblockhash'), height: await node.height(), sweptAt: null };
  log(`mining ${BLOCKS} blocks of ${PER_BLOCK} transfers`);
  const pick = () => addresses[Math.floor(Math.random() * ADDRESSES)]!;
  for (let b = 0; b < BLOCKS; b++) {
    for (let t = 0; t < PER_BLOCK / OUTPUTS_PER_TX; t++) {
      const outputs: Record<string, string> = {};
      while (Object.keys(outputs).length < OUTPUTS_PER_TX) outputs[pick()] = '0.001';
      await node.miner.call('sendmany', ['', outputs]);
    }
    await node.mine(1);
  }
  // Two more blocks: the last ones' transfers are final too.
  await node.mine(CONFIRMATIONS);
  const hashes = await node.node.batchAll<string>(Array.from({ length: BLOCKS }, (_, i) => ({ method: 'getblockhash', params: [start.height + 1 + i] })));

  const wallet = node.node.wallet('payrail');
  const listed = await wallet.call<{ transactions: { category: string }[] }>('listsinceblock', [start.block, CONFIRMATIONS, true, true]);
  const receives = listed.transactions.filter((t) => t.category === 'receive').length;
  if (receives !== BLOCKS * PER_BLOCK) throw new Error(`the wallet lists ${receives} receives, ${BLOCKS * PER_BLOCK} expected`);

  // The node's own rates: answers read as text, in batches of as many calls as the adapter's client sends at once.
  const getblockMs = await timed('getblock verbosity 2, text', async () => {
    for (let i = 0; i < hashes.length; i += 25) await Promise.all(hashes.slice(i, i + 25).map((h) => node.node.callText('getblock', [h, 2])));
  });
  const listMs = await timed('listsinceblock, text', () => wallet.callText('listsinceblock', [start.block, CONFIRMATIONS, true, true]));
  const parsedMs = await timed('listsinceblock, parsed exactly', () => wallet.call('listsinceblock', [start.block, CONFIRMATIONS, true, true]));
  const scanMs = await timed('adapter scan', async () => {
    reports = 0;
    await adapter.scan(start);
    if (reports !== BLOCKS * PER_BLOCK) throw new Error(`the scan reported ${reports} transfers, ${BLOCKS * PER_BLOCK} expected`);
  });
  const tip = await adapter.scan(start);
  const idleMs = await timed('adapter scan at the tip (nothing new)', () => adapter.scan(tip));

  const rate = (ms: number) => (BLOCKS / (ms / 1000)).toFixed(1);
  console.log(`\nUTXO scan, litecoind 0.21 regtest: ${BLOCKS} blocks x ${PER_BLOCK} transfers to ${ADDRESSES.toLocaleString('en')} watched addresses (median of ${RUNS})\n`);
  console.log('| what | ms | blocks/s | transfers/s |');
  console.log('|---|---:|---:|---:|');
  for (const [what, ms] of [
    ['node: getblock verbosity 2 of each block, read as text (baseline)', getblockMs],
    ['node: listsinceblock of the watch-only wallet, read as text (baseline)', listMs],
    ['listsinceblock parsed without floats (our RPC client)', parsedMs],
    ['adapter scan (listsinceblock, parsed, our processing)', scanMs],
  ] as const) {
    console.log(`| ${what} | ${ms.toFixed(0)} | ${rate(ms)} | ${Math.round((BLOCKS * PER_BLOCK) / (ms / 1000))} |`);
  }
  console.log(`\nadapter / listsinceblock: ${(listMs / scanMs).toFixed(2)} of the node's rate; adapter / getblock: ${(getblockMs / scanMs).toFixed(2)}`);
  console.log(`a scan with nothing new: ${idleMs.toFixed(0)} ms; importing ${ADDRESSES.toLocaleString('en')} addresses: ${(importMs / 1000).toFixed(1)} s`);
} finally {
  await db.close();
  await database.drop();
  await node.stop();
}
