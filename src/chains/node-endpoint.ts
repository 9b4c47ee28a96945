// One chain node as Payrail reaches it and shows it. A node's URL often carries a key (in its path, its query or as
// user:password) and its headers may (an API key): none of that leaves the process. Whatever is shown or logged
// about a node names it by `name` (the node's `label` in CHAINS_FILE, else scheme://host:port), and whatever comes
// out of a node's adapter (an error, with its causes; a log line) is rewritten by `scrubError` / `scrubLog`, which
// take out every secret of the node's configuration, wherever a library or the node itself put it.
import { AppError } from '../errors/app-error.ts';
import { sharedLimiter, type RateLimitConfig, type RateLimiter } from './rate-limit.ts';

export interface NodeSettings {
  /** The node's URL as CHAINS_FILE gives it (rpcUrl or apiUrl). */
  url: string;
  /** How the operator knows the node (CHAINS_FILE `label`). */
  label?: string | undefined;
  /** Headers of every request (CHAINS_FILE `headers`: API keys). */
  headers?: Record<string, string> | undefined;
  /** More values to hide: an API key the adapter sends in a header of its own (`apiKey`). */
  secrets?: string[] | undefined;
  /** How long one request may take (CHAINS_FILE `timeoutMs`); unset: the client's default. */
  timeoutMs?: number | undefined;
  /** The provider's limits (CHAINS_FILE `rateLimit`): requests wait for them, throttling answers are backed off. */
  rateLimit?: RateLimitConfig | undefined;
}

/** The CHAINS_FILE entry of one real node, whatever its family (every schema of config.ts has these). */
export type NodeConfig = ({ rpcUrl: string } | { apiUrl: string }) & {
  label?: string | undefined;
  headers?: Record<string, string> | undefined;
  timeoutMs?: number | undefined;
  apiKey?: string | undefined;
  rateLimit?: RateLimitConfig | undefined;
};

/** The one place a node's configuration becomes what its clients use and what is shown of it. */
export function nodeEndpoint(config: NodeConfig): NodeEndpoint {
  return new NodeEndpoint({
    url: 'rpcUrl' in config ? config.rpcUrl : config.apiUrl,
    label: config.label,
    headers: config.headers,
    secrets: config.apiKey ? [config.apiKey] : [],
    timeoutMs: config.timeoutMs,
    rateLimit: config.rateLimit,
  });
}

/** A node given as a URL (tests, benchmarks) or as its endpoint (CHAINS_FILE: label, headers, timeout). */
export const endpointOf = (node: string | NodeEndpoint): NodeEndpoint => (typeof node === 'string' ? new NodeEndpoint({ url: node }) : node);

/** Shorter values are not looked for in text: they could not be told from ordinary words and numbers. */
const MIN_SECRET = 4;
/** A path segment this long may be a key (`/v3/<key>`); shorter ones are words (`v2`, `rpc`, `jsonRPC`). */
const MIN_PATH_KEY = 8;
/** How deep causes and logged objects are followed. */
const MAX_DEPTH = 5;
const REDACTED = '[redacted]';

/** An error rewritten by a node's endpoint: its original name, message, code and causes, scrubbed; nothing else. */
export class NodeError extends Error {
  code?: string | number;
}

export class NodeEndpoint {
  /** How messages, logs, /health and readiness name the node. */
  readonly name: string;
  /** Where requests go: the configured URL without user:password (fetch refuses those in a URL). */
  readonly url: URL;
  /** Headers of every request: the configured ones, plus user:password of the URL as Basic authorization. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number | undefined;
  /** The provider's limiter, shared by every client of the node in the process; null: not limited. */
  readonly limiter: RateLimiter | null;
  /** Any URL on the node's host, with whatever path, query or credentials. */
  private readonly urls: RegExp;
  /** The configuration's secrets, longest first; null when there are none. */
  private readonly secrets: RegExp | null;

