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
  close(): Promise<void>;
}

class Unavailable extends Error {}

export async function startFakeChains(): Promise<FakeChains> {
  const holds: { match: (route: string, body: any) => boolean; arrived: () => void; released: Promise<'answer' | 'fail'>; used: boolean }[] = [];
  const served = new Map<string, number>();

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
      count(route);
      await waitIfHeld(route, parsed);
      return fake.tron.handle(path.slice(5), parsed);
    }
    if (path === '/ton/api/v2/jsonRPC') {
      // toncenter's JSON-RPC form of the same methods (what @ton/ton's HttpApi calls): {ok, result} plus the call's id.
      const call = JSON.parse(body) as { id: string; method: string; params?: Record<string, unknown> };
      const route = `ton /${call.method}`;
      count(route);
      await waitIfHeld(route, call.params ?? {});
      const params = new URLSearchParams(Object.entries(call.params ?? {}).map(([k, v]) => [k, String(v)]));
      return JSON.stringify({ ...JSON.parse(fake.ton.handle(`/${call.method}`, params)), jsonrpc: '2.0', id: call.id });
    }
    if (path.startsWith('/ton/api/v2/')) {
      const route = `ton ${path.slice(11)}`;
      count(route);
      await waitIfHeld(route, Object.fromEntries(url.searchParams));
      return fake.ton.handle(path.slice(11), url.searchParams);
    }
    if (path === '/solana') {
      const parsed = JSON.parse(body) as { id: number; method: string; params?: unknown[] } | { id: number; method: string; params?: unknown[] }[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
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
        (e: unknown) => res.writeHead(e instanceof NotFound ? 404 : e instanceof Unavailable ? 503 : 500, { 'content-type': 'text/plain' }).end(String(e)),
      );
    });
  });
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
