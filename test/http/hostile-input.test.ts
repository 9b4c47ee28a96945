// Hostile input over every REST route and every GraphQL argument: strings with NUL and lone surrogates, huge and
// tiny exponents, out-of-range integers and dates, forged cursors, deep nesting and type confusion. No answer may
// be a 5xx (or a GraphQL INTERNAL error), every REST error has the one error shape, and no request takes 1 s.
// Bytes that are not UTF-8, over GraphQL's HTTP and WebSocket transports, are refused before anything reads them.
// The REST and GraphQL fuzz run with a test-mode and a live-mode token (ethereum on an anvil node for live mode): a
// live token gets 403 from every sandbox route and FORBIDDEN from every sandbox mutation, whatever else it sends.
import { randomUUID } from 'node:crypto';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { apiRoutes } from '../../src/app.ts';
import type { Db } from '../../src/db/client.ts';
import { COMPANY_ASSETS, PAYMENT_CURRENCY_INFO } from '../../src/domain/assets.ts';
import { MAX_BALANCE, Money } from '../../src/domain/money.ts';
import type { ErrorBody } from '../../src/http/io.ts';
import { startAnvil, type Anvil } from '../support/anvil-node.ts';
import { ANVIL } from '../support/anvil.ts';
import { chainsEnv, testXpub } from '../support/chains.ts';
import { bookDirectly } from '../support/funding.ts';
import { checkApiExchange } from '../support/contract.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer, type TestServer } from '../support/server.ts';

const MAX_MS = 1_000;
const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** anvil's second default account: an ethereum address live mode can send to. */
const EVM_ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
type Mode = 'test' | 'live';
/** Live mode's passes need its node (anvil from npm); where npm has none for this machine they do not run. */
const MODES: Mode[] = ANVIL ? ['test', 'live'] : ['test'];
/** What each mode's samples pay and send with: test mode every network on the sandbox, live mode ethereum on anvil. */
const CHAIN = {
  test: { asset: 'trc20usdt', address: TRON_ADDRESS, fixed: 'btc' },
  live: { asset: 'eth', address: EVM_ADDRESS, fixed: 'eth' },
} as const;
const SANDBOX_REFUSAL = /^The sandbox takes a test-mode token/;
/** Amounts tried for the largest one accepted: the column's largest value first (Decimal(38,18) at 6 places), then down. */
const AMOUNT_CANDIDATES = ['99999999999999999999.999999', '1e19', '1e18', '1e17', '1e16', '1e15', '1e14'];
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** Values as raw JSON text, so numbers keep their exact (hostile) digits. */
const HOSTILE_JSON = [
  '"a\\u0000b"', '"\\ud800"', '"x\\udc00y"', JSON.stringify('x'.repeat(20_000)), '""',
  '1e10000000', '1e-10000000', '1e21', '-1e21', '9223372036854775808', '-9223372036854775809', '1e400',
  '"1e10000000"', '"1e-10000000"', '"1e21"', '"NaN"',
  '"0000-01-01T00:00:00Z"', '"-271821-04-20T00:00:00.000Z"', '"+275760-09-13T00:00:00.000Z"', '"2026-02-31T00:00:00Z"',
  `"${b64('GPC:N:1e400')}"`, `"${b64('GPC:S:\u0000')}"`, `"${b64('GPC:I:99999999999999999999999')}"`,
  '{}', '[]', 'null', 'true', '-1', '0', '2147483648', `${'['.repeat(300)}${']'.repeat(300)}`,
];

/**
 * The hostile values that reach a GraphQL position of this type past graphql-js's own coercion (which refuses
 * a string for an Int, say, before any of our code runs), plus one of each other JSON kind.
 */
function hostileFor(type: GraphQLInputType): string[] {
  const named = getNamedType(type);
  const [strings, numbers] = [STRINGS, NUMBERS];
  const kinds = ['{}', '[]', 'null', 'true', '1', '"x"'];
  if (isInputObjectType(named) || isEnumType(named)) return [...kinds, strings[0]!, strings[1]!];
  if (named.name === 'Int' || named.name === 'Float' || named.name === 'Boolean') return [...numbers, ...kinds];
  if (named.name === 'Decimal') return [...numbers, ...strings, ...kinds];
  return [...strings, ...kinds, numbers[0]!];
}

/** Path and query values, already URL-encoded. */
const HOSTILE_URL = [
  '%00', 'a%00b', '%ED%A0%80', '%F0%9F', '%E0%A4%A', 'x'.repeat(3_000), '9223372036854775808', '-1', '1e400', '1e10000000',
  '0000-01-01T00%3A00%3A00Z', '..%2F..%2Fadmin', encodeURIComponent(b64('GPC:N:1e400')), encodeURIComponent(b64('GPC:S:\u0000')), '%20',
];

interface Sample {
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** One body, or alternatives where fields exclude each other. */
  body?: Record<string, unknown> | Record<string, unknown>[];
}

