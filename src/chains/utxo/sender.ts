// Sending on a UTXO chain (docs/chains-utxo.md): withdrawals and refunds from the hot wallet's confirmed coins, each
// signed and stored (ChainSend) under the network's spend lock before it is broadcast, so a repeated send offers the
// same transaction and no two sends pick the same coins; the scan follows open sends to final (followSends).
import type { Decimal } from 'decimal.js';
import type { ChainSend } from '../../../generated/prisma/client.ts';
import type { Prisma } from '../../db/client.ts';
import type { PaymentCurrency } from '../../domain/assets.ts';
import type { Logger } from '../../logger.ts';
import type { OutgoingTransfer } from '../adapter.ts';
import type { UtxoChainConfig } from '../config.ts';
import type { ChainContext } from '../node-adapter.ts';
import { HOT_WALLET, NO_SIGNER, signerRefusal, type Signer } from '../signer.ts';
import { findSend, isReported, openSends, sendInputs, storeSend, updateSend, withSpendLock, type SendInput, type SendPurpose } from '../store.ts';
import { feeRate } from './fees.ts';
import { sendStep } from './follow.ts';
import { SIGNER_NETWORKS, type UtxoNetwork } from './networks.ts';
import { coins, outpoint, RPC_ERROR, RpcError, type BitcoinRpc, type TxStatus, type Unspent } from './rpc.ts';
import { coinText, dustLimit, finalizeSigned, outputScript, planPayment, toSats, unsignedPsbt, type Coin, type Plan, type SpendRules } from './transactions.ts';

const BCH_SENDS = 'sending on bitcoin-cash is not supported yet: its signatures need SIGHASH_FORKID, which the signer does not make (docs/chains-utxo.md)';

/** What the sender (and the sweeper) use of the adapter: its node, wallet, configuration and context. */
export interface UtxoChain {
  readonly network: UtxoNetwork;
  readonly asset: PaymentCurrency;
  readonly config: UtxoChainConfig;
  readonly context: ChainContext;
  readonly node: BitcoinRpc;
  readonly wallet: BitcoinRpc;
  readonly logger: Logger;
  readonly spending: SpendRules;
  /** Not main: test networks' keys and addresses. */
  readonly test: boolean;
  readonly hotAddress: string;
  readonly confirmations: number;
  readonly relayRate: Decimal;
  ready(): Promise<void>;
  isValidAddress(address: string): boolean;
  txStatuses(txids: string[]): Promise<Map<string, TxStatus>>;
}

export class UtxoSender {
  /** A payment found the hot wallet short: consolidate at the next scan, whatever the interval says. */
  sweepSoon = false;
  /** Sends the node refuses whose inputs are spent elsewhere: the height that was first seen at. */
  private readonly inputsGoneSince = new Map<string, number>();

  constructor(private readonly chain: UtxoChain) {}

