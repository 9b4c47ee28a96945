// Scanning a chain of blocks (EVM, Tron): blocks read in order from a cursor, each checked to extend the last one read
// (its parent is the block we read before), so a reorg is seen where it forks and read again from there. Transfers
// to our addresses are reported as each block is read and again as they deepen; one whose block left the chain goes
// back to unseen (no confirmations count) until it is in a block again, or is reported dropped once the chain says
// it can never be (its nonce used by another transaction, its expiry passed). A final one is no longer followed.
// What differs per chain (how a block and its transfers are read, when an unseen one is gone) is a BlockSource.
import type { PaymentCurrency, Network } from '../domain/assets.ts';
import { toMoney } from '../domain/money.ts';
import type { Logger } from '../logger.ts';
import type { TransferListener, TransferReport } from './adapter.ts';
import { deliverReport } from './watch.ts';

/** A transfer to one of our addresses, reported but not final yet (kept in the scan state, so as JSON). */
export interface PendingTransfer {
  txHash: string;
  outputIndex: number;
  asset: PaymentCurrency;
  from: string | null;
  to: string;
  /** In units of the asset, a decimal string. */
  amount: string;
  /** Null while its block was replaced by a reorg and it is in no block again yet. */
  block: number | null;
  /** Confirmations last reported. */
  reported: number;
}

export interface BlockScanState<P extends PendingTransfer> {
  /** The next block to read. */
  next: number;
  /** Ids (hashes) of the last blocks read, oldest first: where a reorg forked is looked for among them. */
  recent: { n: number; id: string }[];
  pending: P[];
}

export interface ReadBlock<P extends PendingTransfer> {
  n: number;
  id: string;
  parent: string;
  /** Transfers to watched addresses in it. */
  transfers: P[];
}

export interface BlockSource<H extends { number: number }, P extends PendingTransfer> {
  head(): Promise<H>;
  /** Block `n` with the transfers to our addresses in it. */
  read(n: number): Promise<ReadBlock<P>>;
  /** The id of block `n` on the chain now. */
  blockId(n: number): Promise<string>;
  /** Whether `p`, out of the chain since a reorg, can never be in it again (then it is reported dropped). */
  gone(p: P, head: H): Promise<boolean>;
}

export interface BlockScanOptions {
  network: Network;
  /** Confirmations after which a transfer is final (and no longer followed). */
  confirmations: number;
  /** Blocks one scan reads at most: a backlog takes several scans, each well inside the watcher's lease. */
  blocksPerScan: number;
  /** Blocks read at once. */
  parallel: number;
  /** Block ids kept to find a fork point; a reorg deeper than this stops the scans for an operator. */
  keep: number;
  report: TransferListener;
  logger: Logger;
}

/** One scan: reads from `state.next` towards the head, reports what it finds; answers the next state and the head. */
export async function scanBlocks<H extends { number: number }, P extends PendingTransfer>(
  source: BlockSource<H, P>,
  state: BlockScanState<P>,
  options: BlockScanOptions,
): Promise<{ state: BlockScanState<P>; head: H; forkedAfter: number | null }> {
  const head = await source.head();
  let { next } = state;
  let forkedAfter: number | null = null;
  const recent = [...state.recent];
  const pending = new Map(state.pending.map((p) => [pendingKey(p), { ...p }]));
  const deliver = (p: P, confirmations: number, dropped: boolean) => deliverReport(options.report, options.logger, reportOf(options.network, p, confirmations, dropped));
  /** Reports `p` if it deepened since last reported; a final one is no longer followed. */
  const reportDepth = async (p: P) => {
    const confirmations = head.number - p.block! + 1;
    if (confirmations > p.reported) {
      const taken = await deliver(p, confirmations, false);
      p.reported = confirmations;
      // A refused transfer (dust, a foreign asset) is not followed further: every later report would be refused too.
      if (!taken) return void pending.delete(pendingKey(p));
    }
    if (confirmations >= options.confirmations) pending.delete(pendingKey(p));
  };

  const lastToRead = Math.min(head.number, next + options.blocksPerScan - 1);
  read: for (let from = next; from <= lastToRead; from += options.parallel) {
    const blocks = await Promise.all(range(from, Math.min(from + options.parallel - 1, lastToRead)).map((n) => source.read(n)));
    for (const block of blocks) {
      const last = recent.at(-1);
      if (last && last.n === block.n - 1 && block.parent !== last.id) {
        forkedAfter = await forkPoint(source, recent);
        next = forkedAfter + 1;
        while ((recent.at(-1)?.n ?? -1) >= next) recent.pop();
        for (const p of pending.values()) if (p.block !== null && p.block >= next) p.block = null;
        options.logger.warn({ network: options.network, block: block.n, forkedAfter }, 'reorg: reading again from where the chain forked');
        break read;
      }
      // Reported as each block is read: a scan cut short has reported what it read (reports are idempotent).
      for (const found of block.transfers) {
        const p = pending.get(pendingKey(found)) ?? found;
        p.block = block.n;
        pending.set(pendingKey(p), p);
        await reportDepth(p);
      }
      recent.push({ n: block.n, id: block.id });
      if (recent.length > options.keep) recent.shift();
      next = block.n + 1;
    }
  }

  for (const p of [...pending.values()]) {
    if (p.block !== null) await reportDepth(p);
    else if (await source.gone(p, head)) {
      await deliver(p, 0, true);
      pending.delete(pendingKey(p));
    }
  }
  return { state: { next, recent, pending: [...pending.values()] }, head, forkedAfter };
}

/** The newest block read before that is still on the chain; throws when the reorg is deeper than what is kept. */
async function forkPoint(source: BlockSource<{ number: number }, PendingTransfer>, recent: { n: number; id: string }[]): Promise<number> {
  for (const known of [...recent].reverse()) {
    if ((await source.blockId(known.n)) === known.id) return known.n;
  }
  throw new Error(`a reorg deeper than the last ${recent.length} blocks read: an operator must look at it`);
}

/** The report of a transfer a scan follows, at `confirmations` (or dropped). */
export function reportOf(network: Network, p: PendingTransfer, confirmations: number, dropped: boolean): TransferReport {
  return {
    network,
    asset: p.asset,
    txHash: p.txHash,
    outputIndex: p.outputIndex,
    from: p.from,
    to: p.to,
    tag: null,
    amount: toMoney(p.amount),
    confirmations,
    blockNumber: p.block === null ? null : BigInt(p.block),
    dropped,
  };
}

const pendingKey = (p: { txHash: string; outputIndex: number }) => `${p.txHash}:${p.outputIndex}`;
export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
