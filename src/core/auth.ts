// Who is calling: the merchant behind a bearer token, resolved the same way for REST and GraphQL.
import type { Company } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { UnauthenticatedError } from '../errors/app-error.ts';
import { digestsEqual, hashToken } from './tokens.ts';

export type { Company };

/** `Authorization: Bearer <token>` -> token; null when absent; 401 when present but not Bearer. */
export function bearerToken(header: string | null | undefined): string | null {
  if (header == null || header === '') return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) throw new UnauthenticatedError('The Authorization header must be `Bearer <public token>`');
  return m[1]!;
}

/**
 * Resolves bearer tokens to companies. Lookups are cached briefly because every merchant call needs one;
 * rotations through this process drop the cache at once.
 */
export class TokenAuthenticator {
  private readonly cache = new Map<string, { company: Company; until: number }>();
  constructor(
    private readonly db: Db,
    /** SANDBOX=1: test-mode tokens are accepted (docs/modes.md). */
    private readonly testMode = true,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticate(token: string): Promise<Company | null> {
    if (token.length === 0 || token.length > 200) return null;
    const digest = hashToken(token);
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return hit.company;
    const company = await this.db.company.findUnique({ where: { publicTokenHash: digest } });
    // The index lookup already matched; compare again in constant time so no code path leaks timing.
    if (!company?.publicTokenHash || !digestsEqual(company.publicTokenHash, digest)) return null;
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(digest, { company, until: now + this.ttlMs });
    return company;
  }

  /**
   * The caller of a request from its Authorization header: null without one, 401 with a bad one. The one path
   * both API surfaces authenticate through.
   */
  async caller(authorization: string | null | undefined): Promise<Company | null> {
    const token = bearerToken(authorization);
    if (token === null) return null;
    const company = await this.authenticate(token);
    if (!company) {
      if (token.startsWith('sk_')) throw new UnauthenticatedError('This is a secret key (sk_…): it signs webhooks. Authenticate with the public token (pk_…) of the same mode');
      throw new UnauthenticatedError('The bearer token is not valid');
    }
    if (company.mode === 'test' && !this.testMode) throw new UnauthenticatedError('Test mode is off on this server (SANDBOX=0): use a live-mode token (pk_live_…)');
    return company;
  }

  invalidate(): void {
    this.cache.clear();
  }
}
