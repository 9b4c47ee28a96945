// Who is calling: the merchant behind a bearer token, resolved the same way for REST and GraphQL; and whether a
// credential still holds, for connections that outlive the request they authenticated with (live updates).
import type { Company } from '../../generated/prisma/client.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { CREDENTIALS_CHANGED } from '../domain/event-types.ts';
import { UnauthenticatedError } from '../errors/app-error.ts';
import { EVENTS_CHANNEL } from './bus.ts';
import { recordEvent } from './events.ts';
import { ALL_SCOPES, SCOPES, type Scope } from './scopes.ts';
import { digestsEqual, hashToken } from './tokens.ts';

export type { Company };

/**
 * What a caller authenticated with: the merchant's public token of one mode, or a restricted API key
 * (docs/security.md). Each kind is checked by `credentialValid`.
 */
export interface Credential {
  kind: 'public-token' | 'api-key' | 'session';
  companyId: string;
  /** SHA-256 of the token (the stored form: the token itself is never kept). */
  digest: string;
  /** An API key's id. */
  id?: string;
  /** When it stops holding by itself (an API key's expiry): live connections end then. */
  expiresAt?: Date | null;
}

/** A caller, the credential it authenticated with, and what that credential may do. */
export interface Authenticated {
  company: Company;
  credential: Credential;
  /** Every scope for the public token; an API key's own. */
  scopes: ReadonlySet<Scope>;
  /** The API key (id and name) when one authenticated; null for the public token. */
  key: { id: string; name: string } | null;
}

/** Scopes as stored, kept to the known ones (a scope removed from the code grants nothing). */
export const scopeSet = (stored: readonly string[]): ReadonlySet<Scope> => new Set(SCOPES.filter((s) => stored.includes(s)));

/** An API key holds now: not revoked, not past its expiry. */
export const keyHolds = (key: { revokedAt: Date | null; expiresAt: Date | null }, now = Date.now()): boolean =>
  key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now);

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
    case 'api-key': {
      const key = await db.apiKey.findUnique({ where: { tokenHash: credential.digest }, select: { id: true, companyId: true, revokedAt: true, expiresAt: true } });
      return key !== null && key.id === credential.id && key.companyId === credential.companyId && keyHolds(key);
    }
    case 'session': {
      const session = await db.dashboardSession.findUnique({ where: { tokenHash: credential.digest } });
      return session !== null && session.companyId === credential.companyId && (await sessionHolds(db, session));
    }
  }
}

/** The header value the dashboard sends instead of a token: its session cookie of that mode authenticates. */
export const SESSION_AUTHORIZATION = /^Session[ \t]+(test|live)[ \t]*$/i;
export const sessionCookieName = (mode: string) => `payrail_session_${mode}`;

