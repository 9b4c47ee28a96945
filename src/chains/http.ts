// HTTP for adapters whose nodes speak JSON over HTTP (REST APIs such as TronGrid and toncenter, and JSON-RPC such
// as Solana's): one timeout, errors that name the call and the node by its display name (never its URL, which may
// carry a key), and numbers read exactly.
import { parse, isSafeNumber } from 'lossless-json';
import { endpointOf, failureOf, type NodeEndpoint } from './node-endpoint.ts';
import { retryAfterMs } from './rate-limit.ts';

const DEFAULT_TIMEOUT_MS = 15_000;
/** Answers that mean "slow down" from a provider with a rate limit: the request waits and is tried again. */
const THROTTLING = new Set([403, 429, 503]);
/** Tries of one request while it is throttled; then its error goes up (the scan fails and runs again later). */
const THROTTLED_TRIES = 4;

/** A JSON number token of 16 digits or more: possibly beyond 2^53, where a double would round it. */
const LONG_NUMBER = /[:[,]\s*-?\d{16,}/;

/**
 * JSON.parse, except integers beyond 2^53 arrive as bigint (balances in lamports or sun can be that large, and a
 * double would round them). Most answers have no such number and take the fast path.
 */
export function parseJsonExactIntegers(text: string): unknown {
  if (!LONG_NUMBER.test(text)) return JSON.parse(text);
  return parse(text, null, (digits: string) => (/^-?\d+$/.test(digits) && !isSafeNumber(digits) ? BigInt(digits) : Number(digits)));
}

/** An integer field of an answer (a number, a bigint or a decimal string) as a bigint; throws on anything else. */
export function integerOf(value: unknown, what: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new Error(`${what} is not an integer: ${JSON.stringify(typeof value === 'bigint' ? String(value) : value)}`);
}

export interface HttpApiOptions {
  /** Headers of every call beyond the node's own (an adapter's API key header). */
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** A JSON API at the node's URL: paths are appended to its path, query parameters to its query. */
export class HttpApi {
  readonly endpoint: NodeEndpoint;
  constructor(
    node: string | NodeEndpoint,
    private readonly options: HttpApiOptions = {},
  ) {
    this.endpoint = endpointOf(node);
  }

  /** How messages name the node (never its URL). */
  get where(): string {
    return this.endpoint.name;
  }

  get(path: string, query: Record<string, string | number | undefined> = {}): Promise<unknown> {
    return this.call('GET', path, query, undefined);
  }

  /** `cost`: how many of the provider's requests it counts as (a JSON-RPC batch counts each call). */
  post(path: string, body: unknown, cost = 1): Promise<unknown> {
    return this.call('POST', path, {}, JSON.stringify(body), cost);
  }

  private async call(method: string, path: string, query: Record<string, string | number | undefined>, body: string | undefined, cost = 1): Promise<unknown> {
    const what = `${method} ${path || '/'} at ${this.where}`;
    const url = new URL(this.endpoint.url);
    if (path) url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    // Appended as text: the configured query (a key) is sent exactly as written.
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    if (params.size) url.search = url.search ? `${url.search}&${params}` : `?${params}`;
    const limiter = this.endpoint.limiter;
    let res: Response;
    for (let tries = 1; ; tries++) {
      await limiter?.take(cost);
      try {
        res = await fetch(url, {
          method,
          headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...this.endpoint.headers, ...this.options.headers },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? this.endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS),
        });
      } catch (e) {
        throw new Error(`${what} failed: ${failureOf(e)}`);
      }
      if (!limiter) break;
      if (!THROTTLING.has(res.status)) {
        limiter.answered();
        break;
      }
      // Throttled: every request to the provider waits (Retry-After, else a growing backoff), this one is tried again.
      limiter.throttled(res.status as 403 | 429 | 503, retryAfterMs(res.headers.get('retry-after'), limiter.clock.now()));
      if (tries >= THROTTLED_TRIES) break;
      await res.arrayBuffer().catch(() => undefined);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      throw new Error(`${what} failed while answering: ${failureOf(e)}`);
    }
    if (!res.ok) throw new Error(`${what} answered ${res.status}: ${this.endpoint.quote(text)}`);
    try {
      return parseJsonExactIntegers(text);
    } catch {
      throw new Error(`${what} answered something that is not JSON: ${this.endpoint.quote(text)}`);
    }
  }
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

/** A JSON-RPC 2.0 endpoint; several calls go in one batch request. */
export class JsonRpc {
  private readonly http: HttpApi;
  private nextId = 1;
  constructor(node: string | NodeEndpoint, options: HttpApiOptions = {}) {
    this.http = new HttpApi(node, options);
  }

  get where(): string {
    return this.http.where;
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const [result] = await this.batch<T>([{ method, params }]);
    return result!;
  }

  /**
   * The results in the order of `calls`; any error fails the whole batch (each call's error is named). A provider
   * with a rate limit counts each call of a batch: batches are cut to its burst.
   */
  async batch<T>(calls: RpcCall[]): Promise<T[]> {
    const size = this.http.endpoint.limiter?.burst ?? calls.length;
    if (calls.length > size) {
      const results: T[] = [];
      for (let i = 0; i < calls.length; i += size) results.push(...(await this.batch<T>(calls.slice(i, i + size))));
      return results;
    }
    if (calls.length === 0) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params }));
    const answer = await this.http.post('', calls.length === 1 ? body[0] : body, calls.length);
    const replies = (Array.isArray(answer) ? answer : [answer]) as { id: number; result?: T; error?: { code: number; message: string } }[];
    const byId = new Map(replies.map((r) => [r.id, r]));
    return calls.map((c, i) => {
      const reply = byId.get(first + i);
      if (!reply) throw new Error(`${this.where} gave no answer to ${c.method}`);
      if (reply.error) throw new Error(`${this.where} ${c.method} failed: ${reply.error.message} (${reply.error.code})`);
      return reply.result as T;
    });
  }
}
