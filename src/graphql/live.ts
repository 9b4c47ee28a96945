// Committed events of the event bus as the async iterables GraphQL subscriptions return. The bus publishes an event
// only after its transaction committed, in commit order, so a subscriber never sees a change that was rolled back.
import { Repeater } from 'graphql-yoga';
import type { BusMessage, EventBus } from '../core/bus.ts';

/** The bus messages that pass `keep`, from now until the subscriber leaves. */
export function busMessages(bus: Pick<EventBus, 'subscribe'>, keep: (m: BusMessage) => boolean): AsyncIterable<BusMessage> {
  return new Repeater<BusMessage>(async (push, stop) => {
    const off = bus.subscribe((m) => {
      if (keep(m)) push(m).catch(() => undefined);
    });
    await stop;
    off();
  });
}

/**
 * First the current state (`load`, which also answers the seq of the last event its snapshot includes), then every
 * matching message after it. Messages that arrive while the state is read are held back until it went out, and
 * those the state already reflects are skipped: nothing is lost or repeated between the read and the
 * subscription, and the order holds.
 */
export function currentThenMessages<T>(
  bus: Pick<EventBus, 'subscribe'>,
  keep: (m: BusMessage) => boolean,
  load: () => Promise<{ current: T; lastSeq: bigint | null }>,
): AsyncIterable<{ current: T } | { message: BusMessage }> {
  return new Repeater<{ current: T } | { message: BusMessage }>(async (push, stop) => {
    let early: BusMessage[] | null = [];
    const off = bus.subscribe((m) => {
      if (!keep(m)) return;
      if (early) early.push(m);
      else push({ message: m }).catch(() => undefined);
    });
    try {
      const { current, lastSeq } = await load();
      await push({ current });
      const held = early;
      early = null;
      for (const m of held) if (lastSeq === null || m.seq > lastSeq) await push({ message: m });
    } catch (e) {
      off();
      stop(e);
      return;
    }
    await stop;
    off();
  });
}