  constructor(settings: NodeSettings) {
    const url = new URL(settings.url);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    this.name = settings.label || `${url.protocol}//${url.hostname}:${port}`;
    this.timeoutMs = settings.timeoutMs;
    this.limiter = settings.rateLimit ? sharedLimiter(limiterKey(settings.url), settings.rateLimit) : null;

    const found = new Set<string>();
    const add = (value: string | undefined, min = MIN_SECRET) => {
      if (!value) return;
      const decoded = safeDecode(value);
      for (const form of [value, decoded, encodeURIComponent(decoded), JSON.stringify(value).slice(1, -1)]) if (form.length >= min) found.add(form);
    };
    const headers: Record<string, string> = { ...settings.headers };
    if (url.username || url.password) {
      add(url.username);
      add(url.password);
      const basic = Buffer.from(`${safeDecode(url.username)}:${safeDecode(url.password)}`).toString('base64');
      add(basic);
      // CHAINS_FILE refuses an Authorization header beside user:password (config.ts).
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) headers['authorization'] = `Basic ${basic}`;
    }
    if (url.pathname !== '/') {
      add(url.pathname.replace(/\/+$/, ''));
      for (const segment of url.pathname.split('/')) add(segment, MIN_PATH_KEY);
    }
    for (const part of [url.search, url.hash]) {
      if (part.length <= 1) continue;
      add(part.slice(1));
      for (const pair of part.slice(1).split('&')) {
        add(pair);
        add(pair.slice(pair.indexOf('=') + 1));
      }
    }
    for (const value of [...Object.values(settings.headers ?? {}), ...(settings.secrets ?? [])]) {
      add(value);
      // The token of `Bearer <token>` alone too.
      for (const word of value.split(/\s+/)) add(word, MIN_PATH_KEY);
    }
    this.secrets = found.size ? new RegExp([...found].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|'), 'g') : null;
    this.urls = new RegExp(`https?://(?:[^\\s/@"'<>]*@)?${escapeRegExp(url.hostname)}(?::\\d+)?[^\\s"'<>\`]*`, 'gi');

    url.username = '';
    url.password = '';
    url.hash = '';
    this.url = url;
    this.headers = headers;
  }

  /** `text` with every URL of the node replaced by its name and every secret of its configuration taken out. */
  scrub(text: string): string {
    const named = text.replace(this.urls, (match) => {
      // Punctuation after a URL in a sentence ("... (http://host/x)") is the sentence's.
      const trailing = /[).,;:\]}]+$/.exec(match)?.[0] ?? '';
      return this.name + trailing;
    });
    if (!this.secrets) return named;
    // The name itself stays whole (a label may contain a word that is also in the path).
    return named
      .split(this.name)
      .map((piece) => piece.replace(this.secrets!, REDACTED))
      .join(this.name);
  }

  /** A node's answer quoted in a message: scrubbed first, then cut (a cut could split a secret so that it is not found). */
  quote(text: string, max = 200): string {
    return this.scrub(text).slice(0, max);
  }

  /**
   * An error safe to show and log: a NodeError with the name, message, code and stack of `e` and of each of its causes,
   * scrubbed, and nothing else (no `url`, `details`, `headers`, `body` or request a library attached). Refusals of our
   * own (AppError) keep their class and code: the API answers them.
   */
  scrubError(e: unknown, depth = 0): Error {
    if (e instanceof AppError) {
      const message = this.scrub(e.message);
      if (message === e.message) return e;
      const clean = new AppError(e.code, message, e.details.map((d) => ({ ...d, message: this.scrub(d.message) })));
      clean.name = e.name;
      return clean;
    }
    if (!(e instanceof Error)) return new NodeError(this.scrub(String(e)));
    const cause = e.cause !== undefined && depth < MAX_DEPTH ? this.scrubError(e.cause, depth + 1) : undefined;
    const clean = new NodeError(this.scrub(messageOf(e)), cause ? { cause } : undefined);
    clean.name = this.scrub(e.name);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number' || (typeof code === 'string' && /^[\w.-]{1,40}$/.test(code))) clean.code = typeof code === 'string' ? this.scrub(code) : code;
    clean.stack = e.stack ? this.scrub(e.stack) : `${clean.name}: ${clean.message}`;
    return clean;
  }

  /** A log line's fields scrubbed (strings, errors, and what plain objects and arrays hold): the node logger's formatter. */
  scrubLog(fields: Record<string, unknown>): Record<string, unknown> {
    return this.scrubValue(fields, 0) as Record<string, unknown>;
  }

  private scrubValue(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (value instanceof Error) return this.scrubError(value);
    if (value instanceof URL) return this.scrub(value.href);
    if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
    if (Array.isArray(value)) return value.map((v) => this.scrubValue(v, depth + 1));
    const proto = Object.getPrototypeOf(value) as unknown;
    // Other instances (dates, decimals) write their own values.
    if (proto !== Object.prototype && proto !== null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.scrubValue(v, depth + 1)]));
  }
}

/** An error's own message, or what it holds when that is empty (undici's AggregateError of connection attempts). */
function messageOf(e: Error): string {
  if (e.message) return e.message;
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.length) return errors.map((x) => (x instanceof Error ? messageOf(x) : String(x))).join('; ');
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : e.name;
}

/** What went wrong in a request, in a few words: the cause's message where fetch says only "fetch failed". */
export function failureOf(e: unknown): string {
  if (e instanceof Error && e.name === 'TimeoutError') return 'no answer in time';
  if (e instanceof Error && e.cause instanceof Error) return messageOf(e.cause);
  return e instanceof Error ? messageOf(e) : String(e);
}

/** Which limiter a node shares: one per configured URL (a provider's key may be in it). */
export const limiterKey = (url: string) => url;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
