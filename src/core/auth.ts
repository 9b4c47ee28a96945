// Who is calling: the merchant behind a bearer token, resolved the same way for REST and GraphQL; and whether a
// credential still holds, for connections that outlive the request they authenticated with (live updates).
import type { Company } from '../../generated/prisma/client.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { CREDENTIALS_CHANGED } from '../domain/event-types.ts';
import { UnauthenticatedError } from '../errors/app-error.ts';
import { EVENTS_CHANNEL } from './bus.ts';
import { recordEvent } from './events.ts';
import { digestsEqual, hashToken } from './tokens.ts';

export type { Company };

/**
 * What a caller authenticated with. Today a merchant has one public token; per-mode tokens and API keys will be
 * further kinds, checked by `credentialValid`.
 */
export interface Credential {
  kind: 'public-token';
  companyId: string;
  /** SHA-256 of the token (the stored form: the token itself is never kept). */
  digest: string;
}

/** A caller and the credential it authenticated with. */
export interface Authenticated {
  company: Company;
  credential: Credential;
}

/** The same credential: connections that share one are checked once. */
export const credentialKey = (c: Credential): string => `${c.kind}:${c.companyId}:${c.digest}`;

/**
 * Whether `credential` still authenticates its company, read from the database now (no cache): THE check of a
 * credential that was valid when a connection opened. A kind of credential added later is checked here.
 */
export async function credentialValid(db: Db, credential: Credential): Promise<boolean> {
  switch (credential.kind) {
    case 'public-token': {
      const company = await db.company.findUnique({ where: { publicTokenHash: credential.digest }, select: { id: true } });
      return company?.id === credential.companyId;
    }
  }
}

/**
 * Records, in the transaction that changed them, that a company's credentials changed (a token rotated; later a key
 * revoked): every process's event bus publishes it once committed, and each ends the live connections whose
 * credential no longer holds and drops its cached lookups. The event is internal: no webhook, not in the feed.
 * The writer may be a CLI without a bus of its own: the NOTIFY, sent by the database at commit, wakes the others.
 */
export async function recordCredentialsChanged(tx: Prisma.TransactionClient, companyId: string, reason: string): Promise<void> {
  await recordEvent(tx, { type: CREDENTIALS_CHANGED, companyId, subject: { type: 'company', id: companyId }, payload: { companyId, reason }, deliver: false });
  await tx.$executeRawUnsafe(`NOTIFY ${EVENTS_CHANNEL}`);
}

/** `Authorization: Bearer <token>` -> token; null when absent; 401 when present but not Bearer. */
export function bearerToken(header: string | null | undefined): string | null {
  if (header == null || header === '') return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) throw new UnauthenticatedError('The Authorization header must be `Bearer <public token>`');
  return m[1]!;
}

/**
 * Resolves bearer tokens to companies. Lookups are cached briefly because every merchant call needs one; a
 * company's entries are dropped as soon as its credentials change (`forget`, on every instance through the bus).
 */
export class TokenAuthenticator {
  private readonly cache = new Map<string, { company: Company; until: number }>();
  /** Counts `forget` calls: a lookup that a change overtook is not cached (it may have read the old row). */
  private forgotten = 0;
  constructor(
    private readonly db: Db,
    /** SANDBOX=1: test-mode tokens are accepted (docs/modes.md). */
    private readonly testMode = true,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticate(token: string): Promise<Authenticated | null> {
    if (token.length === 0 || token.length > 200) return null;
    const digest = hashToken(token);
    const credential: Credential = { kind: 'public-token', companyId: '', digest };
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return { company: hit.company, credential: { ...credential, companyId: hit.company.id } };
    const before = this.forgotten;
    const company = await this.db.company.findUnique({ where: { publicTokenHash: digest } });
    // The index lookup already matched; compare again in constant time so no code path leaks timing.
    if (!company?.publicTokenHash || !digestsEqual(company.publicTokenHash, digest)) return null;
    if (this.forgotten === before) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(digest, { company, until: now + this.ttlMs });
    }
    return { company, credential: { ...credential, companyId: company.id } };
  }

  /**
   * The caller of a request from its Authorization header and what it authenticated with: null without one, 401
   * with a bad one. The one path both API surfaces and the live connections authenticate through.
   */
  async session(authorization: string | null | undefined): Promise<Authenticated | null> {
    const token = bearerToken(authorization);
    if (token === null) return null;
    const found = await this.authenticate(token);
    if (!found) {
      if (token.startsWith('sk_')) throw new UnauthenticatedError('This is a secret key (sk_…): it signs webhooks. Authenticate with the public token (pk_…) of the same mode');
      throw new UnauthenticatedError('The bearer token is not valid');
    }
    if (found.company.mode === 'test' && !this.testMode) throw new UnauthenticatedError('Test mode is off on this server (SANDBOX=0): use a live-mode token (pk_live_…)');
    return found;
  }

  /** The caller of a request (see `session`). */
  async caller(authorization: string | null | undefined): Promise<Company | null> {
    return (await this.session(authorization))?.company ?? null;
  }

  /** Whether `credential` still holds, from the database (never the cache). */
  stillValid(credential: Credential): Promise<boolean> {
    return credentialValid(this.db, credential);
  }

  /** A company's credentials changed: its cached lookups go, so the next call reads the database. `id`: a tenant's, or an account's (both modes). */
  forget(id: string): void {
    this.forgotten++;
    for (const [digest, entry] of this.cache) if (entry.company.id === id || entry.company.accountId === id) this.cache.delete(digest);
  }

  invalidate(): void {
    this.forgotten++;
    this.cache.clear();
  }
}
