// HTTP for adapters whose nodes speak JSON over HTTP (REST APIs such as TronGrid and toncenter, and JSON-RPC such
// as Solana's): one timeout, errors that name the call (never the credentials), and numbers read exactly.
import { parse, isSafeNumber } from 'lossless-json';
import { redact } from './registry.ts';

const DEFAULT_TIMEOUT_MS = 15_000;

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
  /** Headers of every call (an API key). */
  headers?: Record<string, string>;
  timeoutMs?: number;
}

/** A JSON API at `base`: paths are appended to it. */
export class HttpApi {
  private readonly base: string;
  constructor(
    base: string,
    private readonly options: HttpApiOptions = {},
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  /** Where the API is, for messages (credentials removed). */
  get where(): string {
    return redact(this.base).replace(/\/+$/, '');
  }

  get(path: string, query: Record<string, string | number | undefined> = {}): Promise<unknown> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const search = params.size ? `?${params}` : '';
    return this.call('GET', `${path}${search}`, undefined);
  }

  post(path: string, body: unknown): Promise<unknown> {
    return this.call('POST', path, JSON.stringify(body));
  }

  private async call(method: string, path: string, body: string | undefined): Promise<unknown> {
    const what = `${method} ${this.where}${path.replace(/\?.*/, '')}`;
    let res: Response;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...this.options.headers },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (e) {
      throw new Error(`${what} failed: ${causeOf(e)}`);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 200)}`);
    try {
      return parseJsonExactIntegers(text);
    } catch {
      throw new Error(`${what} answered something that is not JSON: ${text.slice(0, 200)}`);
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
  constructor(url: string, options: HttpApiOptions = {}) {
    this.http = new HttpApi(url, options);
  }

  get where(): string {
    return this.http.where;
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const [result] = await this.batch<T>([{ method, params }]);
    return result!;
  }

  /** The results in the order of `calls`; any error fails the whole batch (each call's error is named). */
  async batch<T>(calls: RpcCall[]): Promise<T[]> {
    if (calls.length === 0) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: first + i, method: c.method, params: c.params }));
    const answer = await this.http.post('', calls.length === 1 ? body[0] : body);
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

const causeOf = (e: unknown): string => {
  if (e instanceof Error && e.name === 'TimeoutError') return 'no answer in time';
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : null;
  return cause ?? (e instanceof Error ? e.message : String(e));
};
