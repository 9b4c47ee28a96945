// Helpers of the key, audit and payout-protection tests.
import { expect } from 'vitest';
import type { TestServer } from '../support/server.ts';

/** A restricted API key made over REST with the given token. */
export async function makeKey(server: TestServer, token: string, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await server.request('POST', '/api/company/api-keys', { token, json: { name: `key ${scopes.join(' ')}`, scopes, ...extra } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; name: string; token: string; scopes: string[]; createdAt: string; expiresAt: string | null; lastUsedAt: string | null };
}

