// Sending on EVM chains (docs/chains-evm.md): withdrawals and refunds from the hot wallet, consolidation from deposit
// addresses, gas top-ups to them. Every transaction is signed and stored (ChainSend) before it is broadcast, under
// the network's spend lock, with its nonce: one past the highest we stored or the node counts, so concurrent sends
// (and processes) never share one and leave no gap. A repeated send of an id broadcasts the stored transaction.
// Watchers follow open sends to final, offer them again while unmined, and replace one stuck for
// `replaceAfterBlocks` with higher fees (same nonce: whichever is mined, the other cannot be).
import type { ChainSend } from '../../../generated/prisma/client.ts';
import type { Decimal } from 'decimal.js';
import { encodeFunctionData, erc20Abi, getAddress, hexToBigInt, keccak256, parseTransaction, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../domain/assets.ts';
import { toMoney } from '../../domain/money.ts';
import { AppError } from '../../errors/app-error.ts';
import type { OutgoingTransfer } from '../adapter.ts';
import { HOT_WALLET, NO_SIGNER } from '../signer.ts';
import { derivedAmong, findSend, isReported, openSends, replaceSend, storeSend, updateSend, withSpendLock, type SendPurpose } from '../store.ts';
import { fromBaseUnits, toBaseUnits } from '../units.ts';
import type { EvmChain, EvmHead } from './chain.ts';
import { chooseFees, gweiToWei, maxCost, replacementFees, type FeeCaps, type Fees } from './fees.ts';
import type { Call, RpcReceipt } from './rpc.ts';

/** Gas of a plain transfer of the native coin to an account without code. */
export const TRANSFER_GAS = 21_000n;
/** What writing a storage slot from zero costs beyond rewriting a non-zero one (EIP-2929/3529: 22,100 vs 5,000). */
const NEW_STORAGE_SLOT_GAS = 17_100n;
/** Node answers to a broadcast that mean it has (or had) the transaction: nothing to do. */
const ALREADY_THERE = /already known|already imported|known transaction|nonce too low|transaction already exists/i;

/** What one send moves, from whom, under which id. */
export interface SendPlan {
  /** The send's id, or how to make it from the nonce (consolidation: one per address and nonce). */
  id: string | ((nonce: bigint) => string);
  purpose: SendPurpose;
  asset: PaymentCurrency;
  /** The receiver (a token send calls the contract; this is who gets the tokens). */
  to: string;
  amount: Decimal;
  call: Call;
  gas: bigint;
  fees: Fees;
  /**
   * Consolidation: a deposit address that must have no open send (to or from it), checked under the spend lock, so
   * two processes that both saw it idle never sign two steps for it.
   */
  onlyIfIdle?: string;
}

/** A consolidation step not stored: its address had an open send by the time the spend lock was ours. */
export const BUSY = null;

export class EvmSender {
  /** Set when a payment found the hot wallet short: consolidation runs at the next scan. */
  shortOfFunds = false;
  private readonly caps: FeeCaps;

  constructor(private readonly chain: EvmChain) {
    this.caps = { maxFee: gweiToWei(chain.config.maxFeeGwei), priorityFee: gweiToWei(chain.config.priorityFeeGwei) };
  }

  private get db() {
    return this.chain.context.db;
  }

  private get logger() {
    return this.chain.context.logger;
  }

  private signerOrRefuse() {
    const signer = this.chain.context.signer;
    if (!signer) throw new AppError('SERVICE_UNAVAILABLE', `Sending on ${this.chain.network} is not possible: ${NO_SIGNER}`);
    return signer;
  }

  /** The hot wallet: where consolidation brings funds and what withdrawals and refunds are paid from. */
  hotWallet(): PrivateKeyAccount {
    return this.signerOrRefuse().evmAccount(this.chain.network, HOT_WALLET);
  }

  /** The account of a deposit address (by its index), to move what it received. */
  depositAccount(index: number): PrivateKeyAccount {
    return this.signerOrRefuse().evmAccount(this.chain.network, { chain: 0, index });
  }

  /** What a new transaction offers now. */
  async fees(head: EvmHead): Promise<Fees> {
    const suggested = head.baseFee === null ? await this.chain.rpc.gasPrice() : await this.chain.rpc.maxPriorityFeePerGas();
    return chooseFees({ baseFee: head.baseFee, suggested }, this.caps);
  }

  /** The call that moves `units` of `asset` to `to`: a value transfer, or the token's transfer(to, units). */
  callOf(asset: PaymentCurrency, to: Address, units: bigint): Call {
    if (asset === this.chain.native) return { to, value: units };
    const token = this.chain.token(asset);
    if (!token) throw new AppError('SERVICE_UNAVAILABLE', `Sending ${asset} on ${this.chain.network} is not possible: no contract is configured for it`);
    return { to: token.contract, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, units] }) };
  }

  /**
   * Gas for `call` from `from`: exact for a plain transfer; for a contract call a fifth more, and room for a storage
   * slot that turns from zero to non-zero by the time it runs (a token balance the estimate saw as held may be
   * empty then: unused gas is not charged, a transaction out of gas pays all of it and moves nothing).
   */
  async gasFor(from: Address, call: Call): Promise<bigint> {
    const gas = await this.chain.rpc.estimateGas(from, call);
    return gas === TRANSFER_GAS && !call.data ? gas : (gas * 6n) / 5n + NEW_STORAGE_SLOT_GAS;
  }

  /** A withdrawal or a refund, from the hot wallet. Idempotent per id. */
  async send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    const stored = await findSend(this.db, transfer.id);
    if (stored) return this.offer(stored, true);
    if (!this.chain.assets.includes(transfer.asset)) throw new Error(`${this.chain.network} does not send ${transfer.asset} here`);
    if (transfer.tag) throw new Error(`${this.chain.network} takes no tag`);
    if (!this.chain.isValidAddress(transfer.to)) throw new AppError('VALIDATION_FAILED', `${transfer.to} is not an address of ${this.chain.network}`);
    const hot = this.hotWallet();
    const units = toBaseUnits(transfer.amount, PAYMENT_CURRENCY_INFO[transfer.asset].decimals);
    const to = getAddress(transfer.to);
    const call = this.callOf(transfer.asset, to, units);
    const fees = await this.fees(await this.chain.head());
    // A transfer the hot wallet cannot cover is refused before a gas estimate, which would fail less clearly.
    await this.checkFunds(hot.address, transfer.asset, units, maxCost(fees, TRANSFER_GAS));
    const gas = await this.gasFor(hot.address, call);
    const row = await this.store(hot, { id: transfer.id, purpose: transfer.purpose, asset: transfer.asset, to, amount: transfer.amount, call, gas, fees });
    return this.offer(row, true);
  }

  /**
   * Signs and stores one send from `account` under the spend lock: its nonce, the hot wallet's funds checked against
   * what its open sends already promise. Answers the stored row (an earlier one of the same id if there is one).
   */
  async store(account: PrivateKeyAccount, plan: SendPlan): Promise<ChainSend>;
  async store(account: PrivateKeyAccount, plan: SendPlan & { onlyIfIdle: string }): Promise<ChainSend | typeof BUSY>;
  async store(account: PrivateKeyAccount, plan: SendPlan): Promise<ChainSend | typeof BUSY> {
    const { network } = this.chain;
    return withSpendLock(this.db, network, async (tx) => {
      if (typeof plan.id === 'string') {
        const again = await findSend(tx, plan.id);
        if (again) return again;
      }
      const idle = plan.onlyIfIdle;
      const fromHot = account.address === this.hotAddress();
      // Read once, under the lock: what the idle check and the hot wallet's funds check both need.
      const open = idle || fromHot ? await openSends(tx, network) : [];
      if (idle && open.some((s) => s.fromAddress === idle || s.toAddress === idle)) return BUSY;
      const [{ max }] = (await tx.$queryRaw<{ max: bigint | null }[]>`
        SELECT MAX("nonce") AS "max" FROM "ChainSend" WHERE "network" = ${network} AND "fromAddress" = ${account.address}`) as [{ max: bigint | null }];
      const counted = await this.chain.rpc.transactionCount(account.address, 'pending');
      const nonce = max === null || counted > max ? counted : max + 1n;
      if (fromHot) {
        const units = toBaseUnits(plan.amount, PAYMENT_CURRENCY_INFO[plan.asset].decimals);
        await this.checkFunds(account.address, plan.asset, units, maxCost(plan.fees, plan.gas), open);
      }
      const rawTx = await this.sign(account, nonce, plan.call, plan.gas, plan.fees);
      return storeSend(tx, {
        id: typeof plan.id === 'string' ? plan.id : plan.id(nonce),
        network,
        purpose: plan.purpose,
        asset: plan.asset,
        fromAddress: account.address,
        toAddress: plan.to,
        tag: null,
        amount: plan.amount.toFixed(),
        rawTx,
        txHash: keccak256(rawTx),
        nonce,
      });
    });
  }

  private hotAddressCache: string | null = null;
  private hotAddress(): string {
    return (this.hotAddressCache ??= this.hotWallet().address);
  }

  private sign(account: PrivateKeyAccount, nonce: bigint, call: Call, gas: bigint, fees: Fees): Promise<Hex> {
    const common = { chainId: this.chain.config.chainId, nonce: Number(nonce), to: call.to, value: call.value, data: call.data, gas };
    return fees.type === 'eip1559'
      ? account.signTransaction({ ...common, type: 'eip1559', maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas })
      : account.signTransaction({ ...common, type: 'legacy', gasPrice: fees.gasPrice });
  }

  /**
   * Whether `from` can pay `units` of `asset` and `gasCost` besides what its open, unmined sends promise; throws
   * saying what is missing (the caller retries later; consolidation is asked to run).
   */
  private async checkFunds(from: Address, asset: PaymentCurrency, units: bigint, gasCost: bigint, open?: ChainSend[]): Promise<void> {
    const rpc = this.chain.rpc;
    const [mined, [native]] = await Promise.all([rpc.transactionCount(from, 'latest'), rpc.balances([from], 'latest')]);
    const promised = new Map<string, bigint>();
    const add = (a: string, n: bigint) => promised.set(a, (promised.get(a) ?? 0n) + n);
    for (const s of open ?? (await openSends(this.db, this.chain.network))) {
      if (s.fromAddress !== from || s.nonce === null || BigInt(s.nonce) < mined) continue;
      const signed = parseTransaction(s.rawTx as Hex);
      add(this.chain.native, (signed.value ?? 0n) + (signed.gas ?? 0n) * (signed.maxFeePerGas ?? signed.gasPrice ?? 0n));
      if (s.asset !== this.chain.native) add(s.asset, toBaseUnits(toMoney(s.amount), PAYMENT_CURRENCY_INFO[s.asset as PaymentCurrency].decimals));
    }
    const needNative = gasCost + (asset === this.chain.native ? units : 0n) + (promised.get(this.chain.native) ?? 0n);
    const short: string[] = [];
    if (native! < needNative) short.push(this.amountText(this.chain.native, needNative - native!));
    const token = this.chain.token(asset);
    if (token) {
      const [held] = await rpc.tokenBalances(token.contract, [from], 'latest');
      const need = units + (promised.get(asset) ?? 0n);
      if (held! < need) short.push(this.amountText(asset, need - held!));
    }
    if (short.length > 0) {
      this.shortOfFunds = true;
      throw new Error(`${this.chain.network}: the hot wallet ${from} is short of ${short.join(' and ')} for this send (with what its open sends promise); consolidation is asked to run, and the send is retried`);
    }
  }

  private amountText(asset: PaymentCurrency, units: bigint): string {
    return `${fromBaseUnits(units, PAYMENT_CURRENCY_INFO[asset].decimals).toFixed()} ${asset}`;
  }

  /**
   * Broadcasts a stored send (again); answers its hash. A final one is not broadcast. With `strict`, a refusal
   * throws (the caller retries); otherwise it is logged (a watcher offers it again at its next scan).
   */
  async offer(send: ChainSend, strict: boolean): Promise<{ txHash: string }> {
    if (send.status === 'confirmed' || send.status === 'failed') return { txHash: send.txHash };
    try {
      await this.chain.rpc.sendRawTransaction(send.rawTx as Hex);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (!ALREADY_THERE.test(message)) {
        if (strict) throw e;
        this.logger.warn({ network: this.chain.network, id: send.id, txHash: send.txHash, err: message }, 'the node refuses an open send of ours; offered again at the next scan');
        return { txHash: send.txHash };
      }
    }
    if (send.status === 'signed') await updateSend(this.db, send.id, { status: 'sent' });
    return { txHash: send.txHash };
  }

  /**
   * Follows every open send one scan further: final once as deep as a payment needs (confirmed, or failed if it
   * reverted), failed if another transaction took its nonce for good, otherwise offered again, and replaced when it
   * waited `replaceAfterBlocks`. Answers the blocks the unmined ones have waited since (the next scan's `waiting`).
   */
  async follow(head: EvmHead, waiting: Record<string, number>): Promise<Record<string, number>> {
    const still: Record<string, number> = {};
    const sends = await openSends(this.db, this.chain.network);
    const safe = head.number - this.chain.confirmations + 1;
    for (const send of sends) {
      const hashes = [send.txHash, ...send.previousTxHashes] as Hex[];
      const receipt = (await this.chain.rpc.receipts(hashes)).find((r): r is RpcReceipt => r !== null);
      if (receipt) {
        if (head.number - Number(hexToBigInt(receipt.blockNumber)) + 1 >= this.chain.confirmations) await this.settle(send, receipt);
        else if (send.status === 'signed') await updateSend(this.db, send.id, { status: 'sent' });
        continue;
      }
      if (send.nonce !== null && safe >= 0 && (await this.chain.rpc.transactionCount(send.fromAddress as Address, BigInt(safe))) > BigInt(send.nonce)) {
        await this.settle(send, null);
        continue;
      }
      const since = waiting[send.id] ?? head.number;
      if (head.number - since >= this.chain.config.replaceAfterBlocks && (await this.replace(send, head))) {
        still[send.id] = head.number;
        continue;
      }
      await this.offer(send, false);
      still[send.id] = since;
    }
    return still;
  }

  /** Records a send's end (a withdrawal's or refund's outcome goes to its feature first; refused: next scan). */
  private async settle(send: ChainSend, receipt: RpcReceipt | null): Promise<void> {
    const outcome = receipt?.status === '0x1' ? 'confirmed' : 'failed';
    const txHash = receipt?.transactionHash ?? send.txHash;
    if (isReported(send.purpose)) {
      try {
        const earlier = [send.txHash, ...send.previousTxHashes].filter((h) => h !== txHash);
        await this.chain.context.reportOutgoing({ network: this.chain.network, purpose: send.purpose, id: send.id, txHash, earlier, outcome });
      } catch (e) {
        this.logger.warn({ err: e, id: send.id, purpose: send.purpose, txHash }, 'an outgoing outcome was not taken yet; reported again at the next scan');
        return;
      }
    }
    await updateSend(this.db, send.id, {
      status: outcome,
      txHash,
      ...(receipt
        ? {
            blockNumber: hexToBigInt(receipt.blockNumber),
            fee: fromBaseUnits(hexToBigInt(receipt.gasUsed) * hexToBigInt(receipt.effectiveGasPrice), PAYMENT_CURRENCY_INFO[this.chain.native].decimals).toFixed(),
          }
        : {}),
    });
    if (outcome === 'failed') {
      const why = receipt ? 'it reverted on chain (its fee is spent)' : 'another transaction took its nonce';
      this.logger.error({ network: this.chain.network, id: send.id, purpose: send.purpose, txHash }, `a send of ours failed: ${why}`);
    }
  }

  /**
   * Replaces a stuck send with the same transaction at higher fees; answers whether it did. Not when the caps leave
   * no room (logged: an operator may raise them).
   */
  private async replace(send: ChainSend, head: EvmHead): Promise<boolean> {
    const old = parseTransaction(send.rawTx as Hex);
    const oldFees: Fees =
      old.type === 'eip1559' ? { type: 'eip1559', maxFeePerGas: old.maxFeePerGas!, maxPriorityFeePerGas: old.maxPriorityFeePerGas! } : { type: 'legacy', gasPrice: old.gasPrice! };
    const fees = replacementFees(oldFees, await this.fees(head), this.caps);
    if (!fees) {
      this.logger.warn({ network: this.chain.network, id: send.id, txHash: send.txHash }, 'a stuck send cannot be replaced: the fee caps (maxFeeGwei) leave no room for higher fees');
      return false;
    }
    const account = await this.accountOf(send.fromAddress);
    const rawTx = await this.sign(account, BigInt(old.nonce!), { to: old.to!, value: old.value ?? 0n, data: old.data }, old.gas!, fees);
    const txHash = keccak256(rawTx);
    if (!(await replaceSend(this.db, send.id, send.txHash, { rawTx, txHash }))) return false;
    this.logger.info({ network: this.chain.network, id: send.id, replaced: send.txHash, txHash }, 'a stuck send was replaced with higher fees');
    await this.offer((await findSend(this.db, send.id))!, false);
    return true;
  }

  /** The signing account of one of our addresses: the hot wallet, or a deposit address. */
  private async accountOf(address: string): Promise<PrivateKeyAccount> {
    if (address === this.hotAddress()) return this.hotWallet();
    const index = (await derivedAmong(this.db, this.chain.network, [address])).get(address);
    if (index === undefined) throw new Error(`${address} is none of our addresses on ${this.chain.network}`);
    return this.depositAccount(index);
  }
}
