// Consolidation on EVM chains (docs/chains-evm.md): sweeps with gas top-ups. Payments land on one deposit address
// each; withdrawals are paid from the hot wallet. A pass moves what was credited to deposit addresses and not yet
// moved (our records, checked against the chain at the depth a payment needs) into the hot wallet: native coins in
// one transfer less its fee; tokens in one transfer paid by gas the address holds, after a top-up from the hot
// wallet when it holds too little. One step per address per pass; an address with an open send waits.
import { getAddress, type Address } from 'viem';
import { Prisma } from '../../../generated/prisma/client.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../../domain/assets.ts';
import { Money } from '../../domain/money.ts';
import { derivedAmong, openSends } from '../store.ts';
import { fromBaseUnits, toBaseUnits } from '../units.ts';
import type { EvmChain, EvmHead } from './chain.ts';
import { maxCost, type Fees } from './fees.ts';
import { BUSY, TRANSFER_GAS, type EvmSender } from './sender.ts';

/** A native deposit is swept only when worth this many times its own fee. */
const NATIVE_FEE_MULTIPLE = 10n;
/** While work is left over (a top-up on its way, more addresses than one pass takes), the next pass comes this soon. */
const FOLLOW_UP_MS = 30_000;

export type SweepStep =
  | { kind: 'none' }
  | { kind: 'token'; asset: PaymentCurrency; units: bigint }
  | { kind: 'topup'; asset: PaymentCurrency; units: bigint }
  | { kind: 'native'; units: bigint };

/** What one address needs next, pure: a token sweep (or its top-up first), else a native sweep worth its fee. */
export function sweepStep(input: {
  /** Tokens to move (our records, no more than the chain holds), in base units, with the gas their transfer needs. */
  tokens: { asset: PaymentCurrency; units: bigint; gas: bigint }[];
  /** Native coin to move (records), and what the address holds: at the safe depth and now. */
  nativeUnswept: bigint;
  nativeSafe: bigint;
  nativeNow: bigint;
  fees: Fees;
}): SweepStep {
  const token = input.tokens.find((t) => t.units > 0n);
  if (token) {
    const need = maxCost(input.fees, token.gas);
    return input.nativeNow >= need ? { kind: 'token', asset: token.asset, units: token.units } : { kind: 'topup', asset: token.asset, units: need - input.nativeNow };
  }
  const fee = maxCost(input.fees, TRANSFER_GAS);
  const held = input.nativeSafe < input.nativeNow ? input.nativeSafe : input.nativeNow;
  const movable = held - fee;
  const units = input.nativeUnswept < movable ? input.nativeUnswept : movable;
  return units >= fee * NATIVE_FEE_MULTIPLE ? { kind: 'native', units } : { kind: 'none' };
}

export class EvmSweeper {
  constructor(
    private readonly chain: EvmChain,
    private readonly sender: EvmSender,
  ) {}

  private get db() {
    return this.chain.context.db;
  }

  /** Runs a pass when due (every sweepIntervalMs, sooner when work is left or the hot wallet ran short); answers when it last ran. */
  async sweepIfDue(head: EvmHead, sweptAt: string | null): Promise<string | null> {
    if (!this.chain.context.signer) return sweptAt;
    const interval = this.chain.config.sweepIntervalMs;
    const now = Date.now();
    const due = this.sender.shortOfFunds || sweptAt === null || now - Date.parse(sweptAt) >= interval;
    if (!due) return sweptAt;
    this.sender.shortOfFunds = false;
    const leftOver = await this.pass(head);
    // With work left, the next pass is due in FOLLOW_UP_MS rather than a whole interval.
    return new Date(leftOver ? now - Math.max(0, interval - FOLLOW_UP_MS) : now).toISOString();
  }

