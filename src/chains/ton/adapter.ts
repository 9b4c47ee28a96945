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
import { tonAccountId, validateAddress } from '../address-formats.ts';
import type { TonChainConfig } from '../config.ts';
import type { AddressBalance } from '../custody.ts';
import { readHistory, type HistoryCursor, type HistoryPage } from '../history.ts';
import { HttpApi, integerOf } from '../http.ts';
import { nodeEndpoint } from '../node-endpoint.ts';
import type { ChainContext, NodeAdapter } from '../registry.ts';
import { allocateIndex, WatchedSet } from '../store.ts';
import { fromBaseUnits } from '../units.ts';
import { deliverReport } from '../watch.ts';

/** toncenter's largest page of getTransactions. */
const PAGE = 100;
const PAGES_PER_SCAN = 20;
/** Tags are random in [1, 2^47): unguessable and far apart, so a mistyped tag almost never names another payment. */
const TAG_LIMIT = 2 ** 47;
const DECIMALS = PAYMENT_CURRENCY_INFO.ton.decimals;

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
    this.watched = new WatchedSet(context.db, network);
  }

  isValidAddress(address: string): boolean {
    return validateAddress('ton', address, { testnet: this.config.testnet });
  }

  async allocateAddress(request: AddressRequest): Promise<AllocatedAddress> {
    const { address: tag } = await allocateIndex(this.context.db, this.network, request.ownerId, () => String(randomInt(1, TAG_LIMIT)));
    return { address: this.config.address, tag };
  }

  sendRefusal(): string {
    return `sending on ${this.network} is not supported: the signer holds no key of the deposit wallet (docs/chains-http.md)`;
  }

  async send(): Promise<{ txHash: string }> {
    throw new AppError('SERVICE_UNAVAILABLE', `Sending on ${this.network} is not supported: the signer holds no key of the deposit wallet (docs/chains-http.md)`);
  }

  async connect(): Promise<void> {
    await this.call<{ balance: unknown }>('getAddressInformation', { address: this.config.address });
  }

  async initialState(): Promise<TonState> {
    const [newest] = await this.call<ApiTransaction[]>('getTransactions', { address: this.config.address, limit: 1, archival: 'true' });
    return { floor: newest ? newest.transaction_id : null, backlog: null };
  }

  async scan(state: TonState): Promise<TonState> {
    await this.watched.refresh();
    return readHistory(
      {
        page: (below) => this.page(below),
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
    const nanotons = integerOf(message.value ?? '0', 'a TON value');
    if (nanotons <= 0n) return;
    const comment = commentOf(message);
    if (comment === null || !this.watched.has(comment)) {
      this.context.logger.debug({ network: this.network, txHash: tx.transaction_id.hash, comment }, 'incoming transfer without a tag of ours: ignored');
      return;
    }
    await deliverReport(this.context.report, this.context.logger, {
      network: this.network,
      asset: 'ton',
      txHash: tx.transaction_id.hash,
      outputIndex: 0,
      from: message.source,
      // As handed out: payments are matched by the address string allocateAddress answered.
      to: this.config.address,
      tag: comment,
      amount: fromBaseUnits(nanotons, DECIMALS),
      confirmations: this.confirmations,
      blockNumber: null,
      dropped: false,
    });
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
