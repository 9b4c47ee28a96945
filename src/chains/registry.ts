// Every network behind the one ChainAdapter interface, per mode (docs/modes.md): test mode runs every network on the
// sandbox chain (SANDBOX=1; off with SANDBOX=0); live mode runs a network on the real node CHAINS_FILE names for it, and
// a network without one is off in live mode (its currencies are not offered). Nothing above src/chains/ knows which is
// which. Real nodes are checked at start: one that does not answer stops the start, unless it is marked optional; then
// its currencies are refused with a clear error until it answers, and the health endpoint says so. A node is shown by
// its display name only, and nothing of its configuration's secrets leaves its adapter (node-endpoint.ts): errors are
// rewritten where they come out, log lines where its adapter writes them.
import { PAYMENT_CURRENCY_INFO, NETWORKS, type Network, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import type { Db } from '../db/client.ts';
import { AppError, ForbiddenError } from '../errors/app-error.ts';
import { intervalJob, type Job } from '../core/jobs.ts';
import type { Logger } from '../logger.ts';
import { noMetrics, type Metrics } from '../core/metrics.ts';
import type { AddressRequest, AllocatedAddress, ChainAdapter, ModeTransferListener, OutgoingListener, OutgoingReport, OutgoingTransfer, TransferListener, TransferReport } from './adapter.ts';
import { OutgoingListeners } from './outgoing.ts';
import type { ChainsFile } from './config.ts';
import type { AddressBalance, CustodySource } from './custody.ts';
import { SandboxChain, sandboxConfirmations, type SandboxRegistry } from './sandbox.ts';
import { nodeEndpoint, type NodeConfig, type NodeEndpoint } from './node-endpoint.ts';
import type { Signer } from './signer.ts';
import { Watcher, type Scanner, type WatchHealth } from './watch.ts';
import { ADDRESS_FORMAT, validateAddress } from './address-formats.ts';
import { EvmAdapter, evmAdapter } from './evm/adapter.ts';
import { utxoAdapter } from './utxo/adapter.ts';
import { tronAdapter } from './tron/adapter.ts';
import { tonAdapter } from './ton/adapter.ts';
import { solanaAdapter } from './solana/adapter.ts';

export type { ChainContext, NodeAdapter } from './node-adapter.ts';
import type { ChainContext, NodeAdapter } from './node-adapter.ts';

export interface ChainHealth {
  network: Network;
  /** What live mode runs the network on: its real node, or nothing (its currencies are not offered live). */
  live: 'node' | 'off';
  /** What test mode runs it on: the sandbox chain, or nothing with SANDBOX=0. */
  test: 'sandbox' | 'off';
  /** The live node's display name (its CHAINS_FILE label, else scheme://host:port); null without a node. */
  node: string | null;
  /** The live node's state (`ok` for a network without one: there is nothing to fail). */
  state: 'ok' | 'starting' | 'failing' | 'off';
  detail: string | null;
}

export interface Chains extends SandboxRegistry {
  health(): ChainHealth[];
  /** A real node marked `"optional": true` in CHAINS_FILE: the service is ready without it (src/ops/health.ts). */
  isOptional(network: Network): boolean;
  /** The watchers of the real nodes, for the server process. */
  jobs(): Job[];
  /** The real nodes, for the custody check of ledger:verify. */
  custodySources(): CustodySource[];
  /** The live node of an EVM network, unwrapped, for what sends through it beyond transfers (the Uniswap V2 autoswap venue); null without one. */
  liveEvm(network: Network): EvmAdapter | null;
}

declare module '../core/feature.ts' {
  interface Platform {
    /** Every network, per mode; the only way to a chain. */
    chains: Chains;
  }
}

const unavailable = (network: Network, why: string) =>
  new AppError('SERVICE_UNAVAILABLE', `Payments on ${network} are unavailable now: ${why}`);

/**
 * A network that is off in a mode (live: no node configured; test: SANDBOX=0): everything on it is refused. Addresses
 * are still checked by the network's format, so a bad one is told apart from a network that is off.
 */
class OffAdapter implements ChainAdapter {
  constructor(
    readonly network: Network,
    private readonly why: string,
  ) {}
  async allocateAddress(): Promise<AllocatedAddress> {
    throw unavailable(this.network, this.why);
  }
  isValidAddress(address: string): boolean {
    return validateAddress(ADDRESS_FORMAT[this.network], address);
  }
  sendRefusal(): string {
    return this.why;
  }
  async send(): Promise<{ txHash: string }> {
    throw unavailable(this.network, this.why);
  }
}

/** A real adapter whose node has not answered yet (an optional node): its currencies are refused until it does. */
export class GuardedAdapter implements ChainAdapter {
  constructor(
    readonly inner: NodeAdapter,
    private readonly watcher: Watcher<unknown>,
    public reachable: boolean,
    private readonly logger: Logger,
  ) {}
  get network(): Network {
    return this.inner.network;
  }
  private check(): void {
    if (!this.reachable && this.watcher.health.state !== 'ok') throw unavailable(this.network, 'its node does not answer');
    this.reachable = true;
  }
  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    this.check();
    try {
      return await this.inner.allocateAddress(request);
    } catch (e) {
      if (e instanceof AppError) throw e;
      // A node that fails while an address is handed out (a UTXO node importing it): a clear 503, not a 500.
      this.logger.error({ err: e, network: this.network }, 'an address could not be handed out');
      throw unavailable(this.network, 'its node failed while handing out an address; try again shortly');
    }
  }
  isValidAddress(address: string): boolean {
    return this.inner.isValidAddress(address);
  }
  /** A node that is down refuses nothing for good: sends wait for it. */
  sendRefusal(asset: PaymentCurrency): string | null {
    return this.inner.sendRefusal(asset);
  }
  async send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    this.check();
    return this.inner.send(transfer);
  }
}

