// The arithmetic of our UTXO transactions, pure: amounts in satoshis (bigint, never floats), virtual sizes, fees,
// which outputs a payment or a consolidation spends, and building the unsigned transaction (@scure/btc-signer).
import { hex } from '@scure/base';
import { Address, OutScript, Transaction } from '@scure/btc-signer';
import { Decimal } from 'decimal.js';
import { Money, toMoney } from '../../domain/money.ts';
import type { KeyPath } from '../signer.ts';
import type { SignerNetwork } from './networks.ts';

export const COIN_DECIMALS = 8;
const SATS_PER_COIN = new Money(10).pow(COIN_DECIMALS);

/** An amount of coins in satoshis; refuses what is negative or finer than a satoshi. */
export function toSats(amount: Decimal.Value | { toString(): string }): bigint {
  const sats = toMoney(amount).times(SATS_PER_COIN);
  if (!sats.isInteger() || sats.isNegative()) throw new Error(`not a whole number of satoshis: ${toMoney(amount).toFixed()}`);
  return BigInt(sats.toFixed(0));
}

export const fromSats = (sats: bigint): Money => new Money(sats.toString()).div(SATS_PER_COIN);

/** The decimal string of an amount of satoshis, as the node and our records write it (8 places). */
export const coinText = (sats: bigint): string => fromSats(sats).toFixed(COIN_DECIMALS);

// --- sizes (BIP-141 weight units: 4 per non-witness byte, 1 per witness byte; vsize = weight / 4, rounded up) ---

export type InputKind = 'wpkh' | 'pkh';

/** Version, input and output counts, lock time. */
const TX_OVERHEAD_WEIGHT = 4 * (4 + 1 + 1 + 4);
/** The segwit marker and flag, once per transaction with a witness. */
const SEGWIT_MARKER_WEIGHT = 2;
/**
 * Upper bounds: a DER signature is at most 72 bytes with its sighash byte, the key 33 (compressed).
 * wpkh: outpoint 36 + empty script 1 + sequence 4 outside the witness; witness: count, signature, key.
 * pkh: the same outpoint and sequence, and a script of signature and key (148 bytes in all).
 */
const INPUT_WEIGHT: Record<InputKind, number> = {
  wpkh: 4 * (36 + 1 + 4) + (1 + 1 + 72 + 1 + 33),
  pkh: 4 * (36 + 1 + 1 + 72 + 1 + 33 + 4),
};

/** An output: its amount (8 bytes), its script length (1 byte below 253) and its script. */
export const outputWeight = (scriptLength: number) => 4 * (8 + 1 + scriptLength);

/** The virtual size a transaction will have at most once signed. */
export function estimateVsize(kind: InputKind, inputs: number, outputScriptLengths: number[]): number {
  const weight =
    TX_OVERHEAD_WEIGHT + (kind === 'wpkh' ? SEGWIT_MARKER_WEIGHT : 0) + inputs * INPUT_WEIGHT[kind] + outputScriptLengths.reduce((w, len) => w + outputWeight(len), 0);
  return Math.ceil(weight / 4);
}

/** What one more input adds to the virtual size (what spending an output costs). */
export const inputVsize = (kind: InputKind) => Math.ceil(INPUT_WEIGHT[kind] / 4);

/** The fee of `vsize` virtual bytes at `rate` satoshis per virtual byte, rounded up to a whole satoshi. */
export const feeFor = (vsize: number, rate: Decimal): bigint => BigInt(rate.times(vsize).ceil().toFixed(0));

/** How a network's transactions are made: the kind of our inputs and the node's dust relay fee (sat/vB). */
export interface SpendRules {
  input: InputKind;
  dustRelayFee: bigint;
}

/** A witness program: a version (OP_0, OP_1..OP_16) and one push of 2 to 40 bytes (P2WPKH, P2WSH, P2TR). */
function isWitnessProgram(script: Uint8Array): boolean {
  const version = script[0]!;
  return script.length >= 4 && script.length <= 42 && (version === 0 || (version >= 0x51 && version <= 0x60)) && script[1] === script.length - 2;
}

/**
 * The smallest output to `script` the network relays (Bitcoin Core's GetDustThreshold: what creating and later
 * spending it costs at the dust relay fee): 546 sat for P2PKH, 540 P2SH, 294 P2WPKH, 330 P2WSH and P2TR at Bitcoin's
 * 3 sat/vB; ten times that on Litecoin. An amount below it is refused; change below it is left to the fee instead.
 */
export function dustLimit(script: Uint8Array, dustRelayFee: bigint): bigint {
  // A witness spend counts its 107 witness bytes as 26 (integer division by 4); any other spends 148 bytes.
  const spend = isWitnessProgram(script) ? 32 + 4 + 1 + 26 + 4 : 32 + 4 + 1 + 107 + 4;
  return BigInt(8 + 1 + script.length + spend) * dustRelayFee;
}

