// TON through toncenter's HTTP API v2 (docs/chains-http.md). Receiving: one deposit wallet (CHAINS_FILE `address`);
// each payment gets a fresh random numeric tag that the payer writes as the transfer's text comment, and the scan reads
// the wallet's transactions newest first down to where it stopped (lt/hash paging), reporting incoming transfers
// whose comment is a tag we handed out. A transaction the API shows is final (TON finalises in one masterchain
// block), so transfers are reported once, final. Jettons (USDT on TON) are not read: no payment currency names one.
// Sending is not supported: the signer holds secp256k1 keys only, and the deposit wallet is not one of its keys.
import { randomInt } from 'node:crypto';
import { PAYMENT_CURRENCY_INFO, type Network } from '../../domain/assets.ts';
import { AppError } from '../../errors/app-error.ts';
import type { AddressRequest, AllocatedAddress } from '../adapter.ts';
import { tonAccountId, tonNonBounceable, validateAddress } from '../address-formats.ts';
import type { TonChainConfig } from '../config.ts';
import type { AddressBalance } from '../custody.ts';
import { readHistory, type HistoryCursor, type HistoryPage } from '../history.ts';
import { HttpApi, integerOf } from '../http.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import type { ChainContext, NodeAdapter } from '../node-adapter.ts';
import { allocateIndex, WatchedSet } from '../store.ts';
import { fromBaseUnits } from '../units.ts';
import { deliverReport } from '../watch.ts';

/** toncenter's largest page of getTransactions. */
const PAGE = 100;
const PAGES_PER_SCAN = 20;
/** Tags are random in [1, 2^47): unguessable and far apart, so a mistyped tag almost never names another payment. */
const TAG_LIMIT = 2 ** 47;
const DECIMALS = PAYMENT_CURRENCY_INFO.ton.decimals;
/** How long a deployed wallet's state is taken as known (one that is not deployed is asked at every scan). */
const STATE_TTL_MS = 3_600_000;

/** An account's state as toncenter computes it (v2 AccountStateEnum). */
type AccountState = 'uninitialized' | 'active' | 'frozen';

interface Position {
  lt: string;
  hash: string;
}

export type TonState = HistoryCursor<Position>;

// toncenter v2 shapes, as far as they are read.
interface ApiMessage {
  source?: string;
  destination?: string;
  value?: string;
  msg_data?: { '@type'?: string; text?: string };
}
interface ApiTransaction {
  utime?: number;
  transaction_id: { lt: string; hash: string };
  in_msg?: ApiMessage;
  out_msgs?: ApiMessage[];
}
interface ApiAnswer<T> {
  ok: boolean;
  result?: T;
  error?: string;
  code?: number;
}

export function tonAdapter(network: Network, config: TonChainConfig, context: ChainContext): NodeAdapter<TonState> {
  return new TonAdapter(network, config, context);
}

class TonAdapter implements NodeAdapter<TonState> {
  /** Final at the first: TON has no forks once a masterchain block commits a transaction. */
  readonly confirmations = 1;
  readonly pollMs: number;
  private readonly api: HttpApi;
  private readonly wallet: string;
  private readonly watched: WatchedSet;
  /** The wallet's non-bounceable form, handed out while it is not deployed. */
  private readonly nonBounceable: string;
  /** The wallet's state as last read (null: not read yet, so taken as not deployed). */
  private walletState: { state: AccountState; at: number } | null = null;
  /** Whether the scan under way must look up which form each tag got (some got the non-bounceable one); null: not known yet. */
  private bothForms: boolean | null = null;

