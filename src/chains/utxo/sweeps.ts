// Consolidation on a UTXO chain (docs/chains-utxo.md): confirmed, credited deposits moved into the hot wallet, which
// withdrawals and refunds pay from.
import type { Prisma } from '../../db/client.ts';
import { derivedAmong, sendInputs, withSpendLock } from '../store.ts';
import { feeRate } from './fees.ts';
import { coins, outpoint, type Unspent } from './rpc.ts';
import type { UtxoChain, UtxoSender } from './sender.ts';
import { fromSats, planSweep, toSats, type Coin } from './transactions.ts';

export class UtxoSweeper {
  constructor(
    private readonly chain: UtxoChain,
    private readonly sender: UtxoSender,
  ) {}

  /**
   * Moves confirmed, credited deposits into the hot wallet when due: every `sweepIntervalMs`, at once when they reach
   * `sweepThreshold`, or when a payment found the hot wallet short. Answers when it last did.
   */
  async sweepIfDue(sweptAt: string | null): Promise<string | null> {
    if (!this.chain.context.signer || this.chain.network === 'bitcoin-cash') return sweptAt;
    const now = Date.now();
    const due = this.sender.sweepSoon || sweptAt === null || now - Date.parse(sweptAt) >= this.chain.config.sweepIntervalMs;
    if (!due && this.chain.config.sweepThreshold === undefined) return sweptAt;
    try {
      const sweep = await withSpendLock(this.chain.context.db, this.chain.network, async (tx) => {
        const deposits = await this.depositCoins(tx);
        const total = fromSats(deposits.reduce((s, c) => s + c.value, 0n));
        if (deposits.length === 0 || (!due && !(this.chain.config.sweepThreshold && total.gte(this.chain.config.sweepThreshold)))) return null;
        const plan = planSweep(deposits, this.sender.hotScript(), await feeRate(this.chain), this.chain.spending, this.chain.config.sweepMaxInputs);
        if (!plan) return null;
        return this.sender.store(tx, plan, { id: (txid) => `sweep-${txid}`, purpose: 'sweep', to: this.chain.hotAddress, amount: plan.outputs[0]!.value });
      });
      if (!sweep) return sweptAt;
      this.sender.sweepSoon = false;
      this.chain.logger.info({ txHash: sweep.txHash, inputs: sendInputs(sweep.inputs).length, amount: sweep.amount.toString(), fee: sweep.fee?.toString() }, 'consolidating deposits into the hot wallet');
      await this.sender.offer(sweep);
      return new Date(now).toISOString();
    } catch (e) {
      // Payments are detected whatever happens here (no fee estimate yet, a node hiccup): consolidation waits.
      this.chain.logger.warn({ err: e }, 'consolidation postponed to the next scan');
      return sweptAt;
    }
  }

  /** Deposits to consolidate: confirmed outputs at our receiving addresses that were credited, not reserved. */
  private async depositCoins(tx: Prisma.TransactionClient): Promise<Coin[]> {
    const unspent = await this.chain.wallet.call<Unspent[]>('listunspent', [this.chain.confirmations]);
    const indexes = await derivedAmong(tx, this.chain.network, unspent.flatMap((u) => (u.address ? [u.address] : [])));
    const candidates = unspent.filter((u) => u.address !== undefined && indexes.has(u.address));
    if (candidates.length === 0) return [];
    const credited = await tx.chainTransfer.findMany({
      where: { network: this.chain.network, state: 'confirmed', txHash: { in: [...new Set(candidates.map((u) => u.txid))] } },
      select: { txHash: true, outputIndex: true },
    });
    const creditedOutputs = new Set(credited.map((c) => outpoint(c.txHash, c.outputIndex)));
    const reserved = await this.sender.reserved(tx);
    return candidates
      .filter((u) => creditedOutputs.has(outpoint(u.txid, u.vout)) && !reserved.has(outpoint(u.txid, u.vout)))
      .map((u) => ({ txid: u.txid, vout: u.vout, value: toSats(coins(u.amount)), script: u.scriptPubKey, address: u.address!, key: { chain: 0, index: indexes.get(u.address!)! } }));
  }
}
