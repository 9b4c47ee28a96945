// One local HTTP server (node:http, a free port) playing three chain APIs in their real shapes: a TronGrid-style
// full node under /tron, toncenter v2 under /ton/api/v2, Solana JSON-RPC under /solana. Tests drive each chain's
// state directly (blocks, transfers, reorgs, failures), can take the whole server down (503), and can hold a request
// of their choosing until they release it (to stop a scan in the middle).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixture } from './fixtures.ts';
import { FakeSolana, json } from './solana.ts';
import { FakeTon } from './ton.ts';
import { FakeTron, NotFound } from './tron.ts';

export { FAKE_USDT_CONTRACT, randomTronAddress } from './tron.ts';
export { randomTonAddress } from './ton.ts';
export { randomSolanaKey } from './solana.ts';

export interface Held {
  /** Resolves when a matching request arrived (and waits). */
  reached: Promise<void>;
  /** Lets it be answered. */
  release(): void;
  /** Answers it 503. */
  fail(): void;
}

export interface FakeChains {
  readonly url: string;
  /** CHAINS_FILE URLs of the three APIs. */
  readonly tronUrl: string;
  readonly tonUrl: string;
  readonly solanaUrl: string;
  readonly tron: FakeTron;
  readonly ton: FakeTon;
  readonly solana: FakeSolana;
  /** Every request answers 503 while true. */
  down: boolean;
  /** Requests served, by route (`tron /wallet/getnowblock`, `ton /getTransactions`, `solana getTransaction`). */
  readonly served: Map<string, number>;
  /** Holds the next request whose route matches until released. */
  hold(route: string | ((route: string, body: any) => boolean)): Held;
  /**
   * The next `times` requests to the provider are refused as it throttles (test/fixtures/chains/README.md): TronGrid
   * 503 or 403 with its {"Error": ...} body, toncenter 429 with its error object, Solana's public RPC 429 with a
   * JSON-RPC error; `retryAfter` (seconds) adds the Retry-After header.
   */
  throttle(provider: Provider, options?: { times?: number; status?: 403 | 429 | 503; retryAfter?: number }): void;
  /** Requests as they arrived: provider, route, when (ms), and whether a throttling answer refused them. */
  readonly log: { provider: Provider; route: string; at: number; throttled: boolean }[];
  /** Sizes of the JSON-RPC batches Solana received, in order. */
  readonly batches: number[];
  close(): Promise<void>;
}

class Unavailable extends Error {}
export type Provider = 'tron' | 'ton' | 'solana';
class Throttled extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly retryAfter: number | undefined,
  ) {
    super('throttled');
  }
}
/** What each provider answers when it throttles (fixtures; README there says where each comes from). */
const THROTTLED: Record<Provider, { status: 403 | 429 | 503; fixture: string }> = {
  tron: { status: 503, fixture: 'tron/throttled' },
  ton: { status: 429, fixture: 'ton/throttled' },
  solana: { status: 429, fixture: 'solana/throttled' },
};

