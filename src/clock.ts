import type { Db } from './db/client.ts';
import { AppError } from './errors/app-error.ts';

/**
 * Service time. Production runs on the real clock; in sandbox mode a test clock can be moved forward
 * (never back), and the offset is stored so it survives restarts.
 */
export class Clock {
  private offsetMs = 0;
  constructor(readonly sandbox: boolean) {}

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  async load(db: Db): Promise<void> {
    if (!this.sandbox) return;
    const row = await db.sandboxClock.findUnique({ where: { id: 1 } });
    this.offsetMs = Number(row?.offsetMs ?? 0n);
  }

  async advance(db: Db, minutes: number): Promise<Date> {
    if (!this.sandbox) throw new AppError('NOT_FOUND', 'The test clock exists only in sandbox mode');
    const ms = BigInt(Math.round(minutes * 60_000));
    const row = await db.sandboxClock.upsert({ where: { id: 1 }, create: { id: 1, offsetMs: ms }, update: { offsetMs: { increment: ms } } });
    this.offsetMs = Number(row.offsetMs);
    return this.now();
  }

  get offsetMinutes(): number {
    return this.offsetMs / 60_000;
  }
}
