import { describe, expect, it } from 'vitest';
import { DATABASES } from '../support/databases.ts';
import { sampleInvoice, useServer } from '../support/server.ts';

// Deterministic pseudo-random values, so a failure reproduces.
function* values(seed: number): Generator<unknown> {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const atoms: unknown[] = [null, true, false, 0, -1, 1e308, -1e-308, 'x', '', '💸', 'a'.repeat(5000), '1.5', '-0', [], {}, 'usd', 'btc', 'ton'];
  const make = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.5) return atoms[Math.floor(next() * atoms.length)];
    if (r < 0.75) return Array.from({ length: Math.floor(next() * 4) }, () => make(depth + 1));
    const keys = ['invoiceCurrency', 'items', 'name', 'price', 'paymentCurrency', 'isMerchantPaysFee', 'redirectURL', 'clientEmail', '__proto__', 'constructor'];
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, () => [keys[Math.floor(next() * keys.length)]!, make(depth + 1)]));
  };
  for (;;) yield make(0);
}

describe.each(DATABASES)('no input makes the server answer 5xx (%s)', (kind) => {
  const server = useServer(kind);

  it('survives random JSON on every write endpoint with a consistent 4xx error shape', async () => {
    const m = await server.merchant();
    const created = await server.request('POST', '/api/invoices/v1/regular', { token: m.publicToken, json: sampleInvoice() });
    const gen = values(42);
    const targets = ['/api/invoices/v1/regular', `/api/invoices/v1/regular/${created.body.id}/proceed`];
    for (let i = 0; i < 120; i++) {
      const body = gen.next().value;
      const path = targets[i % 2]!;
      const res = await server.request('POST', path, { token: m.publicToken, json: body });
      expect(res.status, `${path} ${JSON.stringify(body)?.slice(0, 200)}`).toBeLessThan(500);
      if (res.status >= 400) {
        expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message', 'requestId']);
      }
    }
  });

  it('answers odd paths, methods, encodings and headers with 4xx', async () => {
    const m = await server.merchant();
    const cases: [string, string, Record<string, string>, string | undefined][] = [
      ['GET', '/api/invoices/v1/regular/%E0%A4%A', {}, undefined],
      ['GET', `/api/invoices/v1/regular/${'z'.repeat(5000)}`, {}, undefined],
      ['POST', '/api/invoices/v1/regular', { 'content-type': 'application/json', authorization: `Bearer ${m.publicToken}` }, '\u0000'],
      ['POST', '/api/invoices/v1/regular', { 'content-type': 'application/json', authorization: `Bearer ${m.publicToken}` }, 'null'],
      ['POST', '/api/invoices/v1/regular', { 'content-type': 'application/json', authorization: `Bearer ${'x'.repeat(10_000)}` }, '{}'],
      ['PUT', '/api/invoices/v1/regular', {}, undefined],
      ['POST', '/graphql', { 'content-type': 'application/json' }, '{"query":'],
      ['POST', '/graphql', { 'content-type': 'application/json' }, '{"query":"{ invoice(id: 1) { id } }"}'],
      ['GET', '/nothing', {}, undefined],
    ];
    for (const [method, path, headers, body] of cases) {
      const res = await server.request(method, path, { headers, body });
      expect(res.status, `${method} ${path.slice(0, 80)}`).toBeLessThan(500);
    }
  });

  it('answers a body with invalid UTF-8 with 400', async () => {
    const m = await server.merchant();
    const res = await fetch(`${server.url}/api/invoices/v1/regular`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${m.publicToken}` },
      body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(res.status).toBe(400);
  });
});
