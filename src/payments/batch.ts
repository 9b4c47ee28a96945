// Bookings planned at about the same moment (the reports of one payee lookup batch, several watchers' reports) written
// together: one statement per group of one mode, company and asset, instead of one each (docs/payments.md,
// "Several per statement"). All or none per statement: when one booking's check fails there, each is tried alone,
// so one stale report never holds back the others.
import DataLoader from 'dataloader';
import type { ChainTransfer } from '../../generated/prisma/client.ts';
import type { LifecycleDeps } from '../invoices/lifecycle.ts';
import { bookingGroup, bookPlanned, type PlannedBooking } from './booking.ts';

/** Bookings one statement writes at most: its invoice and balance locks are held while it runs. */
export const MAX_BOOKINGS_PER_STATEMENT = 32;

/** Writes one planned booking; null when it took nothing (the caller books it the general way). */
export type Booker = (planned: PlannedBooking) => Promise<ChainTransfer | null>;

const UNIQUE_VIOLATION = '23505';

/** One booking in its own statement; a report of the same output committed meanwhile is the general way's to answer. */
export async function bookAlone(deps: LifecycleDeps, planned: PlannedBooking): Promise<ChainTransfer | null> {
  try {
    return (await bookPlanned(deps, [planned]))[0] ?? null;
  } catch (e) {
    if ((e as { code?: unknown }).code === UNIQUE_VIOLATION) return null;
    throw e;
  }
}

/** Splits bookings into statements: one group each, distinct invoices and outputs, at most MAX_BOOKINGS_PER_STATEMENT. */
export function statementsOf(planned: readonly PlannedBooking[]): PlannedBooking[][] {
  const statements: { group: string; items: PlannedBooking[]; keys: Set<string> }[] = [];
  for (const p of planned) {
    const group = bookingGroup(p);
    const keys = [`i/${p.invoiceId}`, `o/${p.transfer.report.network}/${p.transfer.report.txHash}/${p.transfer.report.outputIndex}`];
    let target = statements.find((s) => s.group === group && s.items.length < MAX_BOOKINGS_PER_STATEMENT && !keys.some((k) => s.keys.has(k)));
    if (!target) statements.push((target = { group, items: [], keys: new Set() }));
    target.items.push(p);
    keys.forEach((k) => target.keys.add(k));
  }
  return statements.map((s) => s.items);
}

/** Several bookings in one statement; if it wrote nothing or failed, each alone. */
async function bookTogether(deps: LifecycleDeps, planned: PlannedBooking[]): Promise<(ChainTransfer | null | Error)[]> {
  if (planned.length > 1) {
    try {
      const written = await bookPlanned(deps, planned);
      if (written.length) return written;
    } catch {
      // Nothing was written: each is tried alone below, which reports its own failure.
    }
  }
  return Promise.all(planned.map((p) => bookAlone(deps, p).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))));
}

/** A Booker that writes the bookings planned in one turn of the event loop together. */
export function bookingBatcher(deps: LifecycleDeps): Booker {
  const loader = new DataLoader<PlannedBooking, ChainTransfer | null>(
    async (planned) => {
      const statements = statementsOf(planned);
      const results = new Map<PlannedBooking, ChainTransfer | null | Error>();
      await Promise.all(
        statements.map(async (items) => {
          const answers = await bookTogether(deps, items);
          items.forEach((p, i) => results.set(p, answers[i]!));
        }),
      );
      return planned.map((p) => results.get(p)!);
    },
    { cache: false, maxBatchSize: 10 * MAX_BOOKINGS_PER_STATEMENT, batchScheduleFn: (run) => setImmediate(run) },
  );
  return (planned) => loader.load(planned);
}
