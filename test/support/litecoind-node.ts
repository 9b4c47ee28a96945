// A real `litecoind -regtest` (docs/chains-utxo.md), for the UTXO adapter's tests and its benchmark: free ports, a
// temporary data directory, a miner wallet with mature coins, helpers to mine, pay and reorganise (invalidateblock),
// and a clean stop. Every wait is bounded. No vitest here (bench/chains-utxo.ts starts one too).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BitcoinRpc, coins, RpcError } from '../../src/chains/utxo/rpc.ts';
import { coinText, toSats } from '../../src/chains/utxo/transactions.ts';
import { freePort } from './net.ts';

/** Debian's litecoind (package litecoind). */
export const DEFAULT_LITECOIND = '/usr/lib/litecoin/litecoind';

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;
/** Regtest coinbases mature after 100 blocks: 110 leave the miner ten spendable ones (50 LTC each). */
const FUNDING_BLOCKS = 110;

export interface Litecoind {
  /** JSON-RPC with its credentials (http://user:password@127.0.0.1:port). */
  rpcUrl: string;
  /** The node's own endpoint. */
  node: BitcoinRpc;
  /** The miner's wallet (it holds keys): pays invoices, receives the block rewards. */
  miner: BitcoinRpc;
  minerAddress: string;
  /** Mines `blocks` blocks to the miner; answers their hashes. */
  mine(blocks?: number): Promise<string[]>;
  /** Pays `amount` (a decimal string) from the miner; answers the txid. */
  pay(address: string, amount: string): Promise<string>;
  /** The hash of the block holding `txid`. */
  blockOf(txid: string): Promise<string>;
  height(): Promise<number>;
  /**
   * A reorg that takes `txid` out for good: the block holding it leaves the chain and a block spending its first input
   * elsewhere takes its place. Answers the new tip after `extraBlocks` more blocks.
   */
  doubleSpend(txid: string, extraBlocks?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startLitecoind(binary: string): Promise<Litecoind> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payrail-litecoind-'));
  const port = await freePort();
  const [user, password] = ['payrail', randomBytes(12).toString('hex')];
  const args = [
    '-regtest',
    `-datadir=${dir}`,
    '-server=1',
    '-listen=0',
    '-rpcbind=127.0.0.1',
    '-rpcallowip=127.0.0.1',
    `-rpcport=${port}`,
    `-rpcuser=${user}`,
    `-rpcpassword=${password}`,
    '-dnsseed=0',
    '-connect=0',
    '-fallbackfee=0.0001',
    '-txindex=1',
    '-printtoconsole=0',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const rpcUrl = `http://${user}:${password}@127.0.0.1:${port}`;
  const node = new BitcoinRpc(rpcUrl, { timeoutMs: 60_000 });
  await waitUntilReady(node, child, () => stderr);
  await node.call('createwallet', ['miner']);
  const miner = node.wallet('miner');
  const minerAddress = await miner.call<string>('getnewaddress', ['', 'bech32']);
  // A fresh reward address each time: after invalidateblock, the same template would rebuild the very block just
  // invalidated (same transactions and time), which the node refuses.
  const mine = async (blocks = 1) => node.call<string[]>('generatetoaddress', [blocks, await miner.call<string>('getnewaddress', ['', 'bech32'])]);
  await mine(FUNDING_BLOCKS);

  const blockOf = async (txid: string) => (await miner.call<{ blockhash: string }>('gettransaction', [txid])).blockhash;
  return {
    rpcUrl,
    node,
    miner,
    minerAddress,
    mine,
    pay: (address, amount) => miner.call<string>('sendtoaddress', [address, amount]),
    blockOf,
    height: () => node.call<number>('getblockcount'),
    async doubleSpend(txid, extraBlocks = 0) {
      const block = await blockOf(txid);
      await node.call('invalidateblock', [block]);
      const tx = await node.call<{ vin: { txid: string; vout: number }[] }>('getrawtransaction', [txid, true]);
      const spent = tx.vin[0]!;
      const previous = await node.call<{ vout: { n: number; value: unknown }[] }>('getrawtransaction', [spent.txid, true]);
      const value = toSats(coins(previous.vout.find((o) => o.n === spent.vout)!.value));
      // The whole input back to the miner, less a fee: a transaction that conflicts with the payment.
      const raw = await miner.call<string>('createrawtransaction', [[{ txid: spent.txid, vout: spent.vout }], { [minerAddress]: coinText(value - 100_000n) }]);
      const signed = await miner.call<{ hex: string; complete: boolean }>('signrawtransactionwithwallet', [raw]);
      if (!signed.complete) throw new Error('the miner could not sign the conflicting transaction');
      await node.call('generateblock', [minerAddress, [signed.hex]]);
      if (extraBlocks > 0) await mine(extraBlocks);
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) {
        await node.call('stop').catch(() => child.kill('SIGTERM'));
        const stopped = await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
        if (!stopped) {
          child.kill('SIGKILL');
          await exited;
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilReady(node: BitcoinRpc, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`litecoind exited (${child.exitCode}) during start-up: ${stderr()}`);
    try {
      await node.call('getblockchaininfo');
      return;
    } catch (e) {
      // Refused connections, then "Loading..." (warm-up) until the RPC serves.
      if (Date.now() > deadline) throw new Error(`litecoind not ready after ${READY_TIMEOUT_MS} ms: ${(e as Error).message} ${stderr()}`);
      if (e instanceof RpcError && e.code !== -28) throw e;
      await sleep(100);
    }
  }
}
