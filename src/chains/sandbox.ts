import { createHash, randomBytes, randomInt } from 'node:crypto';
import { PAYMENT_CURRENCY_INFO, type Network } from '../domain/assets.ts';
import type { Db } from '../db/client.ts';
import type { AddressRequest, AllocatedAddress, ChainAdapter, ChainRegistry, ModeTransferListener, OutgoingListener, OutgoingTransfer, TransferListener } from './adapter.ts';
import { OutgoingListeners } from './outgoing.ts';
import { ADDRESS_FORMAT, encodeAddress, validateAddress } from './address-formats.ts';

/**
 * Sandbox chain: addresses in the network's real format (valid checksums) from random key material.
 * Tagged networks use one deposit address per company and a fresh numeric tag per invoice, as TON
 * gateways do.
 */
export class SandboxChainAdapter implements ChainAdapter {
  constructor(
    readonly network: Network,
    /** The simulated chain's record of outgoing transactions (SandboxBroadcast); without it hashes derive from ids. */
    private readonly db: Db | null = null,
    private readonly outage: { sendFailures: number } = { sendFailures: 0 },
  ) {}

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    const format = ADDRESS_FORMAT[this.network];
    if (PAYMENT_CURRENCY_INFO[request.paymentCurrency].tagged) {
      const companyWallet = createHash('sha256').update(`sandbox:${this.network}:${request.companyId}`).digest();
      return { address: encodeAddress(format, companyWallet), tag: String(randomInt(1, 2 ** 47)) };
    }
    const size = format === 'sol' || format === 'ton' ? 32 : 20;
    return { address: encodeAddress(format, randomBytes(size)), tag: null };
  }

  isValidAddress(address: string): boolean {
    return validateAddress(ADDRESS_FORMAT[this.network], address);
  }

  /**
   * Sandbox sends succeed unless an outage is simulated. The chain records one transaction per transfer id with a
   * fresh random hash, as a real chain would give a re-signed transaction; a repeated send answers the first one.
   */
  sendRefusal(): string | null {
    return null;
  }

  async send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    if (this.outage.sendFailures > 0) {
      this.outage.sendFailures--;
      throw new Error(`sandbox ${this.network} node unavailable (SANDBOX_SEND_FAILURES)`);
    }
    if (!this.db) return { txHash: sandboxTxHash(this.network, `send:${transfer.id}`) };
    const [row] = await this.db.$queryRaw<{ txHash: string }[]>`
      INSERT INTO "SandboxBroadcast" ("transferId", "network", "txHash", "asset", "toAddress", "amount")
      VALUES (${transfer.id}, ${this.network}, ${sandboxTxHash(this.network)}, ${transfer.asset}, ${transfer.to}, ${transfer.amount.toFixed()}::numeric)
      ON CONFLICT ("transferId") DO UPDATE SET "calls" = "SandboxBroadcast"."calls" + 1
      RETURNING "txHash"`;
    return { txHash: row!.txHash };
  }
}

/** A transaction hash in the network's usual form. */
export function sandboxTxHash(network: Network, seed?: string): string {
  const bytes = seed ? createHash('sha256').update(seed).digest() : randomBytes(32);
  const hex = bytes.toString('hex');
  return network === 'ethereum' || network === 'bsc' ? `0x${hex}` : hex;
}

export interface SandboxRegistry extends ChainRegistry {
  /** Simulated chain activity enters here, as a real watcher's reports would; it reaches test-mode objects only. */
  report: TransferListener;
  /** The simulated outcome of an outgoing transaction, as a real watcher would report it (test mode only). */
  reportOutgoing: OutgoingListener;
}

/** Confirmations after which a sandbox transfer counts: the network's usual number. */
export const sandboxConfirmations = (asset: string): number => PAYMENT_CURRENCY_INFO[asset as keyof typeof PAYMENT_CURRENCY_INFO]?.confirmations ?? 1;

/** The simulated chain's side of a registry: its adapters, and the entry of its reports (always test mode's). */
export class SandboxChain {
  private readonly adapters = new Map<Network, ChainAdapter>();
  private listener: ModeTransferListener | null = null;

  /**
   * `outage.sendFailures`: how many sends (across networks) fail before the simulated nodes accept them. `db`: where
   * the simulated chain keeps what it broadcast. `outgoing`: where its sends' outcomes go (the registry's).
   */
  constructor(
    private readonly db: Db | null,
    private readonly outage: { sendFailures: number },
    private readonly outgoing: OutgoingListeners,
  ) {}

  forNetwork(network: Network): ChainAdapter {
    let adapter = this.adapters.get(network);
    if (!adapter) this.adapters.set(network, (adapter = new SandboxChainAdapter(network, this.db, this.outage)));
    return adapter;
  }

  listen(transfer: ModeTransferListener | null): void {
    this.listener = transfer;
  }

  readonly report: TransferListener = (transfer) => {
    if (!this.listener) throw new Error('no transfer listener registered');
    return this.listener(transfer, 'test');
  };

  readonly reportOutgoing: OutgoingListener = (report) => this.outgoing.report(report, 'test');
}

/**
 * A registry of the sandbox chain alone (test mode only), for tests of the services beneath the registry.
 * `selfFollowed`: the purposes whose outcomes go to no listener (Declared.selfFollowedPurposes).
 */
export function sandboxRegistry(options: { sendFailures?: number; db?: Db; selfFollowed?: readonly string[] } = {}): SandboxRegistry {
  const outgoing = new OutgoingListeners(new Set(options.selfFollowed));
  const chain = new SandboxChain(options.db ?? null, { sendFailures: options.sendFailures ?? 0 }, outgoing);
  return {
    sandbox: true,
    sendsHere: true,
    isOffered: (_network, mode) => mode === 'test',
    requiredConfirmations: sandboxConfirmations,
    onTransfer(l) {
      chain.listen(l);
    },
    onOutgoing(purpose, l) {
      outgoing.set(purpose, l);
    },
    report: chain.report,
    reportOutgoing: chain.reportOutgoing,
    forNetwork(network, mode) {
      if (mode !== 'test') throw new Error('the sandbox registry runs test mode only');
      return chain.forNetwork(network);
    },
  };
}
