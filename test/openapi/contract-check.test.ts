// The response check every black-box test runs (test/support/contract.ts) catches what it must: an undocumented
// status, a body off its schema, a wrong content type, a success for a request no route matches, and it names the
// operation, the status and the schema errors when it does.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { route } from '../../src/http/router.ts';
import { buildOpenApiDocument } from '../../src/openapi/document.ts';
import { checkApiExchange, compileContract, ContractViolation, currentContract, type ApiExchange } from '../support/contract.ts';

const thing = z.strictObject({ id: z.string(), amount: z.string().regex(/^\d+$/) }).meta({ id: 'ContractTestThing' });
const handler = async () => ({ status: 200, body: null });
const contract = compileContract(
  buildOpenApiDocument(
    [
      route({
        method: 'GET',
        path: '/api/things/:id',
        auth: 'required',
        doc: { operationId: 'getThing', summary: 'A thing', tag: 'Things', params: { id: z.string() }, responses: { 200: { description: 'It.', schema: thing } }, errors: [404] },
        handler,
      }),
      route({
        method: 'GET',
        path: '/api/things/:id/export.csv',
        auth: 'required',
        doc: {
          operationId: 'exportThing',
          summary: 'A thing as CSV',
          tag: 'Things',
          params: { id: z.string() },
          responses: { 200: { description: 'It, streamed.', contentType: 'text/csv; charset=utf-8' } },
        },
        handler,
      }),
      route({
        method: 'POST',
        path: '/api/things/:id/poke',
        auth: 'none',
        doc: { operationId: 'pokeThing', summary: 'Poke', tag: 'Things', params: { id: z.string() }, responses: { 204: { description: 'Poked.' } } },
        handler,
      }),
    ],
    { tags: [{ name: 'Things', description: 'Things.' }] },
  ) as unknown as Record<string, unknown>,
);

const json = 'application/json; charset=utf-8';
const error = (code: string) => JSON.stringify({ error: { code, message: 'm', details: [], requestId: 'r' } });
const check = (x: Partial<ApiExchange>) => () => checkApiExchange({ method: 'GET', path: '/api/things/t1', status: 200, contentType: json, text: '{}', ...x }, contract);

describe('the contract check', () => {
  it('passes documented answers: JSON bodies of their schema, errors of the Error shape, a CSV by its content type, an empty 204', () => {
    expect(check({ text: JSON.stringify({ id: 't1', amount: '5' }) })).not.toThrow();
    expect(check({ status: 404, text: error('NOT_FOUND') })).not.toThrow();
    expect(check({ status: 401, text: error('UNAUTHENTICATED') })).not.toThrow();
    expect(check({ path: '/api/things/t1/export.csv?from=2026-01-01', contentType: 'text/csv; charset=utf-8', text: 'a,b\n1,2\n' })).not.toThrow();
    expect(check({ method: 'POST', path: '/api/things/t1/poke', status: 204, contentType: null, text: '' })).not.toThrow();
    // Outside /api/ nothing is checked; a preflight is a 204 without a body.
    expect(check({ path: '/health', text: 'anything' })).not.toThrow();
    expect(check({ method: 'OPTIONS', status: 204, contentType: null, text: '' })).not.toThrow();
  });

  it('refuses a 500 anywhere under /api/, documented or not: no request of a test may cause one', () => {
    expect(check({ status: 500, text: error('INTERNAL') })).toThrow(/GET \/api\/things\/t1 answered 500 INTERNAL, a bug/);
    expect(check({ path: '/api/nowhere', status: 500, text: error('INTERNAL') })).toThrow(/answered 500 INTERNAL, a bug/);
  });

  it('refuses a status the operation does not list, naming the operation and the statuses it lists', () => {
    expect(check({ status: 409, text: error('CONFLICT') })).toThrow(ContractViolation);
    expect(check({ status: 409, text: error('CONFLICT') })).toThrow(/getThing \(GET \/api\/things\/\{id\}\) answered 409, which the document does not list \(it lists 200, 401, 404, 422, 429, 500, 503\)/);
  });

  it('refuses a body off its schema with the Ajv errors: a missing field, an extra field, a wrong pattern', () => {
    expect(check({ text: JSON.stringify({ id: 't1' }) })).toThrow(/getThing .* answered 200 with a body that does not match the document: \(body\) must have required property 'amount'/);
    expect(check({ text: JSON.stringify({ id: 't1', amount: '5', secret: 'x' }) })).toThrow(/must NOT have additional properties .*"additionalProperty":"secret"/);
    expect(check({ text: JSON.stringify({ id: 't1', amount: '5.5' }) })).toThrow(/\/amount must match pattern/);
    expect(check({ status: 404, text: JSON.stringify({ message: 'no' }) })).toThrow(/answered 404 with a body that does not match the document/);
    expect(check({ text: 'not json' })).toThrow(/the body is not JSON/);
  });

  it('refuses an answer whose content type is not the documented one, and a body where none is documented', () => {
    expect(check({ contentType: 'text/plain', text: '{}' })).toThrow(/answered 200 with text\/plain; the document has application\/json/);
    expect(check({ path: '/api/things/t1/export.csv', contentType: json, text: '{}' })).toThrow(/exportThing .* the document has text\/csv; charset=utf-8/);
    expect(check({ method: 'POST', path: '/api/things/t1/poke', status: 204, text: 'x' })).toThrow(/pokeThing .* answered 204 with a body, where the document has none/);
  });

  it('holds a request no operation matches to the Error shape', () => {
    expect(check({ path: '/api/nothing', status: 404, text: error('NOT_FOUND') })).not.toThrow();
    expect(check({ method: 'DELETE', status: 405, text: error('METHOD_NOT_ALLOWED') })).not.toThrow();
    expect(check({ path: '/api/nothing', status: 200, text: '{}' })).toThrow(/GET \/api\/nothing \(no documented operation\) answered 200: only an error may answer/);
    expect(check({ path: '/api/nothing', status: 404, text: '{"error":"nope"}' })).toThrow(/not the Error shape/);
    expect(check({ method: 'OPTIONS', status: 200, text: 'x' })).toThrow(/a preflight answers 204/);
  });

  it('is compiled from the real document, in which every operation lists what it answers', () => {
    const real = currentContract();
    expect(real.operations.length).toBeGreaterThanOrEqual(33);
    expect(() =>
      checkApiExchange({ method: 'GET', path: '/api/invoices/v1/regular/x', status: 200, contentType: json, text: JSON.stringify({ id: 'x' }) }, real),
    ).toThrow(/getInvoice \(GET \/api\/invoices\/v1\/regular\/\{id\}\) answered 200 with a body that does not match the document: \(body\) must have required property 'status'/);
  });
});
