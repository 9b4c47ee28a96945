// Live connections (graphql-ws sockets, SSE streams) by the credential they authenticated with. A connection
// outlives the check made when it opened: when a company's credentials change (a token rotated; the event reaches
// every instance through the bus), each instance checks its open connections of that company against the database
// again and ends those whose credential no longer holds.
import { credentialKey, type Credential } from '../core/auth.ts';
import type { Logger } from '../logger.ts';

export interface CredentialCheck {
  /** Whether the credential still holds, from the database (not a cache). */
  stillValid(credential: Credential): Promise<boolean>;
}

interface Session {
  credential: Credential;
  /** Ends the connection (graphql-ws: close 4403; SSE: the stream ends); called at most once. */
  end: () => void;
}

/** Where an authentication started: a change heard since then makes `track` check the new session at once. */
export type SessionMark = number;

export class LiveSessions {
  private readonly byCompany = new Map<string, Set<Session>>();
  private changes = 0;

  constructor(
    private readonly check: CredentialCheck,
    private readonly logger: Logger,
  ) {}

  /** Take before authenticating a connection; pass to `track`. */
  mark(): SessionMark {
    return this.changes;
  }

  /**
   * Follows a connection that authenticated with `credential` until the returned function is called (it closed).
   * A change heard while it authenticated may have been checked before it was tracked: it is checked now.
   */
  track(credential: Credential, end: () => void, since: SessionMark): () => void {
    const session: Session = { credential, end: once(end) };
    let sessions = this.byCompany.get(credential.companyId);
    if (!sessions) this.byCompany.set(credential.companyId, (sessions = new Set()));
    sessions.add(session);
    if (this.changes !== since) void this.recheck([session]);
    // An API key that expires ends its connections then: no event announces an expiry.
    const expiry = credential.expiresAt ? atTime(credential.expiresAt.getTime(), session.end) : null;
    return () => {
      expiry?.cancel();
      sessions.delete(session);
      if (sessions.size === 0 && this.byCompany.get(credential.companyId) === sessions) this.byCompany.delete(credential.companyId);
    };
  }

  /** The company's credentials changed: its connections whose credential no longer holds are ended. */
  credentialsChanged(companyId: string): Promise<void> {
    this.changes++;
    return this.recheck([...(this.byCompany.get(companyId) ?? [])]);
  }

  /** Connections followed now (diagnostics, tests). */
  get size(): number {
    let n = 0;
    for (const sessions of this.byCompany.values()) n += sessions.size;
    return n;
  }

  /** One database check per distinct credential, however many connections share it. */
  private async recheck(sessions: Session[]): Promise<void> {
    const byCredential = new Map<string, Session[]>();
    for (const s of sessions) {
      const key = credentialKey(s.credential);
      byCredential.set(key, [...(byCredential.get(key) ?? []), s]);
    }
    await Promise.all(
      [...byCredential.values()].map(async (group) => {
        const valid = await this.check.stillValid(group[0]!.credential).catch((e: unknown) => {
          // Unknown is not valid: the client reconnects and authenticates again.
          this.logger.warn({ err: e }, 'could not check a live connection’s credential after a change; ending the connection');
          return false;
        });
        if (!valid) for (const s of group) s.end();
      }),
    );
  }
}

/** Runs `fn` at `when` (epoch ms), also when that is further away than one timer can wait (~24.8 days). */
function atTime(when: number, fn: () => void): { cancel(): void } {
  let timer: NodeJS.Timeout;
  const arm = () => {
    const wait = when - Date.now();
    if (wait <= 0) return fn();
    timer = setTimeout(arm, Math.min(wait, 2 ** 31 - 1));
    timer.unref();
  };
  arm();
  return { cancel: () => clearTimeout(timer) };
}

function once(fn: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}