/**
 * A node's adapter as the rest of the service sees it: every error that comes out of it (to the watcher, the features,
 * the start, ledger:verify) is rewritten by the node's endpoint, so whatever fetch, a library, the node's answer or the
 * adapter put in it, it carries no URL, path, query, credentials or header value of the node.
 */
export class ScrubbedAdapter<S = unknown> implements NodeAdapter<S> {
  constructor(
    readonly inner: NodeAdapter<S>,
    readonly endpoint: NodeEndpoint,
  ) {}
  get network(): Network {
    return this.inner.network;
  }
  get confirmations(): number {
    return this.inner.confirmations;
  }
  get pollMs(): number {
    return this.inner.pollMs;
  }
  private async scrubbed<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw this.endpoint.scrubError(e);
    }
  }
  connect(): Promise<void> {
    return this.scrubbed(() => this.inner.connect());
  }
  initialState(): Promise<S> {
    return this.scrubbed(() => this.inner.initialState());
  }
  scan(state: S): Promise<S> {
    return this.scrubbed(() => this.inner.scan(state));
  }
  allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    return this.scrubbed(() => this.inner.allocateAddress(request));
  }
  send(transfer: OutgoingTransfer): Promise<{ txHash: string }> {
    return this.scrubbed(() => this.inner.send(transfer));
  }
  watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    return this.scrubbed(() => this.inner.watchedBalances(addresses));
  }
  isValidAddress(address: string): boolean {
    return this.inner.isValidAddress(address);
  }
  sendRefusal(asset: PaymentCurrency): string | null {
    return this.inner.sendRefusal(asset);
  }
}

type Factory = (network: Network, config: never, context: ChainContext) => NodeAdapter;

const FACTORIES: Record<Network, Factory> = {
  ethereum: evmAdapter as Factory,
  bsc: evmAdapter as Factory,
  bitcoin: utxoAdapter as Factory,
  litecoin: utxoAdapter as Factory,
  'bitcoin-cash': utxoAdapter as Factory,
  tron: tronAdapter as Factory,
  ton: tonAdapter as Factory,
  solana: solanaAdapter as Factory,
};

export interface OpenChainsOptions {
  file: ChainsFile;
  /** SANDBOX=1: test mode is on (every network on the sandbox chain). */
  sandbox: boolean;
  db: Db;
  logger: Logger;
  signer: Signer | null;
  /**
   * This process watches the real chains and sends on them (the default; the chains worker). False: a server whose
   * chains worker does that (CHAIN_WORKER=0): it runs no watcher, sends nothing, and reads the worker's progress for
   * its health.
   */
  chainWork?: boolean;
  /** Sends of the simulated chain that fail before one is accepted (SANDBOX_SEND_FAILURES). */
  sandboxSendFailures?: number;
  /** Where the providers' requests, throttling and budgets are counted (nodes with a rateLimit). */
  metrics?: Metrics;
  /** The outgoing purposes whose features follow their sends themselves (Declared.selfFollowedPurposes): their outcomes go to no listener. */
  selfFollowed?: readonly string[];
}

