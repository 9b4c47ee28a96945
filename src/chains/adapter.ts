import type { Decimal } from 'decimal.js';
import type { Network, PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';

export interface AllocatedAddress {
  address: string;
  /** Deposit tag (memo) for tagged networks such as TON; null elsewhere. */
  tag: string | null;
}

export interface AddressRequest {
  companyId: string;
  /** What the address is for: an invoice id or a static address id. */
  ownerId: string;
  paymentCurrency: PaymentCurrency;
}

/** What a watcher saw on chain: one output of one transaction to one of our addresses. */
export interface TransferReport {
  network: Network;
  /** What was sent, as a payment currency (asset plus network). */
  asset: PaymentCurrency;
  txHash: string;
  /** Output (UTXO) or log index: one transaction may pay several addresses or the same one twice. */
  outputIndex: number;
  from: string | null;
  to: string;
  tag: string | null;
  amount: Decimal;
  confirmations: number;
  blockNumber: bigint | null;
  /** The transaction left the chain (reorg, replaced, expired from the mempool) before it was final. */
  dropped: boolean;
}

/**
 * What features pay out on chain, a registry they fill by declaration merging (and list in
 * Feature.declares.outgoingPurposes), e.g.
 *   declare module '../chains/adapter.ts' { interface OutgoingPurposes { withdrawal: true } }
 */
export interface OutgoingPurposes {}

export type OutgoingPurpose = keyof OutgoingPurposes & string;

export interface OutgoingTransfer {
  /** Our id for the transfer; adapters use it to make a repeated send a no-op. */
  id: string;
  /** What it pays out; its outcome is reported back to that purpose's listener (OutgoingReport). */
  purpose: OutgoingPurpose;
  asset: PaymentCurrency;
  to: string;
  tag: string | null;
  amount: Decimal;
}

/** One per network; the rest of the service talks to chains only through this. */
export interface ChainAdapter {
  readonly network: Network;
  allocateAddress(request: AddressRequest): Promise<AllocatedAddress>;
  isValidAddress(address: string): boolean;
  /**
   * Why outgoing transfers of `asset` cannot be sent here at all (no signer, not supported, no contract), or null.
   * Withdrawals and refunds are refused up front then, rather than held and retried forever.
   */
  sendRefusal(asset: PaymentCurrency): string | null;
  /** Hands an outgoing transfer to the chain; answers its transaction hash. Idempotent per `id`. */
  send(transfer: OutgoingTransfer): Promise<{ txHash: string }>;
}

export type TransferListener = (report: TransferReport) => Promise<unknown>;

/**
 * What became of one of our outgoing transactions (a withdrawal or a refund): final on chain, or failed for good. A
 * report for a transfer whose transaction is not recorded yet (the sender crashed between broadcast and record) is
 * refused with a conflict; watchers report again until it is taken, as they do for incoming transfers.
 */
export interface OutgoingReport {
  network: Network;
  purpose: OutgoingPurpose;
  /** The id it was sent with (OutgoingTransfer.id). */
  id: string;
  /** The transaction that was mined (or the last one sent, when none was). */
  txHash: string;
  /** Hashes the send had before: transactions it replaced with higher fees (same nonce), one of which the service may hold. */
  earlier?: string[];
  outcome: 'confirmed' | 'failed';
}

export type OutgoingListener = (report: OutgoingReport) => Promise<unknown>;

/**
 * What the service hears from the chains, with the mode of the chain it came from: the sandbox chain's reports are
 * test mode's, real nodes' are live mode's. A listener applies a report only to objects of that mode (docs/modes.md).
 */
export type ModeTransferListener = (report: TransferReport, mode: Mode) => Promise<unknown>;
export type ModeOutgoingListener = (report: OutgoingReport, mode: Mode) => Promise<unknown>;

export interface ChainRegistry {
  /** The adapter of `network` in `mode`: test mode runs every network on the sandbox chain, live mode on its node (or off). */
  forNetwork(network: Network, mode: Mode): ChainAdapter;
  /** Whether currencies on `network` are offered in `mode` (company.assets isAllowed; docs/modes.md). */
  isOffered(network: Network, mode: Mode): boolean;
  /** Test mode is on (SANDBOX=1). */
  readonly sandbox: boolean;
  /** Whether this process sends on chain; false on a server whose chains worker does (CHAIN_WORKER=0). */
  readonly sendsHere: boolean;
  /** Confirmations after which a payment in `asset` counts as final in `mode`. */
  requiredConfirmations(asset: string, mode: Mode): number;
  /** Where adapters deliver what their watchers see. */
  onTransfer(listener: ModeTransferListener): void;
  /** Where adapters deliver the outcome of outgoing transactions of one purpose. */
  onOutgoing(purpose: OutgoingPurpose, listener: ModeOutgoingListener): void;
}
