// The autoswap driver's claims (core/lease.ts RowClaims, docs/leases.md): a driver whose claim was taken over while
// its venue call was in flight writes nothing of its answer; neither does one whose swap a process of the previous
// release (which claims with a claim id) took over during a rolling deploy.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { driveAutoswaps, type AutoswapDeps } from '../../src/autoswap/service.ts';
import type { SwapOrder, SwapState, SwapVenue } from '../../src/autoswap/venue.ts';
import { VenueRegistry } from '../../src/autoswap/venues/registry.ts';
import { DATABASES } from '../support/databases.ts';
import { useServer } from '../support/server.ts';

/** A venue whose submissions wait until the test answers them. */
function gatedVenue(name: string) {
  const calls: { order: SwapOrder; answer: (s: SwapState) => void }[] = [];
  let called: () => void = () => {};
  const firstCall = new Promise<void>((resolve) => (called = resolve));
  const venue: SwapVenue = {
    name,
    supports: () => true,
    minimum: () => null,
    submit: (order) =>
      new Promise<SwapState>((answer) => {
        calls.push({ order, answer });
        called();
      }),
    status: async () => ({ state: 'pending', ref: `${name}-order` }),
  };
  return { venue, calls, firstCall };
}

describe.each(DATABASES)('autoswap claims on %s', (kind) => {
  // The server's own driver is stopped: a run of it (at start, or woken) between a test's steps would claim the
  // test's swap and leave its drivers waiting for a venue call that never comes.
  const server = useServer(kind, { AUTOSWAP_INTERVAL_MS: '3600000' });
  beforeAll(() => server.app.jobs.get('autoswap-driver').stop());
  const driver = (venue: SwapVenue, leaseMs: number): AutoswapDeps => {
    const deps = server.app.services.autoswap;
    return { ...deps, venues: new VenueRegistry([venue]), settings: { ...deps.settings, leaseMs } };
  };
  const queuedSwap = async () => {
    // The swaps of earlier tests wait: each driver here takes only the test's own.
    await server.app.db.prisma.$executeRaw`UPDATE "AutoSwap" SET "nextAttemptAt" = now() + interval '1 day'`;
    const m = await server.merchant();
    const id = randomUUID();
    await server.app.db.prisma.autoSwap.create({
      data: { id, companyId: m.companyId, fromCurrency: 'btc', toCurrency: 'trc20usdt', amount: '0.01', maxSlippagePercent: '1', status: 'queued' },
    });
    return id;
  };
  const swap = (id: string) => server.app.db.prisma.autoSwap.findUniqueOrThrow({ where: { id } });
  /** Waits for `run` to call its venue; a run that ends first fails the test at once, with the swap as it is. */
  const venueCalled = (gate: ReturnType<typeof gatedVenue>, run: Promise<number>, id: string) =>
    Promise.race([
      gate.firstCall,
      run.then(async (claimed) => {
        throw new Error(`the driver ended (${claimed} claimed) without calling its venue: ${JSON.stringify(await swap(id))}`);
      }),
    ]);

  it('a driver whose claim expired mid-submission and was taken over writes nothing of its late answer', async () => {
    const id = await queuedSwap();
    const stale = gatedVenue('stale');
    const staleRun = driveAutoswaps(driver(stale.venue, 200));
    await venueCalled(stale, staleRun, id);
    expect(await swap(id)).toMatchObject({ venue: 'stale', claimGeneration: 1 });
    await sleep(400);
    // Its lease ran out: another driver takes the swap over, and its venue takes the order.
    const current = gatedVenue('current');
    const currentRun = driveAutoswaps(driver(current.venue, 60_000));
    await venueCalled(current, currentRun, id);
    current.calls[0]!.answer({ state: 'pending', ref: 'current-order' });
    expect(await currentRun).toBe(1);
    const taken = await swap(id);
    expect(taken).toMatchObject({ status: 'submitted', venue: 'current', ref: 'current-order', claimGeneration: 2, attempts: 0, leaseUntil: null });
    // The stale driver's answer comes late: unfenced, it would queue the swap again (ref gone, an attempt counted).
    stale.calls[0]!.answer({ state: 'failed', ref: null, reason: 'late answer of the stale driver', retryable: true });
    expect(await staleRun).toBe(1);
    expect(await swap(id)).toEqual(taken);
  });

  it('a driver whose swap a process of the previous release claimed (its claim id) writes nothing either', async () => {
    const id = await queuedSwap();
    const stale = gatedVenue('stale');
    const staleRun = driveAutoswaps(driver(stale.venue, 200));
    await venueCalled(stale, staleRun, id);
    await sleep(400);
    // What the previous release's claim statement does: a claim id and a deadline, the generation untouched.
    await server.app.db.prisma.$executeRaw`
      UPDATE "AutoSwap" SET "leaseUntil" = now() + interval '1 minute', "claim" = ${randomUUID()}::uuid WHERE "id" = ${id}::uuid`;
    const claimedByOld = await swap(id);
    expect(claimedByOld.claimGeneration).toBe(1);
    stale.calls[0]!.answer({ state: 'pending', ref: 'stale-order' });
    expect(await staleRun).toBe(1);
    expect(await swap(id)).toEqual(claimedByOld);
  });
});
