// What a caller may do: the scopes of an API key (docs/security.md). The merchant's public token holds every scope;
// a restricted key holds those it was made with. REST routes name the scope they need (Route.scope), GraphQL fields
// theirs (authScopes: { scope }), and both refuse a caller without it with 403 FORBIDDEN naming the scope.
import { ForbiddenError } from '../errors/app-error.ts';

export const SCOPES = [
  'invoices:read',
  'invoices:write',
  'payouts:read',
  'payouts:write',
  'deposits:read',
  'deposits:write',
  'settings:read',
  'settings:write',
  'exports:read',
  'keys:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);

/** Who acted, for the audit log: the API key (id and name, never its token; null for the public token) and the client address. */
export interface Actor {
  /** operator: the merchant CLI or the admin API (rotations). */
  credential: 'public-token' | 'api-key' | 'session' | 'operator';
  key: { id: string; name: string } | null;
  address: string | null;
}

/** The operator's CLI and admin API: no key, no client address. */
export const OPERATOR: Actor = { credential: 'operator', key: null, address: null };

/** What an authenticated caller may do and who it is. */
export interface Access {
  scopes: ReadonlySet<Scope>;
  actor: Actor;
}

export const missingScopeMessage = (scope: Scope) => `This API key lacks the scope ${scope}`;

/** 403 FORBIDDEN naming the scope unless `access` holds it. */
export function requireScope(access: Pick<Access, 'scopes'>, scope: Scope): void {
  if (!access.scopes.has(scope)) throw new ForbiddenError(missingScopeMessage(scope));
}

/** A stable text of a scope set (execution sharing of live subscriptions keys on it). */
export const scopesKey = (scopes: ReadonlySet<Scope>): string => (scopes.size === SCOPES.length ? '*' : SCOPES.filter((s) => scopes.has(s)).join(','));
