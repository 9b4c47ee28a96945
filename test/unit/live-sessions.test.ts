// Live connections and the credentials they authenticated with, without a server: which connections a change of a
// company's credentials ends, the race of a change with an authentication, and the token cache that must not
// answer for a rotated token.
import { describe, expect, it } from 'vitest';
import { TokenAuthenticator, type Credential } from '../../src/core/auth.ts';
import { hashToken } from '../../src/core/tokens.ts';
import type { Db } from '../../src/db/client.ts';
import { LiveSessions } from '../../src/graphql/live-sessions.ts';
import { createLogger } from '../../src/logger.ts';

const credential = (companyId: string, token: string): Credential => ({ kind: 'public-token', companyId, digest: hashToken(token) });

/** A check whose valid credentials the test sets; counts its calls. */
function checker(valid: Credential[]) {
  const check = {
    valid: new Set(valid.map((c) => c.digest)),
    calls: 0,
    failing: false,
    async stillValid(c: Credential) {
      check.calls++;
      if (check.failing) throw new Error('database down');
      return check.valid.has(c.digest);
    },
  };
  return check;
}

const logger = createLogger('silent');

describe('live sessions', () => {
  it('a change ends the company’s connections whose credential no longer holds, checking each credential once; others go on', async () => {
    const old = credential('c1', 'pk_old');
    const current = credential('c1', 'pk_new');
    const otherCompany = credential('c2', 'pk_other');
    const check = checker([current, otherCompany]);
    const sessions = new LiveSessions(check, logger);
    const ended: string[] = [];
    const mark = sessions.mark();
    for (const [name, c] of [['old-1', old], ['old-2', old], ['old-3', old], ['current', current], ['other', otherCompany]] as const) {
      sessions.track(c, () => ended.push(name), mark);
    }
    await sessions.credentialsChanged('c1');
    expect(ended).toEqual(['old-1', 'old-2', 'old-3']);
    // One read for the three connections of the old token, one for the current token; none for the other company.
    expect(check.calls).toBe(2);
    // Ended once, however often the company changes again.
    check.valid.delete(current.digest);
    await sessions.credentialsChanged('c1');
    expect(ended).toEqual(['old-1', 'old-2', 'old-3', 'current']);
    expect(ended.filter((e) => e === 'old-1')).toHaveLength(1);
  });

  it('a closed connection is no longer followed', async () => {
    const sessions = new LiveSessions(checker([]), logger);
    let ended = false;
    const untrack = sessions.track(credential('c1', 'pk_x'), () => (ended = true), sessions.mark());
    expect(sessions.size).toBe(1);
    untrack();
    expect(sessions.size).toBe(0);
    await sessions.credentialsChanged('c1');
    expect(ended).toBe(false);
  });

  it('a change heard while a connection authenticated is checked as soon as it is followed', async () => {
    const old = credential('c1', 'pk_old');
    const sessions = new LiveSessions(checker([]), logger);
    // The connection's lookup started, the rotation's event arrived (no connection of c1 yet), then the lookup
    // answered with the old row.
    const mark = sessions.mark();
    await sessions.credentialsChanged('c1');
    let resolveEnded: () => void = () => {};
    const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
    sessions.track(old, resolveEnded, mark);
    await ended;
  });

  it('a connection whose credential cannot be checked after a change is ended (it reconnects and authenticates again)', async () => {
    const check = checker([credential('c1', 'pk_x')]);
    check.failing = true;
    const sessions = new LiveSessions(check, logger);
    let ended = false;
    sessions.track(credential('c1', 'pk_x'), () => (ended = true), sessions.mark());
    await sessions.credentialsChanged('c1');
    expect(ended).toBe(true);
  });
});

describe('the token cache', () => {
  /** A database with one company whose token the test changes; lookups can be held to race them with a change. */
  function companies() {
    const state = { digest: hashToken('pk_old'), reads: 0, hold: null as Promise<void> | null };
    const db = {
      company: {
        findUnique: async ({ where }: { where: { publicTokenHash: string } }) => {
          state.reads++;
          const answer = where.publicTokenHash === state.digest ? { id: 'c1', publicTokenHash: state.digest } : null;
          await state.hold;
          return answer;
        },
      },
    } as unknown as Db;
    return { db, state };
  }

  it('forgets a company’s tokens when its credentials change', async () => {
    const { db, state } = companies();
    const auth = new TokenAuthenticator(db);
    expect((await auth.caller('Bearer pk_old'))?.id).toBe('c1');
    expect((await auth.caller('Bearer pk_old'))?.id).toBe('c1');
    expect(state.reads).toBe(1);
    state.digest = hashToken('pk_new');
    auth.forget('c2');
    expect((await auth.caller('Bearer pk_old'))?.id).toBe('c1');
    auth.forget('c1');
    await expect(auth.caller('Bearer pk_old')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(state.reads).toBe(2);
  });

  it('does not cache a lookup that a change overtook (it may have read the old row)', async () => {
    const { db, state } = companies();
    const auth = new TokenAuthenticator(db);
    let release: () => void = () => {};
    state.hold = new Promise((resolve) => (release = resolve));
    const during = auth.session('Bearer pk_old');
    // The rotation commits and its event arrives while the lookup is on its way back with the old row.
    state.digest = hashToken('pk_new');
    auth.forget('c1');
    release();
    expect((await during)?.credential).toEqual({ kind: 'public-token', companyId: 'c1', digest: hashToken('pk_old') });
    state.hold = null;
    await expect(auth.caller('Bearer pk_old')).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
