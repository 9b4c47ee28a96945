// The pages' GraphQL client: the public API over fetch (documents typed by codegen as plain strings) and live
// updates over graphql-ws, resuming from the last cursor after a reconnection and falling back to polling when no
// WebSocket gets through.
import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from '../../../../generated/gql-web/graphql.ts';

export class GraphqlError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

interface Result<R> {
  data?: R | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

const endpoint = () => new URL('/graphql', window.location.href);

/**
 * Runs a query or mutation; GraphQL errors throw (a typed error result of a mutation is data, not an error).
 * `authorization`: the header's value, e.g. `Session test` (the dashboard's session cookie of that mode).
 */
export async function request<R, V>(document: TypedDocumentString<R, V>, variables: V, authorization?: string | null): Promise<R> {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ query: document.toString(), variables }),
  });
  const result = (await response.json().catch(() => ({}))) as Result<R>;
  const first = result.errors?.[0];
  if (first || !result.data) throw new GraphqlError(first?.message ?? `HTTP ${response.status}`, first?.extensions?.code ?? null);
  return result.data;
}

export interface LiveOptions<R> {
  /** As for `request`: the Authorization value the connection initialises with. */
  authorization?: string | null;
  onData(data: R): void;
  /** No WebSocket gets through (a proxy, a firewall): the page polls instead. */
  onUnavailable?(): void;
  onError?(error: GraphqlError): void;
}

let shared: { client: Client; authorization: string | null } | null = null;

/** Closes the live connection (sign-out): nothing more arrives for the old token. */
export function closeLive(): void {
  shared?.client.dispose();
  shared = null;
}

function clientFor(authorization: string | null): Client {
  if (shared && shared.authorization === authorization) return shared.client;
  shared?.client.dispose();
  const url = endpoint();
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const client = createClient({
    url: url.href,
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 3,
    retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, 500 * 2 ** retries)),
    // A refused connection is worth retrying too, not only a closed one.
    shouldRetry: () => true,
  });
  shared = { client, authorization };
  return client;
}

/**
 * Subscribes `document`. The variables object is sent again on every reconnection, with `after` set to the cursor
 * of the last message: nothing is missed while the connection was down (docs/live.md).
 */
export function live<R, V extends { after?: string | null }>(document: TypedDocumentString<R, V>, variables: V, options: LiveOptions<R>): () => void {
  return clientFor(options.authorization ?? null).subscribe<R>(
    { query: document.toString(), variables: variables as Record<string, unknown> },
    {
      next: (result) => {
        const cursor = (result.extensions as { cursor?: string } | undefined)?.cursor;
        if (cursor) variables.after = cursor;
        const first = result.errors?.[0];
        if (first) return options.onError?.(new GraphqlError(first.message, (first.extensions?.['code'] as string | undefined) ?? null));
        if (result.data) options.onData(result.data);
      },
      error: (error) => {
        if (Array.isArray(error)) {
          const first = error[0] as { message?: string; extensions?: { code?: string } } | undefined;
          options.onError?.(new GraphqlError(first?.message ?? 'subscription failed', first?.extensions?.code ?? null));
        } else {
          // The socket never came up, or went away for good after the retries.
          options.onUnavailable?.();
        }
      },
      complete: () => {},
    },
  );
}