export async function openChains(options: OpenChainsOptions): Promise<Chains> {
  const { db, logger } = options;
  let transferListener: ModeTransferListener | null = null;
  const outgoingListeners = new OutgoingListeners(new Set(options.selfFollowed));
  // What real nodes see is live mode's.
  const report: TransferListener = (r: TransferReport) => {
    if (!transferListener) throw new Error('no transfer listener registered');
    return transferListener(r, 'live');
  };
  const reportOutgoing: OutgoingListener = (r: OutgoingReport) => outgoingListeners.report(r, 'live');
  const chainWork = options.chainWork ?? true;
  const context: ChainContext = { db, logger, signer: options.signer, sendsHere: chainWork, report, reportOutgoing };
  const sandbox = options.sandbox ? new SandboxChain(db, { sendFailures: options.sandboxSendFailures ?? 0 }, outgoingListeners) : null;
  const testOff = new Map(NETWORKS.map((n) => [n, new OffAdapter(n, 'test mode is off on this server (SANDBOX=0)')]));
  const live = new Map<Network, ChainAdapter>();
  const nodes = new Map<Network, { adapter: NodeAdapter; watcher: Watcher<unknown>; guarded: GuardedAdapter; name: string }>();
  const optional = new Set<Network>();
  const limits = limitMetrics(options.metrics ?? noMetrics);

  for (const network of NETWORKS) {
    const config = options.file[network];
    // "sandbox" in CHAINS_FILE (from before modes) now means what leaving the network out means: no node for live mode.
    if (config === undefined || config === 'sandbox') {
      live.set(network, new OffAdapter(network, 'live mode runs it on a real node, and none is configured for it (CHAINS_FILE)'));
      continue;
    }
    const endpoint = nodeEndpoint(config as NodeConfig);
    limits.watch(network, endpoint);
    // What the adapter logs names its node and is scrubbed like its errors.
    const nodeLogger = logger.child({ node: endpoint.name }, { formatters: { log: (fields) => endpoint.scrubLog(fields as Record<string, unknown>) } });
    const adapter = new ScrubbedAdapter(FACTORIES[network](network, config as never, { ...context, logger: nodeLogger }), endpoint);
    if (config.optional) optional.add(network);
    let reachable = true;
    try {
      await adapter.connect();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (!config.optional) {
        throw new Error(`${network}: the node ${endpoint.name} does not answer or disagrees with CHAINS_FILE: ${why} (mark it "optional": true to start without it)`);
      }
      reachable = false;
      nodeLogger.warn({ network, err: e }, 'an optional chain node does not answer: its currencies are refused until it does');
    }
    const watcher = new Watcher(adapter, { db, logger: nodeLogger }, adapter.pollMs);
    const guarded = new GuardedAdapter(adapter, watcher, reachable, nodeLogger);
    nodes.set(network, { adapter, watcher, guarded, name: endpoint.name });
    live.set(network, guarded);
  }

  const remote = new RemoteWatchHealth(db, logger, new Map([...nodes].map(([network, n]) => [network, n.adapter.pollMs])));
  const testModeOff = () => new ForbiddenError('Test mode is off on this server (SANDBOX=0)');

  return {
    sandbox: options.sandbox,
    onTransfer(l) {
      transferListener = l;
      sandbox?.listen(l);
    },
    onOutgoing(purpose, l) {
      outgoingListeners.set(purpose, l);
    },
    // The simulated chain's reports are test mode's: they cannot reach a live object (docs/modes.md).
    report(transfer) {
      if (!sandbox) throw testModeOff();
      return sandbox.report(transfer);
    },
    reportOutgoing(outcome) {
      if (!sandbox) throw testModeOff();
      return sandbox.reportOutgoing(outcome);
    },
    forNetwork: (network, mode) => (mode === 'live' ? live.get(network)! : (sandbox?.forNetwork(network) ?? testOff.get(network)!)),
    isOffered: (network, mode) => (mode === 'live' ? nodes.has(network) : sandbox !== null),
    requiredConfirmations(asset, mode) {
      if (mode === 'test') return sandboxConfirmations(asset);
      const info = PAYMENT_CURRENCY_INFO[asset as PaymentCurrency];
      if (!info) return 1;
      return nodes.get(info.network)?.adapter.confirmations ?? info.confirmations;
    },
    sendsHere: chainWork,
    health: () =>
      NETWORKS.map((network): ChainHealth => {
        const test = sandbox ? 'sandbox' : 'off';
        const node = nodes.get(network);
        if (!node) return { network, live: 'off', test, node: null, state: 'ok', detail: null };
        const watch: WatchHealth = chainWork ? node.watcher.health : remote.health(network);
        const state = watch.state === 'starting' && !node.guarded.reachable ? 'failing' : watch.state;
        return { network, live: 'node', test, node: node.name, state, detail: watch.detail ?? (node.guarded.reachable ? null : 'the node did not answer at start') };
      }),
    isOptional: (network) => optional.has(network),
    jobs: () => (chainWork ? [...nodes.values()].map((n) => n.watcher.job()) : nodes.size > 0 ? [remote.job()] : []),
    custodySources: () => [...nodes.values()].map((n) => n.adapter),
    liveEvm(network) {
      const inner = (nodes.get(network)?.adapter as ScrubbedAdapter | undefined)?.inner;
      return inner instanceof EvmAdapter ? inner : null;
    },
  };
}