  /** One pass; answers whether work is left for a next one. */
  private async pass(head: EvmHead): Promise<boolean> {
    const limit = this.chain.config.sweepMaxAddresses;
    const fees = await this.sender.fees(head);
    const unswept = await this.unswept(limit, this.nativeWorthSweeping(fees));
    if (unswept.size === 0) return false;
    const open = await openSends(this.db, this.chain.network);
    const busy = new Set(open.flatMap((s) => [s.fromAddress, s.toAddress]));
    const indexes = await derivedAmong(this.db, this.chain.network, [...unswept.keys()]);
    let leftOver = unswept.size >= limit;
    for (const [address, amounts] of unswept) {
      if (busy.has(address)) {
        leftOver = true;
        continue;
      }
      try {
        const step = await this.sweepAddress(getAddress(address), indexes.get(address)!, amounts, fees, head);
        if (step === 'topup' || step === 'busy') leftOver = true;
      } catch (e) {
        this.chain.context.logger.warn({ err: e, network: this.chain.network, address }, 'consolidation of a deposit address failed; tried again at the next pass');
        leftOver = true;
      }
    }
    return leftOver;
  }

  /**
   * The least native coin an address must wait with to be worth a pass: what sweepStep would move (NATIVE_FEE_MULTIPLE
   * fees after its own), or the configured minimum if higher. A swept address keeps about one fee in our records (the
   * fee's reserve, partly unspent): below this it is not due, so swept addresses never crowd out the ones still to do.
   */
  private nativeWorthSweeping(fees: Fees): Money {
    const fee = maxCost(fees, TRANSFER_GAS);
    const worth = fromBaseUnits(fee * (NATIVE_FEE_MULTIPLE + 1n), PAYMENT_CURRENCY_INFO[this.chain.native].decimals);
    const configured = this.chain.config.sweepNativeMinimum;
    return configured && configured.gt(worth) ? configured : worth;
  }

  /**
   * What our records say each deposit address holds and was not moved yet (credited less swept), per asset, where that
   * reaches the minimum worth sweeping. At most `limit` addresses, taken at random among those due: an address that
   * cannot be swept (it holds less than was credited, its sweep fails) never keeps the others waiting for good.
   */
  private async unswept(limit: number, nativeWorth: Money): Promise<Map<string, Map<PaymentCurrency, Money>>> {
    const { network, native, config } = this.chain;
    const tokenMinimum = config.sweepTokenMinimum.toFixed();
    const nativeMinimum = nativeWorth.toFixed();
    const rows = await this.db.$queryRaw<{ address: string; asset: PaymentCurrency; amount: string }[]>`
      WITH credited AS (
        SELECT t."toAddress" AS "address", t."asset", SUM(t."amount") AS "total" FROM "ChainTransfer" t
        JOIN "DerivedAddress" d ON d."network" = t."network" AND d."address" = t."toAddress"
        WHERE t."network" = ${network} AND t."state" = 'confirmed' AND t."asset" IN (${Prisma.join(this.chain.assets)})
        GROUP BY 1, 2
      ), swept AS (
        SELECT "fromAddress" AS "address", "asset", SUM("amount") AS "total" FROM "ChainSend"
        WHERE "network" = ${network} AND "purpose" = 'sweep' AND "status" <> 'failed'
        GROUP BY 1, 2
      ), waiting AS (
        SELECT c."address", c."asset", c."total" - COALESCE(s."total", 0) AS "amount" FROM credited c
        LEFT JOIN swept s ON s."address" = c."address" AND s."asset" = c."asset"
      ), due AS (
        SELECT "address" FROM (
          SELECT DISTINCT "address" FROM waiting
          WHERE "amount" > 0 AND "amount" >= CASE WHEN "asset" = ${native} THEN ${nativeMinimum}::numeric ELSE ${tokenMinimum}::numeric END
        ) d
        ORDER BY random() LIMIT ${limit}
      )
      SELECT w."address", w."asset", w."amount"::text AS "amount" FROM waiting w JOIN due USING ("address") WHERE w."amount" > 0`;
    const out = new Map<string, Map<PaymentCurrency, Money>>();
    for (const row of rows) {
      const amounts = out.get(row.address) ?? new Map<PaymentCurrency, Money>();
      amounts.set(row.asset, new Money(row.amount));
      out.set(row.address, amounts);
    }
    return out;
  }

