// The typed REST client: openapi-fetch over the types openapi-typescript generated from Payrail's openapi.json.
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/openapi.ts';

export type { paths, components } from './generated/openapi.ts';
export type PayrailClient = Client<paths>;

/** A client of one Payrail server, authenticated with a merchant's public token (or a restricted API key). */
export function createPayrailClient(options: { baseUrl: string; token?: string; fetch?: typeof fetch }): PayrailClient {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
