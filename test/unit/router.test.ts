// The REST router matches a route's literal parts literally and its parameters by segment.
import { describe, expect, it } from 'vitest';
import { route, Router } from '../../src/http/router.ts';

const handler = async () => ({ status: 200, body: null });

describe('Router', () => {
  const router = new Router<unknown>().add(
    route({ method: 'GET', path: '/api/openapi.json', auth: 'none', handler }),
    route({ method: 'GET', path: '/api/things/:id/export.csv', auth: 'none', handler }),
  );

  it('matches a dot in a path as a dot, not as any character', () => {
    expect(router.match('GET', '/api/openapi.json').kind).toBe('found');
    expect(router.match('GET', '/api/openapiXjson').kind).toBe('not-found');
    expect(router.match('GET', '/api/things/t1/exportXcsv').kind).toBe('not-found');
  });

  it('takes a parameter from one segment, decoded, and names the methods a path has', () => {
    expect(router.match('GET', '/api/things/a%20b/export.csv')).toMatchObject({ kind: 'found', params: { id: 'a b' } });
    expect(router.match('GET', '/api/things/a/b/export.csv').kind).toBe('not-found');
    expect(router.match('POST', '/api/openapi.json')).toEqual({ kind: 'method-not-allowed', allow: ['GET'] });
  });
});