/** A plausible request per route; the fuzz replaces one part at a time. Every API route must be listed. */
function samples(ids: { invoice: string; transfer: string; event: string }, mode: Mode): Record<string, Sample> {
  const { asset, address, fixed } = CHAIN[mode];
  return {
    'POST /api/invoices/v1/regular': {
      body: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }], paymentCurrency: fixed, isMerchantPaysFee: false, redirectURL: 'https://a.example/r', orderId: 'order-1', metadata: { k: 'v' } },
    },
    'POST /api/invoices/v1/regular/:id/proceed': { params: { id: ids.invoice }, body: { clientEmail: 'a@b.co', paymentCurrency: asset, lang: 'de' } },
    'GET /api/invoices/v1/regular/:id': { params: { id: ids.invoice } },
    'GET /api/rates': { query: { invoiceCurrency: 'usd' } },
    'POST /api/invoices/v1/regular/:id/accept': { params: { id: ids.invoice } },
    'POST /api/invoices/v1/regular/:id/refund': { params: { id: ids.invoice }, body: { address, tag: '1' } },
    'GET /api/company/underpayment-limits': {},
    'PATCH /api/company/underpayment-limits': { body: { limits: { usdt: { fixed: '1', percent: '1' } } } },
    'GET /api/company/balances': {},
    'POST /api/sandbox/transfers': {
      body: [
        { invoiceId: ids.invoice, amount: '1', asset, confirmations: 1, txHash: 'abcdef0123456789', outputIndex: 0, from: 'x' },
        { address, tag: '1', amount: '1' },
      ],
    },
    'POST /api/sandbox/transfers/:id/confirm': { params: { id: ids.transfer }, body: { confirmations: 5 } },
    'POST /api/sandbox/transfers/:id/drop': { params: { id: ids.transfer } },
    'POST /api/sandbox/clock/advance': { body: { minutes: 1 } },
    'GET /api/sandbox/clock': {},
    'PUT /api/company/settings/webhook-url': { body: { webHookUrl: 'https://a.example/h' } },
    'GET /api/company/settings/webhook-url': {},
    'POST /api/company/settings/webhook-url/test': {},
    'GET /api/company/webhooks/deliveries': { query: { status: 'pending', eventId: ids.event, after: randomUUID(), limit: '10' } },
    'GET /api/company/webhooks/deliveries/:id': { params: { id: randomUUID() } },
    'POST /api/company/webhooks/events/:eventId/redeliver': { params: { eventId: ids.event } },
    'POST /api/company/webhooks/redeliver-failed': { body: { since: '2026-01-01T00:00:00Z' } },
    'GET /api/company/events': { query: { after: '1', limit: '10' } },
    'POST /api/transactions/withdraw': { body: { items: [{ amount: '5', tag: '', to: address, asset }] } },
    'GET /api/transactions/withdrawals': { query: { status: 'processing', asset, after: randomUUID(), limit: '10' } },
    'GET /api/transactions/withdrawals/:uid': { params: { uid: randomUUID() } },
    'GET /api/company/auto-withdrawals': {},
    'PATCH /api/company/auto-withdrawals': {
      body: { assets: { [asset]: { amount: 50, isEnabled: true, withdrawalTag: null, withdrawalAddress: address } } },
    },
    'GET /api/company/autoswap': {},
    'PATCH /api/company/autoswap': { body: { assets: { [asset]: { isEnabled: true, toCurrency: 'btc', maxSlippagePercent: '1' } } } },
    'GET /api/sandbox/autoswap-venue': {},
    'PUT /api/sandbox/autoswap-venue': { body: { slippagePercent: '0.5', feePercent: '0.3', behaviour: 'fill' } },
    'POST /api/sandbox/withdrawals/:uid/confirm': { params: { uid: randomUUID() } },
    'POST /api/sandbox/withdrawals/:uid/reject': { params: { uid: randomUUID() } },
    'POST /api/static-addresses': { body: { asset, internalUserId: 'user-1', email: 'a@b.co' } },
    'GET /api/static-addresses': { query: { internalUserId: 'user-1', asset, after: randomUUID(), limit: '10' } },
    'GET /api/static-addresses/:id': { params: { id: randomUUID() } },
    'GET /api/deposits': { query: { addressId: randomUUID(), status: 'done', after: randomUUID(), limit: '10' } },
    'GET /api/company/exports/ledger.csv': { query: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' } },
    'GET /api/company/exports/invoices.csv': { query: { from: '2026-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' } },
    'GET /api/exports/:token': { params: { token: 'A'.repeat(43) } },
    'PUT /api/company/settings/notifications': {
      body: { client: { pending: true, done: false, wrong: true, refunded: true, closed: true }, merchant: { emails: ['a@b.co'], done: true, webhookFailing: false } },
    },
    'GET /api/company/settings/notifications': {},
    'GET /api/company/emails': { query: { invoiceId: ids.invoice, status: 'sent', after: randomUUID(), limit: '10' } },
    'POST /api/company/api-keys': { body: { name: 'fuzz', scopes: ['invoices:read', 'payouts:read'], expiresAt: '2099-01-01T00:00:00Z' } },
    'GET /api/company/api-keys': {},
    'DELETE /api/company/api-keys/:id': { params: { id: randomUUID() } },
    'GET /api/company/audit-log': { query: { after: '10', limit: '10' } },
    'GET /api/company/settings/payout-policy': {},
    'PUT /api/company/settings/payout-policy': { body: { allowListOnly: true, cooldownHours: 24 } },
    'POST /api/company/payout-addresses': { body: { asset, address, tag: null, label: 'fuzz' } },
    'GET /api/company/payout-addresses': {},
    'DELETE /api/company/payout-addresses/:id': { params: { id: randomUUID() } },
    'GET /api/company/settings/store': {},
    // Every asset stays accepted whatever one variant does (an empty or unknown list is refused), so the other routes keep working.
    'PATCH /api/company/settings/store': {
      body: { name: 'Fuzz', logoUrl: 'https://a.example/l.png', redirectURL: 'https://a.example/r', acceptedAssets: [...COMPANY_ASSETS], isMerchantPaysFee: false },
    },
    'POST /api/payment-links': {
      body: { name: 'fuzz', invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }], paymentCurrency: fixed, isMerchantPaysFee: false, redirectURL: 'https://a.example/r', active: true },
    },
    'GET /api/payment-links': { query: { active: 'true', after: 'pl_1111111111111111111111', limit: '10' } },
    'GET /api/payment-links/:id': { params: { id: 'pl_1111111111111111111111' } },
    'POST /api/payment-links/:id/deactivate': { params: { id: 'pl_1111111111111111111111' } },
  };
}

