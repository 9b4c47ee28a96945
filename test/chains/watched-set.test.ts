// The set of addresses (tags, references) a watcher matches the chain's transfers against: a refresh called while
// another is under way still sees everything written before it was called (blocks read in parallel each refresh).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateIndex, WatchedSet } from '../../src/chains/store.ts';
import type { Db } from '../../src/db/client.ts';
import { openHarness, type Harness } from '../support/chain-harness.ts';

describe('WatchedSet', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a refresh called during another one sees what was written before it was called, not only what the other read', async () => {
    const db = h.context.db;
    let release!: () => void;
    let answered!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const firstAnswered = new Promise<void>((r) => (answered = r));
    let queries = 0;
    // The first load's query has answered but the load is not finished: what is written now, it has not seen.
    const held = new Proxy(db, {
      get: (target, key) =>
        key === '$queryRaw'
          ? async (...args: unknown[]) => {
              const rows = await (target.$queryRaw as (...a: unknown[]) => Promise<unknown>)(...args);
              if (++queries === 1) {
                answered();
                await gate;
              }
              return rows;
            }
          : Reflect.get(target, key),
    }) as Db;
    const watched = new WatchedSet(held, 'solana');
    const before = await allocateIndex(db, 'solana', 'owner-1', (i) => `before-${i}`);
    const first = watched.refresh();
    await firstAnswered;
    const during = await allocateIndex(db, 'solana', 'owner-2', (i) => `during-${i}`);
    const second = watched.refresh();
    release();
    await Promise.all([first, second]);
    expect([watched.has(before.address), watched.has(during.address)]).toEqual([true, true]);
    expect(queries).toBe(2);
  });
});
