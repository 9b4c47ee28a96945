// Bitcoin Core JSON-RPC (and its forks: Litecoin Core, Bitcoin Cash Node) over plain fetch. Answers are parsed
// without floats: every non-integer number arrives as its exact digits (coins() reads it as a decimal). Requests in
// flight are capped: the node serves at most -rpcworkqueue (16 by default) at once, for every client together, and
// answers HTTP 500 "work queue depth exceeded" beyond; many calls go as JSON-RPC batches instead.
import { DecimalLiteral, parseJsonExact } from '../../core/json.ts';
import { toMoney, type Money } from '../../domain/money.ts';
import { endpointOf, failureOf, type NodeEndpoint } from '../node-endpoint.ts';

/** Error codes of Bitcoin Core's RPC (rpc/protocol.h) the adapter tells apart. */
export const RPC_ERROR = {
  MISC: -1,
  /** Unknown transaction, block or wallet entry. */
  INVALID_ADDRESS_OR_KEY: -5,
  WALLET_NOT_FOUND: -18,
  /** A transaction the node refused: missing or spent inputs (-25), invalid or against policy (-26). */
  VERIFY_ERROR: -25,
  VERIFY_REJECTED: -26,
  /** The transaction is already in a block. */
  VERIFY_ALREADY_IN_CHAIN: -27,
  IN_WARMUP: -28,
  WALLET_ALREADY_LOADED: -35,
} as const;

/** The node answered the call with an error. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly reason: string,
  ) {
    super(`${method}: ${reason} (RPC error ${code})`);
    this.name = 'RpcError';
  }
}

/** The node did not answer usefully (down, overloaded, refused our credentials): nothing was decided. */
export class RpcTransportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RpcTransportError';
  }
}

export interface RpcCall {
  method: string;
  params?: unknown[];
}

/** A counting semaphore: at most `limit` requests to the node at once from this process. */
export class RequestGate {
  private waiting: (() => void)[] = [];
  private active = 0;
  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** Leaves room under the node's default work queue (16) for its other clients (operators, explorers). */
export const MAX_IN_FLIGHT = 8;
/** Calls per batch request: big enough to amortise the HTTP round trip, small enough to spread over the gate. */
export const BATCH_SIZE = 200;
const DEFAULT_TIMEOUT_MS = 60_000;
const BUSY_RETRIES = 4;

export interface RpcOptions {
  /** The node's wallet endpoint (/wallet/<name>) instead of the node's own. */
  wallet?: string;
  gate?: RequestGate;
  timeoutMs?: number;
}

export class BitcoinRpc {
  private readonly endpoint: NodeEndpoint;
  private readonly url: string;
  private readonly gate: RequestGate;
  private readonly timeoutMs: number;
  private nextId = 1;