const MARK = '"__HOSTILE__"';

/** A header value from a URL-encoded hostile value (headers cannot carry every byte: those are left encoded). */
const decodeURIComponentSafe = (v: string) => {
  try {
    const decoded = decodeURIComponent(v);
    return /^[\x20-\x7e]*$/.test(decoded) ? decoded : v;
  } catch {
    return v;
  }
};

const STRINGS = HOSTILE_JSON.filter((v) => v.startsWith('"'));
const NUMBERS = HOSTILE_JSON.filter((v) => /^-?\d/.test(v));
const OTHERS = HOSTILE_JSON.filter((v) => !STRINGS.includes(v) && !NUMBERS.includes(v));

/** The hostile values worth trying where a sample holds `value`: what its field may be read as, and every other kind. */
function hostileForSample(value: unknown): string[] {
  if (typeof value === 'string') return HOSTILE_JSON;
  if (typeof value === 'number') return [...NUMBERS, ...OTHERS, ...STRINGS.slice(0, 3)];
  return [...OTHERS, ...NUMBERS.slice(0, 2), ...STRINGS.slice(0, 3)];
}

interface BodyVariant {
  make(raw: string): string;
  values: string[];
}

/** Every way to put one hostile value into a JSON body: the whole body, each leaf and container, one unknown key. */
function bodyVariants(body: Record<string, unknown>): BodyVariant[] {
  const variants: BodyVariant[] = [{ make: (raw) => raw, values: hostileForSample(body) }];
  const walk = (path: (string | number)[]) => {
    let value: unknown = body;
    for (const key of path) value = (value as Record<string | number, unknown>)[key];
    variants.push({
      make: (raw) => {
        const copy = structuredClone(body) as Record<string, unknown>;
        let target: Record<string | number, unknown> = copy;
        for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
        target[path.at(-1)!] = '__HOSTILE__';
        return JSON.stringify(copy).replace(MARK, raw);
      },
      values: hostileForSample(value),
    });
    if (value && typeof value === 'object') for (const key of Object.keys(value)) walk([...path, Array.isArray(value) ? Number(key) : key]);
  };
  for (const key of Object.keys(body)) walk([key]);
  variants.push({ make: (raw) => JSON.stringify({ ...body, ['extra\u0000']: 1 }).replace('}', `,"unknown":${raw}}`), values: [...STRINGS.slice(0, 3), ...OTHERS] });
  return variants;
}

interface Outcome {
  what: string;
  status: number;
  /** The Payrail-Mode header: which mode's data the answer is about. */
  mode: string | null;
  ms: number;
  body: any;
}

async function send(server: TestServer, token: string, method: string, path: string, body?: string): Promise<Outcome> {
  const started = performance.now();
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body,
  });
  const text = await res.text();
  checkApiExchange({ method, path, status: res.status, contentType: res.headers.get('content-type'), text });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { what: `${method} ${path.slice(0, 120)} ${body?.slice(0, 160) ?? ''}`, status: res.status, mode: res.headers.get('payrail-mode'), ms: performance.now() - started, body: parsed };
}

function expectSafe(o: Outcome) {
  expect(o.status, o.what).toBeLessThan(500);
  expect(o.ms, `${o.what} took ${o.ms.toFixed(0)} ms`).toBeLessThan(MAX_MS);
  if (o.status >= 400) expect(Object.keys(o.body?.error ?? {}).sort(), o.what).toEqual(['code', 'details', 'message', 'requestId']);
}

// ---- Invalid UTF-8: bytes no decoder may turn into U+FFFD (a stray byte, an encoded surrogate, an overlong
// slash, a cut 4-byte sequence, a lone continuation byte).

const BAD_UTF8 = [[0xff, 0xed, 0xa0, 0x80], [0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf0, 0x9f], [0x80]];

/** `json` with MARK replaced by a JSON string holding `bytes` (the rest of the text stays UTF-8). */
function withBadBytes(json: string, bytes: number[]): Buffer {
  const parts = json.split(MARK);
  if (parts.length !== 2) throw new Error(`expected one ${MARK} in ${json.slice(0, 200)}`);
  return Buffer.concat([Buffer.from(`${parts[0]}"bad-utf8-`, 'utf8'), Buffer.from(bytes), Buffer.from(`"${parts[1]}`, 'utf8')]);
}

/** Rows whose text holds U+FFFD, in every text and JSON column: what a lenient decoder would have stored. */
async function rowsWithReplacementCharacter(db: Db): Promise<number> {
  const columns = await db.$queryRawUnsafe<{ table_name: string; column_name: string }[]>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND data_type IN ('text', 'character varying', 'json', 'jsonb')`,
  );
  let rows = 0;
  for (const { table_name, column_name } of columns) {
    const [found] = await db.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${table_name}" WHERE "${column_name}"::text LIKE '%' || chr(65533) || '%'`);
    rows += found!.n;
  }
  return rows;
}

interface WsOutcome {
  /** The close code and reason, or null when the operation was answered and the connection stayed open. */
  closed: { code: number; reason: string } | null;
  /** The messages about operation 1. */
  answers: { type: string; payload?: any }[];
}