// --- choosing what to spend ---

/** An output of ours the signer can spend. */
export interface Coin {
  txid: string;
  vout: number;
  value: bigint;
  /** Its output script (hex), as the node reports it. */
  script: string;
  address: string;
  /** Where the signer finds its key. */
  key: KeyPath;
}

export interface PlannedOutput {
  script: Uint8Array;
  value: bigint;
}

export interface Plan {
  inputs: Coin[];
  outputs: PlannedOutput[];
  fee: bigint;
  vsize: number;
}

export type PaymentPlan = Plan | { shortBy: bigint; available: bigint; needed: bigint };

/**
 * Pays `amount` to `to` from `coins`, largest first, change to `change`. The receiver gets exactly `amount`; the
 * fee comes from the coins. Change smaller than the dust limit goes to the fee. Answers what is missing when the
 * coins do not cover amount and fee.
 */
export function planPayment(coins: Coin[], amount: bigint, to: Uint8Array, change: Uint8Array, rate: Decimal, rules: SpendRules): PaymentPlan {
  const kind = rules.input;
  const sorted = [...coins].sort((a, b) => (a.value > b.value ? -1 : a.value < b.value ? 1 : 0));
  const inputs: Coin[] = [];
  let total = 0n;
  for (const coin of sorted) {
    inputs.push(coin);
    total += coin.value;
    const withChange = estimateVsize(kind, inputs.length, [to.length, change.length]);
    const feeWithChange = feeFor(withChange, rate);
    const rest = total - amount - feeWithChange;
    if (rest >= dustLimit(change, rules.dustRelayFee)) {
      return { inputs, outputs: [{ script: to, value: amount }, { script: change, value: rest }], fee: feeWithChange, vsize: withChange };
    }
    const alone = estimateVsize(kind, inputs.length, [to.length]);
    if (total - amount >= feeFor(alone, rate)) return { inputs, outputs: [{ script: to, value: amount }], fee: total - amount, vsize: alone };
  }
  const needed = amount + feeFor(estimateVsize(kind, Math.max(1, inputs.length), [to.length, change.length]), rate);
  return { shortBy: needed - total, available: total, needed };
}

/**
 * Consolidates `coins` into one output to `to`: the largest first, at most `maxInputs`, and only coins worth at
 * least `WORTH_SPENDING` times what spending them costs (smaller ones wait for lower fees). Nothing when no coin is
 * worth it or what would arrive is dust.
 */
export function planSweep(coins: Coin[], to: Uint8Array, rate: Decimal, rules: SpendRules, maxInputs: number): Plan | null {
  const kind = rules.input;
  const cost = feeFor(inputVsize(kind), rate);
  const worth = coins.filter((c) => c.value >= cost * WORTH_SPENDING).sort((a, b) => (a.value > b.value ? -1 : a.value < b.value ? 1 : 0));
  const inputs = worth.slice(0, maxInputs);
  if (inputs.length === 0) return null;
  const vsize = estimateVsize(kind, inputs.length, [to.length]);
  const fee = feeFor(vsize, rate);
  const value = inputs.reduce((s, c) => s + c.value, 0n) - fee;
  if (value < dustLimit(to, rules.dustRelayFee)) return null;
  return { inputs, outputs: [{ script: to, value }], fee, vsize };
}

/** A deposit is consolidated once it is worth this many times the fee of spending it (the fee is at most 20%). */
export const WORTH_SPENDING = 5n;

// --- building ---

/**
 * The output script paying `address` (a segwit network's address: base58 P2PKH or P2SH, bech32 P2WPKH or P2WSH,
 * bech32m P2TR). Its length is what the output adds to the size: 34 bytes P2PKH, 32 P2SH, 31 P2WPKH, 43 P2WSH/P2TR.
 */
export const outputScript = (address: string, network: SignerNetwork): Uint8Array => OutScript.encode(Address(network).decode(address));

/** The unsigned transaction of a plan, as a PSBT (each input carries the output it spends, for segwit signing). */
export function unsignedPsbt(plan: Plan): Uint8Array {
  const tx = new Transaction();
  for (const input of plan.inputs) {
    tx.addInput({ txid: input.txid, index: input.vout, witnessUtxo: { script: hex.decode(input.script), amount: input.value } });
  }
  for (const output of plan.outputs) tx.addOutput({ script: output.script, amount: output.value });
  return tx.toPSBT();
}

/** A signed PSBT finalized: the raw transaction to broadcast and its id. */
export function finalizeSigned(psbt: Uint8Array): { rawTx: string; txid: string; vsize: number } {
  const tx = Transaction.fromPSBT(psbt);
  tx.finalize();
  return { rawTx: tx.hex, txid: tx.id, vsize: tx.vsize };
}