export async function startFakeChains(): Promise<FakeChains> {
  const holds: { match: (route: string, body: any) => boolean; arrived: () => void; released: Promise<'answer' | 'fail'>; used: boolean }[] = [];
  const served = new Map<string, number>();
  const throttles: { provider: Provider; times: number; status: number; retryAfter: number | undefined }[] = [];
  const log: FakeChains['log'] = [];
  const batches: number[] = [];
  const throttleIfDue = (provider: Provider, route: string) => {
    const t = throttles.find((x) => x.provider === provider && x.times > 0);
    log.push({ provider, route, at: Date.now(), throttled: t !== undefined });
    if (!t) return;
    t.times--;
    throw new Throttled(t.status, JSON.stringify(fixture(THROTTLED[provider].fixture)), t.retryAfter);
  };

  const waitIfHeld = async (route: string, body: any) => {
    const hold = holds.find((h) => !h.used && h.match(route, body));
    if (!hold) return;
    hold.used = true;
    hold.arrived();
    if ((await hold.released) === 'fail') throw new Unavailable();
  };
  const count = (route: string) => served.set(route, (served.get(route) ?? 0) + 1);

  const answer = async (url: URL, body: string): Promise<string> => {
    const path = url.pathname;
    if (path.startsWith('/tron/')) {
      const route = `tron ${path.slice(5)}`;
      const parsed = body ? JSON.parse(body) : {};
      throttleIfDue('tron', route);
      count(route);
      await waitIfHeld(route, parsed);
      return fake.tron.handle(path.slice(5), parsed);
    }
    if (path === '/ton/api/v2/jsonRPC') {
      // toncenter's JSON-RPC form of the same methods (what @ton/ton's HttpApi calls): {ok, result} plus the call's id.
      const call = JSON.parse(body) as { id: string; method: string; params?: Record<string, unknown> };
      const route = `ton /${call.method}`;
      throttleIfDue('ton', route);
      count(route);
      await waitIfHeld(route, call.params ?? {});
      const params = new URLSearchParams(Object.entries(call.params ?? {}).map(([k, v]) => [k, String(v)]));
      return JSON.stringify({ ...JSON.parse(fake.ton.handle(`/${call.method}`, params)), jsonrpc: '2.0', id: call.id });
    }
    if (path.startsWith('/ton/api/v2/')) {
      const route = `ton ${path.slice(11)}`;
      throttleIfDue('ton', route);
      count(route);
      await waitIfHeld(route, Object.fromEntries(url.searchParams));
      return fake.ton.handle(path.slice(11), url.searchParams);
    }
    if (path === '/solana') {
      const parsed = JSON.parse(body) as { id: number; method: string; params?: unknown[] } | { id: number; method: string; params?: unknown[] }[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      throttleIfDue('solana', `solana ${calls.map((c) => c.method).join(',')}`);
      batches.push(calls.length);
      const replies: string[] = [];
      for (const call of calls) {
        count(`solana ${call.method}`);
        await waitIfHeld(`solana ${call.method}`, call.params);
        if (fake.solana.erroring) {
          replies.push(json({ ...fixture<object>('solana/error'), id: call.id }));
          continue;
        }
        try {
          replies.push(`{"jsonrpc":"2.0","result":${fake.solana.handle(call.method, call.params ?? [])},"id":${json(call.id)}}`);
        } catch (e) {
          if (!(e instanceof NotFound)) throw e;
          replies.push(json({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: call.id }));
        }
      }
      return Array.isArray(parsed) ? `[${replies.join(',')}]` : replies[0]!;
    }
    throw new NotFound(path);
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (fake.down) return void res.writeHead(503, { 'content-type': 'text/plain' }).end('service unavailable');
      answer(new URL(req.url ?? '/', 'http://fake'), body).then(
        (text) => res.writeHead(200, { 'content-type': 'application/json' }).end(text),
        (e: unknown) => {
          if (e instanceof Throttled) {
            return void res.writeHead(e.status, { 'content-type': 'application/json', ...(e.retryAfter !== undefined ? { 'retry-after': String(e.retryAfter) } : {}) }).end(e.body);
          }
          res.writeHead(e instanceof NotFound ? 404 : e instanceof Unavailable ? 503 : 500, { 'content-type': 'text/plain' }).end(String(e));
        },
      );
    });
  });
  // Idle connections kept longer than clients wait between requests: a client's pooled socket is never closed under
  // a request it is sending (ECONNRESET after a pause of more than Node's default 5 s).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: FakeChains = {
    url,
    tronUrl: `${url}/tron`,
    tonUrl: `${url}/ton/api/v2`,
    solanaUrl: `${url}/solana`,
    tron: new FakeTron(),
    ton: new FakeTon(),
    solana: new FakeSolana(),
    down: false,
    served,
    log,
    batches,
    throttle(provider, options = {}) {
      throttles.push({ provider, times: options.times ?? 1, status: options.status ?? THROTTLED[provider].status, retryAfter: options.retryAfter });
    },
    hold(route) {
      const match = typeof route === 'string' ? (r: string) => r === route : route;
      let arrived!: () => void;
      let settle!: (how: 'answer' | 'fail') => void;
      const reached = new Promise<void>((r) => (arrived = r));
      const released = new Promise<'answer' | 'fail'>((r) => (settle = r));
      holds.push({ match, arrived, released, used: false });
      return { reached, release: () => settle('answer'), fail: () => settle('fail') };
    },
    async close() {
      for (const h of holds) h.used = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