  constructor(
    readonly network: Network,
    private readonly config: TonChainConfig,
    private readonly context: ChainContext,
  ) {
    if (config.confirmations !== undefined && config.confirmations !== 1) {
      throw new Error(`${network}: confirmations must be 1 (a TON transaction is final once the API shows it), not ${config.confirmations}`);
    }
    this.pollMs = config.pollMs;
    this.api = new HttpApi(nodeEndpoint(config), { headers: config.apiKey ? { 'X-API-Key': config.apiKey } : {} });
    this.wallet = tonAccountId(config.address)!;
    this.nonBounceable = tonNonBounceable(config.address, config.testnet);
    this.watched = new WatchedSet(context.db, network);
  }

  isValidAddress(address: string): boolean {
    return validateAddress('ton', address, { testnet: this.config.testnet });
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    const { address: tag } = await allocateIndex(this.context.db, this.network, request.ownerId, () => String(randomInt(1, TAG_LIMIT)));
    // A bounceable transfer to a wallet that is not deployed (or frozen) comes back: TON's guidance is to hand out the
    // non-bounceable form then. A deployed wallet keeps the configured form.
    return { address: this.walletState?.state === 'active' ? this.config.address : this.nonBounceable, tag };
  }

  sendRefusal(): string {
    return `sending on ${this.network} is not supported: the signer holds no key of the deposit wallet (docs/chains-http.md)`;
  }

  async send(): Promise<{ txHash: string }> {
    throw new AppError('SERVICE_UNAVAILABLE', `Sending on ${this.network} is not supported: the signer holds no key of the deposit wallet (docs/chains-http.md)`);
  }

  async connect(): Promise<void> {
    await this.readState();
  }

  /** The wallet's state (uninitialized, active, frozen), read again when unknown, not active, or an hour old. */
  private async readState(): Promise<void> {
    if (this.walletState?.state === 'active' && Date.now() - this.walletState.at < STATE_TTL_MS) return;
    const info = await this.call<{ balance: unknown; state?: string }>('getAddressInformation', { address: this.config.address });
    const state = info.state === 'active' || info.state === 'frozen' || info.state === 'uninitialized' ? info.state : null;
    if (!state) throw new Error(`${this.api.where} getAddressInformation answered no account state`);
    if (state !== this.walletState?.state && state !== 'active') {
      this.context.logger.warn({ network: this.network, state }, 'the TON deposit wallet is not active: its non-bounceable address is handed out');
    }
    this.walletState = { state, at: Date.now() };
  }

  async initialState(): Promise<TonState> {
    const [newest] = await this.call<ApiTransaction[]>('getTransactions', { address: this.config.address, limit: 1, archival: 'true' });
    return { floor: newest ? newest.transaction_id : null, backlog: null };
  }

  async scan(state: TonState): Promise<TonState> {
    await this.readState();
    this.bothForms = null;
    return readHistory(
      {
        // Tags after each page: a transfer the page lists was paid, so its tag handed out (and written), before the
        // page was read. Tags loaded before it would miss one handed out meanwhile, and the cursor would pass it.
        page: async (below) => {
          const page = await this.page(below);
          await this.watched.refresh();
          return page;
        },
        position: (tx: ApiTransaction) => ({ lt: tx.transaction_id.lt, hash: tx.transaction_id.hash }),
        reached: (tx, floor) => BigInt(tx.transaction_id.lt) <= BigInt(floor.lt),
      },
      state,
      PAGES_PER_SCAN,
      async (transactions) => {
        for (const tx of transactions) await this.handle(tx);
      },
    );
  }

  /** Transactions older than `below` (the newest when null). toncenter starts a page at the transaction named. */
  private async page(below: Position | null): Promise<HistoryPage<ApiTransaction>> {
    const raw = await this.call<ApiTransaction[]>('getTransactions', {
      address: this.config.address,
      limit: PAGE,
      lt: below?.lt,
      hash: below?.hash,
      archival: 'true',
    });
    const items = below ? raw.filter((tx) => BigInt(tx.transaction_id.lt) < BigInt(below.lt)) : raw;
    return { items, more: raw.length === PAGE };
  }