/**
 * A provider's limiter as metrics: requests sent, throttling (answers that said slow down, and requests that waited
 * for the limit here), and what is left of the day's budget. Only nodes with a `rateLimit` have a limiter.
 */
function limitMetrics(metrics: Metrics) {
  const watched = new Map<Network, NodeEndpoint>();
  const requests = metrics.counter({
    name: 'payrail_chain_requests_total',
    help: 'Requests sent to a chain provider with a rateLimit (CHAINS_FILE), by network (a JSON-RPC batch counts each call).',
    labelNames: ['network'],
  });
  const throttled = metrics.counter({
    name: 'payrail_chain_throttled_total',
    help: 'Throttling of a chain provider with a rateLimit, by network and reason: its answers 429, 403 or 503 (backed off, tried again), or paced (a request waited for the limit here).',
    labelNames: ['network', 'reason'],
  });
  metrics.gauge({
    name: 'payrail_chain_budget_remaining',
    help: "Requests left of a chain provider's daily budget (rateLimit.perDay) today (UTC), by network.",
    labelNames: ['network'],
    collect: () =>
      [...watched].flatMap(([network, e]) => (e.limiter?.budget ? [{ labels: { network }, value: e.limiter.budget.remainingToday() }] : [])),
  });
  return {
    watch(network: Network, endpoint: NodeEndpoint) {
      if (!endpoint.limiter) return;
      watched.set(network, endpoint);
      endpoint.limiter.observe({
        requested: (n) => requests.inc({ network }, n),
        throttled: (reason) => throttled.inc({ network, reason }),
      });
    },
  };
}

/**
 * The watchers' health as a server that runs none sees it (CHAIN_WORKER=0): every few seconds it reads when the
 * chains worker last saved each network's cursor. A network not scanned for 20 polls (at least a minute) is failing.
 */
class RemoteWatchHealth {
  private readonly seen = new Map<Network, WatchHealth>();
  constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private readonly pollMs: Map<Network, number>,
  ) {}

  health(network: Network): WatchHealth {
    return this.seen.get(network) ?? { network, state: 'starting', scanning: false, detail: 'waiting for the chains worker', lastOkAt: null };
  }

  job(): Job {
    return intervalJob('chain-health', 5_000, () => this.read(), this.logger);
  }

  async read(): Promise<void> {
    const rows = await this.db.$queryRaw<{ network: string; updatedAt: Date; ageMs: number }[]>`
      SELECT "network", "updatedAt", (EXTRACT(EPOCH FROM now() - "updatedAt") * 1000)::float8 AS "ageMs" FROM "ChainCursor"`;
    const byNetwork = new Map(rows.map((r) => [r.network, r]));
    for (const [network, pollMs] of this.pollMs) {
      const row = byNetwork.get(network);
      const limit = Math.max(60_000, pollMs * 20);
      const fresh = row !== undefined && row.ageMs <= limit;
      this.seen.set(network, {
        network,
        state: fresh ? 'ok' : 'failing',
        scanning: false,
        detail: fresh ? null : `the chains worker has not scanned it for ${row ? Math.round(row.ageMs / 1000) : '(never)'} s (is npm run chains:worker running?)`,
        lastOkAt: row?.updatedAt ?? null,
      });
    }
  }
}