/** One graphql-ws connection: init with the token, send `message` as a text or binary frame, wait for its fate. */
function overWebSocket(server: TestServer, token: string, message: Buffer, binary: boolean): Promise<WsOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    const answers: WsOutcome['answers'] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('no answer in 10 s'));
    }, 10_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: string; type: string; payload?: unknown };
      if (m.type === 'connection_ack') return ws.send(message, { binary });
      if (m.id !== '1') return;
      answers.push(m);
      if (m.type === 'complete' || m.type === 'error') {
        clearTimeout(timer);
        ws.close();
        resolve({ closed: null, answers });
      }
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ closed: { code, reason: String(reason) }, answers });
    });
    ws.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

const subscribeMessage = (payload: string) => `{"id":"1","type":"subscribe","payload":${payload}}`;

// ---- GraphQL: every argument of every root field, one leaf at a time.

/** Valid values for arguments and fields known by name, so a hostile value elsewhere reaches deep into the service. */
type Known = Record<string, unknown>;

/** A valid-looking value of an input type: its required fields only, unless `optional`. */
function plausible(type: GraphQLInputType, known: Known, name = '', optional = false): unknown {
  if (isNonNullType(type)) return plausible(type.ofType, known, name, optional);
  if (isListType(type)) return [plausible(type.ofType, known, name, optional)];
  if (name in known && !isInputObjectType(type)) return known[name];
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields()).filter((f) => optional || isNonNullType(f.type));
    return Object.fromEntries(fields.map((f) => [f.name, plausible(f.type, known, f.name, optional)]));
  }
  switch (type.name) {
    case 'Int':
      return 1;
    case 'Float':
      return 1.5;
    case 'Boolean':
      return true;
    case 'Decimal':
      return '1';
    case 'DateTime':
      return '2026-01-01T00:00:00.000Z';
    default:
      return 'x';
  }
}

/** Every position in an argument, optional fields included, with its type. */
function slots(type: GraphQLInputType, path: (string | number)[] = []): { path: (string | number)[]; type: GraphQLInputType }[] {
  const inner = isNonNullType(type) ? type.ofType : type;
  const here = { path, type };
  if (isListType(inner)) return [here, ...slots(inner.ofType, [...path, 0])];
  if (isInputObjectType(inner)) return [here, ...Object.values(inner.getFields()).flatMap((f) => slots(f.type, [...path, f.name]))];
  return [here];
}

/** `value` (required fields only) with the containers on the way to `path` filled in, and `path` marked hostile. */
function withHostileAt(value: unknown, type: GraphQLInputType, path: (string | number)[], known: Known): unknown {
  if (path.length === 0) return '__HOSTILE__';
  const inner = isNonNullType(type) ? type.ofType : type;
  const [head, ...rest] = path;
  if (isListType(inner)) {
    const list = Array.isArray(value) ? [...value] : [];
    list[0] = withHostileAt(list[0] ?? plausible(inner.ofType, known), inner.ofType, rest, known);
    return list;
  }
  const fields = (inner as GraphQLInputObjectType).getFields();
  const field = fields[head as string]!;
  const obj = { ...(value as Record<string, unknown>) };
  obj[head as string] = withHostileAt(obj[head as string] ?? plausible(field.type, known, field.name), field.type, rest, known);
  return obj;
}

function operationFor(schema: GraphQLSchema, kind: 'query' | 'mutation' | 'subscription', field: GraphQLField<unknown, unknown>): string {
  const defs = field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
  const args = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const named = getNamedType(field.type);
  const selection = isScalarType(named) || isEnumType(named) ? '' : ' { __typename }';
  void schema;
  return `${kind}${defs ? `(${defs})` : ''} { ${field.name}${args ? `(${args})` : ''}${selection} }`;
}