  /**
   * `node`: the node's URL (http://user:password@host:port, a path and query of a provider kept) or its endpoint; the
   * credentials go in the Authorization header, the node's wallet endpoint (/wallet/<name>) after its path.
   */
  constructor(node: string | NodeEndpoint, options: RpcOptions = {}) {
    this.endpoint = endpointOf(node);
    const url = new URL(this.endpoint.url);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${options.wallet ? `/wallet/${encodeURIComponent(options.wallet)}` : '/'}`;
    this.url = url.toString();
    this.gate = options.gate ?? new RequestGate(MAX_IN_FLIGHT);
    this.timeoutMs = options.timeoutMs ?? this.endpoint.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The same node through a wallet's endpoint, sharing this client's cap on requests in flight. */
  wallet(name: string): BitcoinRpc {
    return new BitcoinRpc(this.endpoint, { wallet: name, gate: this.gate, timeoutMs: this.timeoutMs });
  }

  /** One call; throws RpcError when the node refuses it. */
  async call<T>(method: string, params: unknown[] = [], timeoutMs = this.timeoutMs): Promise<T> {
    const body = { jsonrpc: '1.0', id: this.nextId++, method, params };
    const answer = (await this.post(body, method, timeoutMs)) as { result?: unknown; error?: { code: number; message: string } | null };
    if (answer.error) throw new RpcError(method, answer.error.code, answer.error.message);
    return answer.result as T;
  }

  /**
   * Many calls, in batches; answers each call's result or its RpcError, in order. A failure to reach the node
   * throws (nothing of the batch is known then).
   */
  async batch<T>(calls: RpcCall[]): Promise<(T | RpcError)[]> {
    const chunks: RpcCall[][] = [];
    for (let i = 0; i < calls.length; i += BATCH_SIZE) chunks.push(calls.slice(i, i + BATCH_SIZE));
    const answers = await Promise.all(chunks.map((chunk) => this.batchOnce<T>(chunk)));
    return answers.flat();
  }

  /** Like batch(), but the first refused call throws its RpcError. */
  async batchAll<T>(calls: RpcCall[]): Promise<T[]> {
    const results = await this.batch<T>(calls);
    const failed = results.find((r): r is RpcError => r instanceof RpcError);
    if (failed) throw failed;
    return results as T[];
  }

  private async batchOnce<T>(calls: RpcCall[]): Promise<(T | RpcError)[]> {
    const first = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((c, i) => ({ jsonrpc: '1.0', id: first + i, method: c.method, params: c.params ?? [] }));
    const answers = await this.post(body, `batch of ${calls.length} (${calls[0]?.method ?? ''}...)`, this.timeoutMs);
    if (!Array.isArray(answers)) throw new RpcTransportError('the node did not answer a batch with a list');
    const byId = new Map((answers as { id: number; result?: unknown; error?: { code: number; message: string } | null }[]).map((a) => [a.id, a]));
    return calls.map((c, i) => {
      const a = byId.get(first + i);
      if (!a) return new RpcError(c.method, RPC_ERROR.MISC, 'no answer in the batch');
      return a.error ? new RpcError(c.method, a.error.code, a.error.message) : (a.result as T);
    });
  }

  /** The node's answer to one call as text, unparsed (what the benchmark compares our processing with). */
  async callText(method: string, params: unknown[] = []): Promise<string> {
    return (await this.exchange(JSON.stringify({ jsonrpc: '1.0', id: this.nextId++, method, params }), method, this.timeoutMs)).answer;
  }

  private exchange(text: string, what: string, timeoutMs: number): Promise<{ status: number; answer: string }> {
    return this.gate.run(async () => {
      let res: Response;
      try {
        res = await fetch(this.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...this.endpoint.headers },
          body: text,
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (e) {
        throw new RpcTransportError(`${what}: the node ${this.endpoint.name} does not answer (${failureOf(e)})`);
      }
      return { status: res.status, answer: await res.text().catch(() => '') };
    });
  }

  private async post(body: unknown, what: string, timeoutMs: number): Promise<unknown> {
    const text = JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      const { status, answer } = await this.exchange(text, what, timeoutMs);
      if (status === 401 || status === 403) throw new RpcTransportError(`${what}: the node ${this.endpoint.name} refused our credentials (HTTP ${status})`);
      // Bitcoin Core answers call errors with 404/500 and a JSON body; anything else not JSON means it is busy or gone.
      let parsed: unknown;
      try {
        parsed = parseNodeJson(answer);
      } catch {
        if (status === 500 && /work queue depth/i.test(answer) && attempt < BUSY_RETRIES) {
          await new Promise((r) => setTimeout(r, 100 * attempt));
          continue;
        }
        throw new RpcTransportError(`${what}: the node ${this.endpoint.name} answered HTTP ${status} ${this.endpoint.quote(answer)}`);
      }
      return parsed;
    }
  }
}

// Strings, or numbers a float could change (a fraction, an exponent, too many digits to be exact): strings are
// matched first, so digits inside them are never taken for numbers.
const STRING_OR_INEXACT_NUMBER = /"(?:[^"\\]|\\.)*"|(-?\d+\.\d+(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+|-?\d{16,})/g;
/** Marks a quoted number; JSON text may only hold it escaped, so a marked string cannot come from the node. */
const MARK = '\\u0000';

/**
 * parseJsonExact's result (numbers with a fraction arrive as DecimalLiteral with their digits), about five times
 * faster on the node's large answers: those numbers are quoted with a mark, JSON.parse reads the rest, and the marked
 * strings become decimals. An answer holding the mark itself (a NUL in some label) takes the exact parser.
 */
export function parseNodeJson(text: string): unknown {
  if (text.includes(MARK)) return parseJsonExact(text);
  let marked = '';
  let copied = 0;
  STRING_OR_INEXACT_NUMBER.lastIndex = 0;
  for (let m = STRING_OR_INEXACT_NUMBER.exec(text); m; m = STRING_OR_INEXACT_NUMBER.exec(text)) {
    if (m[1] === undefined) continue;
    marked += `${text.slice(copied, m.index)}"${MARK}${m[1]}"`;
    copied = m.index + m[0].length;
  }
  return unmark(JSON.parse(copied === 0 ? text : marked + text.slice(copied)));
}

function unmark(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.charCodeAt(0) !== 0) return value;
    const digits = value.slice(1);
    return /^-?\d+$/.test(digits) && Number.isSafeInteger(Number(digits)) ? Number(digits) : new DecimalLiteral(digits);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = unmark(value[i]);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) record[key] = unmark(record[key]);
  }
  return value;
}

/** An amount of coins from an RPC answer (the node writes them with 8 decimals), as an exact decimal. */
export function coins(value: unknown): Money {
  if (value instanceof DecimalLiteral) return toMoney(value.text);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return toMoney(value);
  throw new Error(`not an amount: ${JSON.stringify(value)}`);
}

/** One output of listunspent. */
export interface Unspent {
  txid: string;
  vout: number;
  address?: string;
  amount: unknown;
  scriptPubKey: string;
  confirmations: number;
}

/** What the node says of one transaction now (txStatuses leaves out those it does not know). */
export interface TxStatus {
  confirmations: number;
  blockheight: number | null;
}

/** An output's key: `txid:vout`. */
export const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;