  private async handle(tx: ApiTransaction): Promise<void> {
    const message = tx.in_msg;
    // Incoming value from another account: external messages (our own wallet's sends) have no source.
    if (!message?.source || !message.destination || tonAccountId(message.destination) !== this.wallet) return;
    const comment = commentOf(message);
    if (comment === null || !this.watched.has(comment)) {
      this.context.logger.debug({ network: this.network, txHash: tx.transaction_id.hash, comment }, 'incoming transfer without a tag of ours: ignored');
      return;
    }
    // A bounceable transfer the wallet could not take (not deployed, frozen) goes back to its sender in the same
    // transaction: toncenter shows the value in in_msg and returns it in out_msgs. Nothing of it stays.
    const source = tonAccountId(message.source);
    const outgoing = tx.out_msgs ?? [];
    if (outgoing.some((m) => m.destination && tonAccountId(m.destination) === source)) {
      this.context.logger.warn({ network: this.network, txHash: tx.transaction_id.hash, tag: comment }, 'a transfer bounced back to its sender: not credited');
      return;
    }
    // What stays: the value in, net of anything the same transaction sent on.
    const nanotons = outgoing.reduce((left, m) => left - integerOf(m.value ?? '0', 'a TON value'), integerOf(message.value ?? '0', 'a TON value'));
    if (nanotons <= 0n) return;
    await deliverReport(this.context.report, this.context.logger, {
      network: this.network,
      asset: 'ton',
      txHash: tx.transaction_id.hash,
      outputIndex: 0,
      from: message.source,
      to: await this.handedOut(comment),
      tag: comment,
      amount: fromBaseUnits(nanotons, DECIMALS),
      confirmations: this.confirmations,
      blockNumber: null,
      dropped: false,
    });
  }

  /**
   * The wallet's form the tag was handed out with (payments are matched by the address string allocateAddress
   * answered): the configured one, or the non-bounceable one while the wallet was not deployed.
   */
  private async handedOut(tag: string): Promise<string> {
    // One query a scan, not one a payment: most wallets never had their non-bounceable form handed out. Asked at the
    // scan's first payment, after its page was read: any address paid in that page was handed out (and written) before.
    this.bothForms ??=
      this.nonBounceable !== this.config.address && (await this.context.db.paymentAddress.findFirst({ where: { asset: 'ton', address: this.nonBounceable }, select: { id: true } })) !== null;
    if (!this.bothForms) return this.config.address;
    const forms = [...new Set([this.config.address, this.nonBounceable])];
    const row = await this.context.db.paymentAddress.findFirst({ where: { asset: 'ton', tag, address: { in: forms } }, select: { address: true } });
    return row?.address ?? this.config.address;
  }

  /** Balances of the wallet (the only address here; the custody check asks for derived addresses, so none). */
  async watchedBalances(addresses: string[]): Promise<AddressBalance[]> {
    const balances: AddressBalance[] = [];
    for (const address of addresses) {
      const nanotons = integerOf(await this.call<unknown>('getAddressBalance', { address }), 'a balance');
      balances.push({ address, asset: 'ton', amount: fromBaseUnits(nanotons, DECIMALS).toFixed() });
    }
    return balances;
  }

  private async call<T>(method: string, query: Record<string, string | number | undefined>): Promise<T> {
    const answer = (await this.api.get(`/${method}`, query)) as ApiAnswer<T>;
    if (!answer.ok || answer.result === undefined) throw new Error(`${this.api.where} ${method} failed: ${answer.error ?? 'no result'}`);
    return answer.result;
  }
}

/** A text comment (toncenter decodes op 0 bodies as msg.dataText, the text base64-encoded), trimmed. */
function commentOf(message: ApiMessage): string | null {
  const data = message.msg_data;
  if (data?.['@type'] !== 'msg.dataText' || typeof data.text !== 'string') return null;
  return Buffer.from(data.text, 'base64').toString('utf8').trim();
}