describe.each(DATABASES)('hostile input on %s', { timeout: 180_000 }, (kind) => {
  let node: Anvil | undefined;
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE: '0' };
  beforeAll(async () => {
    if (!ANVIL) return;
    node = await startAnvil();
    Object.assign(env, chainsEnv({ ethereum: { rpcUrl: node.rpcUrl, chainId: node.chainId, xpub: testXpub('ethereum', false), confirmations: 3, pollMs: 1_000 } }));
  });
  afterAll(async () => node?.stop());
  const server = useServer(kind, env);

  /**
   * A merchant with a filled invoice, a sandbox transfer and an event; for live mode a live invoice (paid in eth) and its
   * event, and the transfer the same merchant's test token made: a live token is refused even an id of its own account.
   */
  async function fixtures(mode: Mode = 'test') {
    const m = mode === 'test' ? await server.merchant() : await server.liveMerchant();
    const filled = async (token: string, paymentCurrency: string) => {
      const created = await server.request('POST', '/api/invoices/v1/regular', { token, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 10 }] } });
      const id = created.body.id as string;
      const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency } });
      expect(proceeded.status, proceeded.text).toBe(200);
      return id;
    };
    const testInvoice = await filled(m.test.publicToken, 'trc20usdt');
    const transfer = (await server.request('POST', '/api/sandbox/transfers', { token: m.test.publicToken, json: { invoiceId: testInvoice, amount: '1' } })).body.id as string;
    const invoice = mode === 'test' ? testInvoice : await filled(m.live.publicToken, CHAIN.live.asset);
    const event = (await server.app.db.prisma.event.findFirstOrThrow({ where: { subjectId: invoice } })).id;
    return { token: m.publicToken, ids: { invoice, transfer, event } };
  }

  it.each(MODES)('every REST route with a %s token: hostile path ids, query parameters and body fields get a 4xx in the error shape, fast', async (mode) => {
    const { token, ids } = await fixtures(mode);
    const table = samples(ids, mode);
    // A new route must come with its sample here.
    expect(Object.keys(table).sort()).toEqual(apiRoutes.map((r) => `${r.method} ${r.path}`).sort());
    let requests = 0;
    let slowest = 0;
    let refused = 0;
    for (const route of apiRoutes) {
      const sample = table[`${route.method} ${route.path}`]!;
      // A sandbox tool refuses a live token before it reads anything else: 403 for every hostile request.
      const sandboxForLive = mode === 'live' && route.path.startsWith('/api/sandbox/');
      const path = (params: Record<string, string>, query: Record<string, string>) => {
        const p = route.path.replace(/:([a-zA-Z]+)/g, (_, name: string) => params[name] ?? encodeURIComponent(sample.params?.[name] ?? 'x'));
        const q = Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&');
        return q ? `${p}?${q}` : p;
      };
      const validQuery = Object.fromEntries(Object.entries(sample.query ?? {}).map(([k, v]) => [k, encodeURIComponent(v)]));
      const bodies = sample.body === undefined ? [] : Array.isArray(sample.body) ? sample.body : [sample.body];
      const body = bodies[0] === undefined ? undefined : JSON.stringify(bodies[0]);
      const check = async (p: string, b: string | undefined) => {
        const o = await send(server, token, route.method, p, route.method === 'GET' ? undefined : b);
        requests++;
        slowest = Math.max(slowest, o.ms);
        expectSafe(o);
        if (route.auth !== 'none') expect(o.mode, o.what).toBe(mode);
        if (sandboxForLive) {
          expect(o.status, o.what).toBe(403);
          expect(o.body.error, o.what).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(SANDBOX_REFUSAL) });
          refused++;
        }
      };
      if (sandboxForLive) await check(path({}, validQuery), body);
      for (const hostile of HOSTILE_URL) {
        for (const name of Object.keys(sample.params ?? {})) await check(path({ [name]: hostile }, validQuery), body);
        for (const name of [...Object.keys(sample.query ?? {}), 'unknown%00']) await check(path({}, { ...validQuery, [name]: hostile }), body);
      }
      if (route.method !== 'GET') {
        for (const variant of (bodies.length ? bodies : [{}]).flatMap(bodyVariants)) {
          for (const raw of variant.values) await check(path({}, validQuery), variant.make(raw));
        }
      }
    }
    if (mode === 'live') expect(refused, 'every sandbox route was tried').toBeGreaterThan(apiRoutes.filter((r) => r.path.startsWith('/api/sandbox/')).length * HOSTILE_URL.length);
    console.info(`[hostile REST ${kind} ${mode}] ${requests} requests${mode === 'live' ? ` (${refused} to the sandbox, all 403)` : ''}, slowest ${slowest.toFixed(0)} ms`);
  });

  it.each(MODES)('every GraphQL argument with a %s token: hostile variables and literals get a GraphQL error, never INTERNAL, fast', async (mode) => {
    const { token, ids } = await fixtures(mode);
    const known: Known = {
      id: ids.invoice, invoiceId: ids.invoice, eventId: ids.event, address: CHAIN[mode].address, clientEmail: 'a@b.co', webHookUrl: 'https://a.example/h',
      redirectURL: 'https://a.example/r', amount: '1', name: 'x', price: '1', since: '2026-01-01T00:00:00.000Z', minutes: 1,
    };
    const introspection = await server.graphql(getIntrospectionQuery());
    const schema = buildClientSchema(introspection.body.data);
    let requests = 0;
    let slowest = 0;
    let refused = 0;
    const post = async (payload: string) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: payload });
      const text = await res.text();
      const ms = performance.now() - started;
      requests++;
      slowest = Math.max(slowest, ms);
      const what = payload.slice(0, 300);
      expect(res.status, what).toBeLessThan(500);
      expect(ms, `${what} took ${ms.toFixed(0)} ms`).toBeLessThan(MAX_MS);
      const body = JSON.parse(text) as { data?: Record<string, { __typename?: string } | null>; errors?: { extensions?: { code?: string } }[] };
      for (const e of body.errors ?? []) expect(e.extensions?.code, `${what}\n${text.slice(0, 500)}`).not.toBe('INTERNAL');
      // A sandbox mutation that got past graphql-js's own coercion refuses a live token before it reads its input.
      for (const [field, result] of Object.entries(body.data ?? {})) {
        if (mode !== 'live' || !/Sandbox/.test(field) || !result) continue;
        expect(result.__typename, `${what}\n${text.slice(0, 500)}`).toBe('ForbiddenError');
        refused++;
      }
    };
    // Subscriptions over SSE: the first event (an error, or the first message of one that stays open) is read,
    // then the stream is closed. Only a refusal has to be fast; an open subscription waits for changes.
    const subscribe = async (payload: string) => {
      const started = performance.now();
      const controller = new AbortController();
      const res = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: payload,
        signal: controller.signal,
      });
      const what = payload.slice(0, 300);
      expect(res.status, what).toBeLessThan(500);
      let text = '';
      const timer = setTimeout(() => controller.abort(), 1_500);
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          text += Buffer.from(chunk).toString('utf8');
          if (text.includes('\n\n') && !text.startsWith(':')) break;
        }
      } catch {
        // closed by the timer: the subscription is open and quiet
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
      requests++;
      const results = text.startsWith('{') ? [text] : text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
      for (const result of results) {
        const body = JSON.parse(result) as { errors?: { extensions?: { code?: string } }[] };
        for (const e of body.errors ?? []) expect(e.extensions?.code, `${what}\n${result.slice(0, 500)}`).not.toBe('INTERNAL');
        if (body.errors?.length) {
          const ms = performance.now() - started;
          slowest = Math.max(slowest, ms);
          expect(ms, `${what} took ${ms.toFixed(0)} ms`).toBeLessThan(MAX_MS);
        }
      }
    };
    const roots = [
      ['query', schema.getQueryType()!, post],
      ['mutation', schema.getMutationType()!, post],
      ['subscription', schema.getSubscriptionType()!, subscribe],
    ] as const;
    let argumentsSeen = 0;
    for (const [kind, root, send] of roots) {
      for (const field of Object.values(root.getFields())) {
        if (field.args.length === 0 || field.name.startsWith('__')) continue;
        const operation = operationFor(schema, kind, field);
        const variables = Object.fromEntries(field.args.map((a) => [a.name, plausible(a.type, known, a.name)]));
        for (const arg of field.args) {
          for (const slot of slots(arg.type)) {
            argumentsSeen++;
            const hostile = { ...variables, [arg.name]: withHostileAt(variables[arg.name], arg.type, slot.path, known) };
            for (const raw of hostileFor(slot.type)) await send(JSON.stringify({ query: operation, variables: hostile }).replace(MARK, raw));
          }
        }
        // The same hostile values as literals in the document, for the top-level arguments.
        for (const arg of field.args) {
          for (const literal of ['"a\\u0000b"', '1e10000000', '1e-10000000', '1e21', '"0000-01-01T00:00:00Z"', `"${b64('GPC:N:1e400')}"`, '99999999999', `"${'x'.repeat(20_000)}"`]) {
            const args = field.args.map((a) => (a === arg ? `${a.name}: ${literal}` : `${a.name}: $${a.name}`)).join(', ');
            const defs = field.args.filter((a) => a !== arg).map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
            const named = getNamedType(field.type);
            const selection = isScalarType(named) || isEnumType(named) ? '' : ' { __typename }';
            const doc = `${kind}${defs ? `(${defs})` : ''} { ${field.name}(${args})${selection} }`;
            await send(JSON.stringify({ query: doc, variables }));
          }
        }
      }
    }
    expect(argumentsSeen).toBeGreaterThan(40);
    if (mode === 'live') expect(refused, 'sandbox mutations were reached with a live token').toBeGreaterThan(50);
    console.info(`[hostile GraphQL ${kind} ${mode}] ${requests} requests over ${argumentsSeen} argument paths${mode === 'live' ? ` (${refused} sandbox mutations refused)` : ''}, slowest ${slowest.toFixed(0)} ms`);
  });

  it('invalid UTF-8 over GraphQL: HTTP answers 400 MALFORMED_REQUEST, WebSocket closes 1007; nothing is stored', async () => {
    const { token } = await fixtures();
    const db = server.app.db.prisma;
    const before = await rowsWithReplacementCharacter(db);
    const mutation =
      'mutation($input: CreateStaticAddressInput!) { createStaticAddress(input: $input) { __typename ... on CreateStaticAddressSuccess { staticAddress { internalUserId } } } }';
    const payload = JSON.stringify({ query: mutation, variables: { input: { asset: 'TRC20USDT', internalUserId: '__HOSTILE__' } } });
    const expectMalformed = async (res: Response, what: string) => {
      const text = await res.text();
      expect(res.status, `${what}: ${text}`).toBe(400);
      const body = (text.startsWith('{') ? JSON.parse(text) : JSON.parse(text.split('\n').find((l) => l.startsWith('data: {'))!.slice(6))) as { errors: { message: string; extensions: { code: string } }[] };
      expect(body.errors.map((e) => e.extensions.code), what).toEqual(['MALFORMED_REQUEST']);
      expect(body.errors[0]!.message, what).toMatch(/is not valid UTF-8$/);
    };
    const post = (body: Buffer | string, contentType = 'application/json', accept = 'application/graphql-response+json') =>
      fetch(`${server.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept }, body: typeof body === 'string' ? body : new Uint8Array(body) });

    // The reviewer's case: REST refuses it; GraphQL over HTTP and over both kinds of WebSocket frame refuses it the same.
    const rest = await fetch(`${server.url}/api/static-addresses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: new Uint8Array(withBadBytes('{"asset":"trc20usdt","internalUserId":"__HOSTILE__"}', BAD_UTF8[0]!)),
    });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as ErrorBody).error).toMatchObject({ code: 'MALFORMED_REQUEST', message: 'The request body is not valid UTF-8' });
    for (const bytes of BAD_UTF8) {
      await expectMalformed(await post(withBadBytes(payload, bytes)), `POST ${bytes}`);
      await expectMalformed(await post(withBadBytes(payload, bytes), 'application/json', 'text/event-stream'), `POST (SSE) ${bytes}`);
      for (const binary of [false, true]) {
        const ws = await overWebSocket(server, token, withBadBytes(subscribeMessage(payload), bytes), binary);
        expect(ws, `${binary ? 'binary' : 'text'} frame ${bytes}`).toEqual({ closed: { code: 1007, reason: 'The message is not valid UTF-8' }, answers: [] });
      }
    }
    // Anywhere in the request: a key, the document, the operation name; a form body, a GraphQL body, a query string.
    const bad = Buffer.from(BAD_UTF8[0]!);
    await expectMalformed(await post(Buffer.concat([Buffer.from('{"query":"{ __typename }","variables":{"k'), bad, Buffer.from('":1}}')])), 'a key');
    await expectMalformed(await post(Buffer.concat([Buffer.from('{"query":"{ __typename } #'), bad, Buffer.from('"}')])), 'the document');
    await expectMalformed(await post(Buffer.concat([Buffer.from('{"query":"query Q { __typename }","operationName":"Q'), bad, Buffer.from('"}')])), 'the operation name');
    await expectMalformed(await post(Buffer.concat([Buffer.from('{ __typename } #'), bad]), 'application/graphql'), 'an application/graphql body');
    await expectMalformed(await post(Buffer.concat([Buffer.from('query=%7B__typename%7D%23'), bad]), 'application/x-www-form-urlencoded'), 'a form body with raw bytes');
    await expectMalformed(await post('query=%7B__typename%7D%23%FF%ED%A0%80', 'application/x-www-form-urlencoded'), 'a form body with escapes');
    const variables = encodeURIComponent(JSON.stringify({ id: '__X__' })).replace('__X__', 'x%ED%A0%80');
    const get = (query: string, accept = 'application/json') => fetch(`${server.url}/graphql?${query}`, { headers: { authorization: `Bearer ${token}`, accept } });
    await expectMalformed(await get(`query=${encodeURIComponent('query($id: String!) { invoice(id: $id) { id } }')}&variables=${variables}`), 'GET variables');
    await expectMalformed(await get('query=%7B__typename%7D%23%F0%9F'), 'GET query');
    await expectMalformed(await get('query=%7B__typename%7D&operationName=%C0%AF'), 'GET operation name');
    await expectMalformed(
      await get(`query=${encodeURIComponent('subscription($id: ID!) { invoiceStatusChanged(id: $id) { status } }')}&variables=${variables}`, 'text/event-stream'),
      'GET subscription (SSE)',
    );
    // GET variables that are not JSON are the client's mistake too (they were a 500 before).
    const notJson = await get('query=%7B__typename%7D&variables=%7Bx');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('MALFORMED_REQUEST');

    // Every argument of every operation, one position at a time, over HTTP and WebSocket (text and binary frames).
    const introspection = await server.graphql(getIntrospectionQuery());
    const schema = buildClientSchema(introspection.body.data);
    let positions = 0;
    for (const [kind, root] of [['query', schema.getQueryType()!], ['mutation', schema.getMutationType()!], ['subscription', schema.getSubscriptionType()!]] as const) {
      for (const field of Object.values(root.getFields())) {
        if (field.args.length === 0 || field.name.startsWith('__')) continue;
        const operation = operationFor(schema, kind, field);
        const valid = Object.fromEntries(field.args.map((a) => [a.name, plausible(a.type, {}, a.name)]));
        for (const arg of field.args) {
          for (const slot of slots(arg.type)) {
            const bytes = BAD_UTF8[positions++ % BAD_UTF8.length]!;
            const json = JSON.stringify({ query: operation, variables: { ...valid, [arg.name]: withHostileAt(valid[arg.name], arg.type, slot.path, {}) } });
            const what = `${field.name} ${arg.name}.${slot.path.join('.')} ${bytes}`;
            if (kind !== 'subscription') await expectMalformed(await post(withBadBytes(json, bytes)), what);
            const ws = await overWebSocket(server, token, withBadBytes(subscribeMessage(json), bytes), positions % 2 === 0);
            expect(ws.closed, what).toEqual({ code: 1007, reason: 'The message is not valid UTF-8' });
          }
        }
      }
    }
    expect(positions).toBeGreaterThan(40);
    console.info(`[invalid UTF-8 ${kind}] ${positions} argument positions over HTTP and WebSocket`);

    // None of it reached the database; the same requests with valid text do (over each transport).
    expect(await rowsWithReplacementCharacter(db)).toBe(before);
    const stored = async () => (await db.staticAddress.findMany({ where: { internalUserId: { startsWith: 'bad-utf8-' } } })).map((a) => a.internalUserId).sort();
    expect(await stored()).toEqual([]);
    const valid = (name: string) => payload.replace(MARK, JSON.stringify(name));
    expect(await (await post(valid('bad-utf8-none-http'))).json()).toMatchObject({ data: { createStaticAddress: { staticAddress: { internalUserId: 'bad-utf8-none-http' } } } });
    for (const binary of [false, true]) {
      const ws = await overWebSocket(server, token, Buffer.from(subscribeMessage(valid(`bad-utf8-none-ws-${binary}`))), binary);
      expect(ws.closed).toBeNull();
      expect(ws.answers[0]).toMatchObject({ type: 'next', payload: { data: { createStaticAddress: { staticAddress: { internalUserId: `bad-utf8-none-ws-${binary}` } } } } });
    }
    expect(await stored()).toEqual(['bad-utf8-none-http', 'bad-utf8-none-ws-false', 'bad-utf8-none-ws-true']);
  });

  it('the pages: hostile invoice ids, QR paths and ?lang= get a 404 or the page, never a 5xx, fast', async () => {
    const { ids } = await fixtures();
    let requests = 0;
    for (const hostile of [...HOSTILE_URL, ids.invoice]) {
      for (const path of [`/pay/${hostile}`, `/pay/${hostile}/qr.svg`, `/pay/${ids.invoice}?lang=${hostile}`, `/dashboard?lang=${hostile}`, `/assets/${hostile}`]) {
        const started = performance.now();
        const res = await fetch(`${server.url}${path}`, { headers: { 'accept-language': decodeURIComponentSafe(hostile) } });
        await res.arrayBuffer();
        requests++;
        expect(res.status, path).toBeLessThan(500);
        expect(performance.now() - started, path).toBeLessThan(MAX_MS);
        expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      }
    }
    console.info(`[hostile pages ${kind}] ${requests} requests`);
  });

  it('sums of the largest accepted amounts on one balance or invoice: a 4xx naming the limit, never a 500 (no column overflows)', async () => {
    const m = await server.merchant();
    const token = m.publicToken;
    const post = async (path: string, json: unknown) => {
      const o = await send(server, token, 'POST', path, JSON.stringify(json));
      expectSafe(o);
      return o;
    };
    // Set-up through the ordinary client (a first address allocation may be slow on a cold server); the amounts are fuzzed.
    const created = await server.request('POST', '/api/static-addresses', { token, json: { asset: 'trx', internalUserId: 'whale' } });
    expect(created.status, created.text).toBe(201);
    const address = created.body as { id: string; address: string };
    const confirmations = PAYMENT_CURRENCY_INFO.trx.confirmations;
    // The largest amount a sandbox transfer takes, found by asking, from the column's largest value down.
    let largest: string | null = null;
    for (const candidate of AMOUNT_CANDIDATES) {
      const o = await post('/api/sandbox/transfers', { address: address.address, amount: candidate });
      if (o.status === 201) {
        largest = candidate;
        break;
      }
    }
    expect(largest, 'some large amount is accepted').not.toBeNull();
    const amount = new Money(largest!);
    const limitRefusals: string[] = [];
    const repeat = async (what: string, times: number, json: () => Record<string, unknown>) => {
      for (let i = 0; i < times; i++) {
        const o = await post('/api/sandbox/transfers', json());
        if (o.status >= 400) limitRefusals.push(`${what}: ${o.body.error.message}`);
      }
    };
    // Credits start where the service lets a balance be (just below its maximum) and go on past it, so that every
    // column that sums them (balance shards, the platform's accounts, an invoice's paid and overpaid totals) is pushed.
    const start = (room: Money) => Money.max(MAX_BALANCE.minus(room), 0);
    await bookDirectly(server, m.companyId, 'trx', start(amount.times(2.5)).toFixed());
    await repeat('deposits final at once', 4, () => ({ address: address.address, amount: largest, confirmations }));
    // Seen first, each confirmed later.
    for (let i = 0; i < 3; i++) {
      const seen = await post('/api/sandbox/transfers', { address: address.address, amount: largest });
      if (seen.status === 201) {
        const confirmed = await post(`/api/sandbox/transfers/${seen.body.id}/confirm`, {});
        if (confirmed.status >= 400) limitRefusals.push(`a deposit confirmed later: ${confirmed.body.error.message}`);
      }
    }
    // One invoice paid over and over, and the invoices of a second merchant paid in full, on one balance.
    const other = await server.merchant();
    await bookDirectly(server, other.companyId, 'trx', start(amount.times(2.5)).toFixed());
    for (const [merchant, times, invoices] of [[m, 5, 1], [other, 1, 5]] as const) {
      for (let n = 0; n < invoices; n++) {
        const invoice = await server.request('POST', '/api/invoices/v1/regular', { token: merchant.publicToken, json: { invoiceCurrency: 'usd', items: [{ name: 'x', price: 1 }] } });
        const id = invoice.body.id as string;
        const proceeded = await server.request('POST', `/api/invoices/v1/regular/${id}/proceed`, { json: { clientEmail: 'a@b.co', paymentCurrency: 'trx' } });
        expect(proceeded.status, proceeded.text).toBe(200);
        for (let i = 0; i < times; i++) {
          const o = await send(server, merchant.publicToken, 'POST', '/api/sandbox/transfers', JSON.stringify({ invoiceId: id, amount: largest, confirmations }));
          expectSafe(o);
          if (o.status >= 400) limitRefusals.push(`invoice payments: ${o.body.error.message}`);
        }
      }
    }
    // A withdraw call of several of the largest items (one hold journal sums them), on the balance at its highest.
    const items = Array.from({ length: 10 }, () => ({ amount: largest, tag: '', to: TRON_ADDRESS, asset: 'trx' }));
    await post('/api/transactions/withdraw', { items });
    // Nothing ever exceeds the limit, and a refusal says which limit it met.
    for (const who of [m, other]) {
      const balances = await send(server, who.publicToken, 'GET', '/api/company/balances');
      for (const b of balances.body.balances as { available: string; held: string }[]) {
        expect(new Money(b.available).plus(b.held).lte(MAX_BALANCE), JSON.stringify(b)).toBe(true);
      }
    }
    expect(limitRefusals.length, 'the sums reached the limit').toBeGreaterThan(0);
    for (const message of limitRefusals) expect(message).toContain(MAX_BALANCE.toFixed());
  });

  it('forged connection cursors are refused as invalid input', async () => {
    const { token } = await fixtures();
    for (const after of [b64('GPC:N:1e400'), b64('GPC:S:\u0000'), b64('GPC:S:not-an-id'), b64('GPC:I:1'), b64('nope'), '!!!', b64('GPC:S:' + 'x'.repeat(5000))]) {
      const res = await server.graphql('query($after: String) { invoices(first: 5, after: $after) { edges { cursor } } }', { after }, token);
      expect(res.status, after).toBeLessThan(500);
      expect(res.body.errors?.[0]?.extensions?.code, after).toBe('VALIDATION_FAILED');
    }
  });
});