/** A cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

type SessionRow = { companyId: string; via: string; credentialDigest: string; expiresAt: Date };

/** A dashboard session holds while it has not expired and the credential it was made with still holds. */
export async function sessionHolds(db: Db, s: SessionRow, now = Date.now()): Promise<boolean> {
  if (s.expiresAt.getTime() <= now) return false;
  if (s.via === 'api-key') {
    const key = await db.apiKey.findUnique({ where: { tokenHash: s.credentialDigest }, select: { companyId: true, revokedAt: true, expiresAt: true } });
    return key !== null && key.companyId === s.companyId && keyHolds(key, now);
  }
  const company = await db.company.findUnique({ where: { publicTokenHash: s.credentialDigest }, select: { id: true } });
  return company?.id === s.companyId;
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
  private readonly cache = new Map<string, { found: Authenticated; until: number }>();
  /** When this process last wrote each key's lastUsedAt (at most once a minute per key). */
  private readonly touched = new Map<string, number>();
  /** Counts `forget` calls: a lookup that a change overtook is not cached (it may have read the old row). */
  private forgotten = 0;
  constructor(
    private readonly db: Db,
    /** SANDBOX=1: test-mode tokens are accepted (docs/modes.md). */
    private readonly testMode = true,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
    /** Failures of the best-effort lastUsedAt write. */
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  async authenticate(token: string): Promise<Authenticated | null> {
    if (token.length === 0 || token.length > 200) return null;
    const digest = hashToken(token);
    const now = Date.now();
    const hit = this.cache.get(digest);
    // An expiry is checked on every call: a cached key is refused the moment it expires.
    if (hit && hit.until > now && (hit.found.credential.expiresAt == null || hit.found.credential.expiresAt.getTime() > now)) {
      if (hit.found.key) this.touch(hit.found.key.id, now);
      return hit.found;
    }
    const before = this.forgotten;
    const found = token.startsWith('rk_') ? await this.apiKey(digest, now) : await this.publicToken(digest);
    if (!found) return null;
    if (this.forgotten === before) {
      if (this.cache.size >= this.maxEntries) this.cache.clear();
      this.cache.set(digest, { found, until: now + this.ttlMs });
    }
    if (found.key) this.touch(found.key.id, now);
    return found;
  }

  private async publicToken(digest: string): Promise<Authenticated | null> {
    const company = await this.db.company.findUnique({ where: { publicTokenHash: digest } });
    // The index lookup already matched; compare again in constant time so no code path leaks timing.
    if (!company?.publicTokenHash || !digestsEqual(company.publicTokenHash, digest)) return null;
    return { company, credential: { kind: 'public-token', companyId: company.id, digest }, scopes: ALL_SCOPES, key: null };
  }

  private async apiKey(digest: string, now: number): Promise<Authenticated | null> {
    const key = await this.db.apiKey.findUnique({ where: { tokenHash: digest }, include: { company: true } });
    if (!key || !digestsEqual(key.tokenHash, digest) || !keyHolds(key, now)) return null;
    return {
      company: key.company,
      credential: { kind: 'api-key', companyId: key.companyId, digest, id: key.id, expiresAt: key.expiresAt },
      scopes: scopeSet(key.scopes),
      key: { id: key.id, name: key.name },
    };
  }

  /**
   * lastUsedAt, at most once a minute per key: this process writes at most once a minute, and the statement itself
   * skips a row another instance wrote less than a minute ago. Best effort: a failed write never fails the call.
   */
  private touch(keyId: string, now: number): void {
    if (now - (this.touched.get(keyId) ?? 0) < 60_000) return;
    if (this.touched.size >= this.maxEntries) this.touched.clear();
    this.touched.set(keyId, now);
    this.db.$executeRaw`UPDATE "ApiKey" SET "lastUsedAt" = now() WHERE "id" = ${keyId}::uuid AND ("lastUsedAt" IS NULL OR "lastUsedAt" <= now() - interval '1 minute')`.catch(
      this.onError,
    );
  }

  /** The caller behind a dashboard session cookie (`Authorization: Session <mode>` selects which), or null. */
  async dashboardSession(cookie: string): Promise<Authenticated | null> {
    if (cookie.length === 0 || cookie.length > 200) return null;
    const digest = hashToken(cookie);
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now && hit.found.credential.expiresAt!.getTime() > now) return hit.found;
    const before = this.forgotten;
    const row = await this.db.dashboardSession.findUnique({ where: { tokenHash: digest }, include: { company: true } });
    if (!row || !digestsEqual(row.tokenHash, digest) || !(await sessionHolds(this.db, row, now))) return null;
    const key = row.via === 'api-key' ? await this.db.apiKey.findUnique({ where: { tokenHash: row.credentialDigest }, select: { id: true, name: true } }) : null;
    const found: Authenticated = {
      company: row.company,
      credential: { kind: 'session', companyId: row.companyId, digest, expiresAt: row.expiresAt },
      scopes: scopeSet(row.scopes),
      key,
    };
    if (this.forgotten === before) this.cache.set(digest, { found, until: now + this.ttlMs });
    return found;
  }

  /**
   * The caller of a request from its Authorization header and what it authenticated with: null without one, 401
   * with a bad one. The one path both API surfaces and the live connections authenticate through. `Session <mode>`
   * (the dashboard) authenticates with that mode's session cookie from `cookies`, the request's Cookie header: a
   * header a page of another site cannot set, so the cookie alone never authenticates (no CSRF).
   */
  async session(authorization: string | null | undefined, cookies?: string): Promise<Authenticated | null> {
    const dashboard = authorization ? SESSION_AUTHORIZATION.exec(authorization) : null;
    if (dashboard) {
      const cookie = cookieValue(cookies, sessionCookieName(dashboard[1]!.toLowerCase()));
      const found = cookie ? await this.dashboardSession(cookie) : null;
      if (!found) throw new UnauthenticatedError('The dashboard session ended: sign in again');
      return found;
    }
    const token = bearerToken(authorization);
    if (token === null) return null;
    const found = await this.authenticate(token);
    if (!found) {
      if (token.startsWith('rk_')) throw new UnauthenticatedError('The API key is not valid: unknown, revoked or expired');
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
    for (const [digest, entry] of this.cache) if (entry.found.company.id === id || entry.found.company.accountId === id) this.cache.delete(digest);
  }

  invalidate(): void {
    this.forgotten++;
    this.cache.clear();
  }
}
