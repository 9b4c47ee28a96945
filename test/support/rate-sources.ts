// A local HTTP server that answers like the rate sources, from their recorded answers (test/fixtures/rates/README.md):
// each exchange's recorded ticker with the market id and price fields set to the price a test chooses, CoinGecko's
// documented simple/price shape. A test makes a source go down, time out, answer garbage, zero, or off by a factor.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/rates');
export type ExchangeName = 'kraken' | 'bitstamp' | 'coinbase' | 'binance';
export const EXCHANGES: ExchangeName[] = ['kraken', 'bitstamp', 'coinbase', 'binance'];
export type SourceName = ExchangeName | 'coingecko';

/** How a source answers now. */
export type Behaviour = 'ok' | 'down' | 'timeout' | 'garbage' | 'zero' | { factor: number };

const recorded = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.ticker.json`), 'utf8')).httpResponse;
const marketsOf = (name: ExchangeName): Record<string, { id: string; symbol: string }> =>
  JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.markets.json`), 'utf8'));

const COINGECKO: Record<string, string> = {
  bitcoin: 'BTC',
  ethereum: 'ETH',
  tether: 'USDT',
  'usd-coin': 'USDC',
  solana: 'SOL',
  'the-open-network': 'TON',
  binancecoin: 'BNB',
  'bitcoin-cash': 'BCH',
  litecoin: 'LTC',
  tron: 'TRX',
};

/** USD prices the sources start from (a test changes them with setPrice). */
export const BASE_USD: Record<string, number> = {
  BTC: 95000,
  ETH: 3500,
  USDT: 1.0002,
  USDC: 0.9998,
  SOL: 180,
  TON: 5.5,
  BNB: 650,
  BCH: 450,
  LTC: 95,
  TRX: 0.25,
  EUR: 1.08,
};

export interface RateSourcesServer {
  url: string;
  /** The RATES_CONFIG sources for every source, at this server, with the recorded markets. */
  sources(names?: SourceName[]): object[];
  set(source: SourceName, behaviour: Behaviour): void;
  /** Sets the USD price of an asset (upper case) for every source. */
  setPrice(asset: string, usd: number): void;
  /** Requests each source received. */
  hits: Record<SourceName, number>;
  close(): Promise<void>;
}

export async function startRateSources(): Promise<RateSourcesServer> {
  const behaviour: Record<SourceName, Behaviour> = { kraken: 'ok', bitstamp: 'ok', coinbase: 'ok', binance: 'ok', coingecko: 'ok' };
  const hits: Record<SourceName, number> = { kraken: 0, bitstamp: 0, coinbase: 0, binance: 0, coingecko: 0 };
  const usd = { ...BASE_USD };
  const byId = Object.fromEntries(EXCHANGES.map((e) => [e, new Map(Object.values(marketsOf(e)).map((m) => [m.id, m.symbol]))])) as Record<ExchangeName, Map<string, string>>;

  /** The price of `symbol` (BASE/QUOTE) as `source` says it now, as text; null when the source is not ok-ish. */
  const priceOf = (source: SourceName, symbol: string): string => {
    const [base, quote] = symbol.split('/') as [string, string];
    const b = behaviour[source];
    if (b === 'zero') return '0';
    const factor = typeof b === 'object' ? b.factor : 1;
    const value = (usd[base]! / (quote === 'USD' ? 1 : usd[quote]!)) * factor;
    return value.toPrecision(10).replace(/\.?0+$/, '');
  };

  const exchangeAnswer = (source: ExchangeName, url: URL): unknown => {
    const t = structuredClone(recorded(source));
    if (source === 'kraken') {
      const id = url.searchParams.get('pair')!;
      const price = priceOf(source, byId.kraken.get(id)!);
      const entry = t.result.XBTUSDT;
      entry.a[0] = entry.b[0] = entry.c[0] = price;
      return { error: [], result: { [id]: entry } };
    }
    if (source === 'bitstamp') {
      const id = /\/api\/v2\/ticker\/([^/]+)\/?$/.exec(url.pathname)![1]!;
      t.last = t.bid = t.ask = priceOf(source, byId.bitstamp.get(id)!);
      return t;
    }
    if (source === 'coinbase') {
      const id = /\/products\/([^/]+)\/ticker$/.exec(url.pathname)![1]!;
      const price = priceOf(source, byId.coinbase.get(id)!);
      t.trades[0].price = t.best_bid = t.best_ask = price;
      t.trades[0].product_id = id;
      return t;
    }
    const id = url.searchParams.get('symbol')!;
    t.symbol = id;
    t.lastPrice = t.bidPrice = t.askPrice = priceOf(source, byId.binance.get(id)!);
    return t;
  };

  const coingeckoAnswer = (url: URL): string => {
    const ids = (url.searchParams.get('ids') ?? '').split(',');
    const parts = ids
      .filter((id) => COINGECKO[id])
      .map((id) => {
        const asset = COINGECKO[id]!;
        return `"${id}":{"usd":${priceOf('coingecko', `${asset}/USD`)},"eur":${priceOf('coingecko', `${asset}/EUR`)}}`;
      });
    return `{${parts.join(',')}}`;
  };

  const sourceOf = (url: URL): SourceName | null => {
    const first = url.pathname.split('/')[1] as SourceName;
    return first in behaviour ? first : null;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const source = sourceOf(url);
    if (!source) {
      res.writeHead(404).end();
      return;
    }
    hits[source]++;
    // Each source is served under /<source>/..., so one server stands in for all of them.
    const inner = new URL(url.pathname.slice(source.length + 1) + url.search, 'http://localhost');
    const b = behaviour[source];
    if (b === 'down') {
      res.writeHead(503, { 'content-type': 'text/html' }).end('<html><body>503 Service Unavailable</body></html>');
      return;
    }
    if (b === 'timeout') {
      // Never answers; the client's deadline ends it.
      req.socket.setTimeout(60_000);
      return;
    }
    if (b === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"result": [1, 2');
      return;
    }
    const body = source === 'coingecko' ? coingeckoAnswer(inner) : JSON.stringify(exchangeAnswer(source, inner));
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    sources: (names = [...EXCHANGES, 'coingecko'] as SourceName[]) =>
      names.map((name) =>
        name === 'coingecko' ? { source: name, url: `${url}/coingecko` } : { source: name, url: `${url}/${name}`, marketsFile: path.join(FIXTURES, `${name}.markets.json`) },
      ),
    set: (source, b) => {
      behaviour[source] = b;
    },
    setPrice: (asset, value) => {
      usd[asset] = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