  /**
   * Pays a withdrawal or a refund from the hot wallet (its confirmed coins; change back to it). Idempotent per id: a
   * send stored before is offered to the node again and answers the same transaction.
   */
  async send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    const network = this.signerNetwork();
    await this.chain.ready();
    const existing = await findSend(this.chain.context.db, transfer.id);
    if (existing) return this.offer(existing);
    this.checkOutgoing(transfer);
    const amount = toSats(transfer.amount);
    const to = outputScript(transfer.to, network);
    const rate = await feeRate(this.chain);
    // Under the network's spend lock: no two sends pick the same coins.
    const stored = await withSpendLock(this.chain.context.db, this.chain.network, async (tx) => {
      const again = await findSend(tx, transfer.id);
      if (again) return again;
      const plan = planPayment(await this.hotCoins(tx), amount, to, this.hotScript(), rate, this.chain.spending);
      if ('shortBy' in plan) {
        this.sweepSoon = true;
        throw new Error(
          `${this.chain.network}: the hot wallet cannot pay ${coinText(amount)} ${this.chain.asset} now: it holds ${coinText(plan.available)} confirmed and unreserved, ` +
            `${coinText(plan.needed)} are needed with the fee. Consolidating confirmed deposits refills it (docs/chains-utxo.md); the payment is retried.`,
        );
      }
      return this.store(tx, plan, { id: transfer.id, purpose: transfer.purpose, to: transfer.to, amount });
    });
    return this.offer(stored);
  }

  /** Hostile input stops here: the merchant gave the address and amount. */
  private checkOutgoing(transfer: OutgoingTransfer): void {
    if (transfer.asset !== this.chain.asset) throw new Error(`${this.chain.network} sends only ${this.chain.asset}, not ${transfer.asset}`);
    if (transfer.tag) throw new Error(`${this.chain.network} takes no tag`);
    if (!this.chain.isValidAddress(transfer.to)) throw new Error(`not a ${this.chain.network} ${this.chain.config.chain} address: ${JSON.stringify(transfer.to.slice(0, 128))}`);
    if (!transfer.amount.gt(0)) throw new Error('the amount must be positive');
    const to = outputScript(transfer.to, this.signerNetwork());
    if (toSats(transfer.amount) < dustLimit(to, this.chain.spending.dustRelayFee)) throw new Error(`${transfer.amount.toFixed()} ${this.chain.asset} is below the network's dust limit`);
  }

  sendRefusal(): string | null {
    if (this.chain.network === 'bitcoin-cash') return BCH_SENDS;
    return signerRefusal(this.chain.context);
  }

  /** Bitcoin Cash needs SIGHASH_FORKID signatures, which the signer (@scure/btc-signer) does not make. */
  private signerNetwork() {
    if (this.chain.network === 'bitcoin-cash') throw new Error(BCH_SENDS);
    return SIGNER_NETWORKS[this.chain.network][this.chain.config.chain];
  }

  private signer(): Signer {
    if (!this.chain.context.signer) throw new Error(`${this.chain.network}: ${NO_SIGNER}`);
    return this.chain.context.signer;
  }

  hotScript(): Uint8Array {
    return outputScript(this.chain.hotAddress, this.signerNetwork());
  }

  /** Outputs that open sends spend: reserved until those sends are final or failed. */
  async reserved(tx: Prisma.TransactionClient): Promise<Set<string>> {
    const sends = await openSends(tx, this.chain.network);
    return new Set(sends.flatMap((s) => sendInputs(s.inputs).map((i) => outpoint(i.txid ?? '', i.vout ?? -1))));
  }

  /** The hot wallet's confirmed coins not reserved by an open send. */
  private async hotCoins(tx: Prisma.TransactionClient): Promise<Coin[]> {
    const reserved = await this.reserved(tx);
    const unspent = await this.chain.wallet.call<Unspent[]>('listunspent', [1, 9_999_999, [this.chain.hotAddress]]);
    return unspent
      .filter((u) => !reserved.has(outpoint(u.txid, u.vout)))
      .map((u) => ({ txid: u.txid, vout: u.vout, value: toSats(coins(u.amount)), script: u.scriptPubKey, address: this.chain.hotAddress, key: HOT_WALLET }));
  }

  /** Signs a plan and stores it (before any broadcast: a repeated send then offers the same transaction). */
  async store(
    tx: Prisma.TransactionClient,
    plan: Plan,
    send: { id: string | ((txid: string) => string); purpose: SendPurpose; to: string; amount: bigint },
  ): Promise<ChainSend> {
    const signed = this.signer().signPsbt(this.chain.network, this.chain.test, unsignedPsbt(plan), plan.inputs.map((c) => c.key));
    const { rawTx, txid, vsize } = finalizeSigned(signed);
    if (vsize > plan.vsize) throw new Error(`the signed transaction is larger (${vsize} vB) than its fee was computed for (${plan.vsize} vB)`);
    const inputs: SendInput[] = plan.inputs.map((c) => ({ address: c.address, amount: coinText(c.value), txid: c.txid, vout: c.vout }));
    return storeSend(tx, {
      id: typeof send.id === 'string' ? send.id : send.id(txid),
      network: this.chain.network,
      purpose: send.purpose,
      asset: this.chain.asset,
      fromAddress: this.chain.hotAddress,
      toAddress: send.to,
      tag: null,
      amount: coinText(send.amount),
      rawTx,
      txHash: txid,
      nonce: null,
      inputs,
      fee: coinText(plan.fee),
    });
  }

  /**
   * Offers a stored send to the node; answers its hash. A node that cannot be reached throws (the caller retries);
   * a refusal is left to the scan, which offers it again and fails it once its inputs are spent elsewhere.
   */
  async offer(send: ChainSend): Promise<{ txHash: string }> {
    const refused = await this.broadcast(send.rawTx);
    if (refused) {
      this.chain.logger.warn({ id: send.id, txHash: send.txHash, reason: refused.reason }, 'the node refused a stored transaction; the watcher offers it again');
    } else if (send.status === 'signed') {
      await updateSend(this.chain.context.db, send.id, { status: 'sent' });
    }
    return { txHash: send.txHash };
  }

  /** sendrawtransaction; answers the node's refusal, or null when it took the transaction (or has it already). */
  private async broadcast(rawTx: string): Promise<RpcError | null> {
    try {
      await this.chain.node.call('sendrawtransaction', [rawTx]);
      return null;
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      if (e.code === RPC_ERROR.VERIFY_ALREADY_IN_CHAIN || /already (in|known)/i.test(e.reason)) return null;
      return e;
    }
  }

  /** Every open send to final: confirmed (a withdrawal's outcome reported), or failed when it can never confirm. */
  async followSends(): Promise<void> {
    const sends = await openSends(this.chain.context.db, this.chain.network);
    if (sends.length === 0) return;
    const statuses = await this.chain.txStatuses(sends.map((s) => s.txHash));
    for (const send of sends) {
      const status = statuses.get(send.txHash) ?? null;
      switch (sendStep(send.status as 'signed' | 'sent', status?.confirmations ?? null, this.chain.confirmations)) {
        case 'confirm':
          await this.settle(send, 'confirmed', status!.blockheight);
          break;
        case 'fail':
          await this.settle(send, 'failed', null);
          break;
        case 'mark-sent':
          await updateSend(this.chain.context.db, send.id, { status: 'sent' });
          break;
        case 'offer':
          await this.offerAgain(send, status !== null);
          break;
        case 'wait':
          break;
      }
    }
  }

  /**
   * A send in no block, offered again. One the node never took and whose inputs are spent in the chain can never
   * confirm: it fails once that has held for as many blocks as a payment needs (a reorg may still undo the spend).
   */
  private async offerAgain(send: ChainSend, nodeKnowsIt: boolean): Promise<void> {
    const refused = await this.broadcast(send.rawTx);
    if (!refused) {
      this.inputsGoneSince.delete(send.id);
      if (send.status === 'signed') await updateSend(this.chain.context.db, send.id, { status: 'sent' });
      return;
    }
    if (nodeKnowsIt || !(await this.inputsSpent(send))) {
      this.chain.logger.warn({ id: send.id, txHash: send.txHash, reason: refused.reason }, 'the node refuses an open send of ours; offered again at the next scan');
      return;
    }
    const tip = await this.chain.node.call<number>('getblockcount');
    const since = this.inputsGoneSince.get(send.id) ?? tip;
    this.inputsGoneSince.set(send.id, since);
    if (tip - since + 1 >= this.chain.confirmations) {
      this.inputsGoneSince.delete(send.id);
      await this.settle(send, 'failed', null);
    }
  }

  /** Whether an input of the send is no longer unspent in the chain (the mempool is left out: it may change). */
  private async inputsSpent(send: ChainSend): Promise<boolean> {
    const inputs = sendInputs(send.inputs).filter((i) => i.txid !== undefined);
    const outputs = await this.chain.node.batchAll<object | null>(inputs.map((i) => ({ method: 'gettxout', params: [i.txid, i.vout, false] })));
    return outputs.some((o) => o === null);
  }

  /** Records a send's end; a withdrawal's or refund's outcome goes to its feature first (refused: tried next scan). */
  private async settle(send: ChainSend, outcome: 'confirmed' | 'failed', blockheight: number | null): Promise<void> {
    if (isReported(send.purpose)) {
      try {
        await this.chain.context.reportOutgoing({ network: this.chain.network, purpose: send.purpose, id: send.id, txHash: send.txHash, outcome });
      } catch (e) {
        this.chain.logger.warn({ err: e, id: send.id, purpose: send.purpose, txHash: send.txHash }, 'an outgoing outcome was not taken yet; reported again at the next scan');
        return;
      }
    }
    await updateSend(this.chain.context.db, send.id, { status: outcome, ...(blockheight !== null ? { blockNumber: BigInt(blockheight) } : {}) });
    if (outcome === 'failed') {
      this.chain.logger.error({ id: send.id, purpose: send.purpose, txHash: send.txHash }, 'a send of ours can never confirm (its inputs were spent by another transaction)');
    }
  }
}