  /** One step for one address; answers which ('busy': another process's send for it came first). */
  private async sweepAddress(address: Address, index: number, amounts: Map<PaymentCurrency, Money>, fees: Fees, head: EvmHead): Promise<SweepStep['kind'] | 'busy'> {
    const { rpc, native } = this.chain;
    const safe = BigInt(Math.max(0, head.number - this.chain.confirmations + 1));
    const hot = this.sender.hotWallet().address;
    const tokens: { asset: PaymentCurrency; units: bigint; gas: bigint }[] = [];
    for (const token of this.chain.tokens) {
      const amount = amounts.get(token.asset);
      if (!amount || amount.lt(this.chain.config.sweepTokenMinimum)) continue;
      const units = toBaseUnits(amount, token.decimals);
      const [held] = await rpc.tokenBalances(token.contract, [address], safe);
      if (held! < units) {
        this.chain.context.logger.error(
          { network: this.chain.network, address, asset: token.asset, recorded: amount.toFixed(), onChain: fromBaseUnits(held!, token.decimals).toFixed() },
          'a deposit address holds less than was credited to it: not swept (ledger:verify shows it; an operator must look)',
        );
        continue;
      }
      tokens.push({ asset: token.asset, units, gas: await this.sender.gasFor(address, this.sender.callOf(token.asset, hot, units)) });
    }
    const [[nativeSafe], [nativeNow]] = await Promise.all([rpc.balances([address], safe), rpc.balances([address], 'latest')]);
    const nativeUnswept = toBaseUnits(amounts.get(native) ?? new Money(0), PAYMENT_CURRENCY_INFO[native].decimals);
    const step = sweepStep({ tokens, nativeUnswept, nativeSafe: nativeSafe!, nativeNow: nativeNow!, fees });
    const decimalsOf = (asset: PaymentCurrency) => PAYMENT_CURRENCY_INFO[asset].decimals;
    switch (step.kind) {
      case 'none':
        break;
      case 'topup': {
        const amount = fromBaseUnits(step.units, decimalsOf(native));
        const sent = await this.sender.store(this.sender.hotWallet(), {
          id: (nonce) => `topup:${this.chain.network}:${address}:${nonce}`,
          onlyIfIdle: address,
          purpose: 'topup',
          asset: native,
          to: address,
          amount,
          call: { to: address, value: step.units },
          gas: TRANSFER_GAS,
          fees,
        });
        if (sent === BUSY) return 'busy';
        this.chain.context.logger.info({ network: this.chain.network, address, amount: amount.toFixed(), txHash: sent.txHash }, `gas for a ${step.asset} sweep sent to a deposit address`);
        await this.sender.offer(sent, false);
        break;
      }
      case 'token':
      case 'native': {
        const asset = step.kind === 'token' ? step.asset : native;
        const call = this.sender.callOf(asset, hot, step.units);
        const gas = step.kind === 'token' ? tokens.find((t) => t.asset === asset)!.gas : TRANSFER_GAS;
        const sent = await this.sender.store(this.sender.depositAccount(index), {
          id: (nonce) => `sweep:${this.chain.network}:${address}:${nonce}`,
          onlyIfIdle: address,
          purpose: 'sweep',
          asset,
          to: hot,
          amount: fromBaseUnits(step.units, decimalsOf(asset)),
          call,
          gas,
          fees,
        });
        if (sent === BUSY) return 'busy';
        this.chain.context.logger.info({ network: this.chain.network, address, asset, amount: sent.amount.toString(), txHash: sent.txHash }, 'a deposit address swept into the hot wallet');
        await this.sender.offer(sent, false);
        break;
      }
    }
    return step.kind;
  }
}
