import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './db/client.ts';
import { AppError } from './errors/app-error.ts';

/**
 * Service time. Production runs on the real clock. In sandbox mode every company has a test clock of its own
 * (like Stripe's test clocks): it only moves forward, its offset is stored (it survives restarts and is shared
 * by every process on the database), and it moves only that company's invoices and webhook retries.
 * Leases, timeouts, signatures and retention always use real time.
 */
export class Clock {
  private readonly advanced: ((companyId: string) => void)[] = [];

  constructor(
    private readonly db: Db,
    readonly sandbox: boolean,
  ) {}

  /** Real time, for what is about this process and the outside world rather than a company's objects. */
  real(): Date {
    return new Date();
  }

  /** How far the company's test clock runs ahead of real time (0 outside sandbox mode). */
  async offsetMs(companyId: string): Promise<number> {
    if (!this.sandbox) return 0;
    const row = await this.db.sandboxClock.findUnique({ where: { companyId }, select: { offsetMs: true } });
    return Number(row?.offsetMs ?? 0n);
  }

  /** The company's time: real time plus its test clock's offset. */
  async now(companyId: string): Promise<Date> {
    return new Date(Date.now() + (await this.offsetMs(companyId)));
  }

  /**
   * SQL for a company's test clock offset in milliseconds (0 outside sandbox mode): `company` names a column of the
   * query it is used in (for queries across companies) or is an SQL value.
   */
  offsetMsSql(company: string | Prisma.Sql): Prisma.Sql {
    if (!this.sandbox) return Prisma.sql`0::bigint`;
    const id = typeof company === 'string' ? Prisma.raw(company) : company;
    return Prisma.sql`COALESCE((SELECT sc."offsetMs" FROM "SandboxClock" sc WHERE sc."companyId" = ${id}), 0)`;
  }

  /** SQL for the current time on a company's clock (`company` as for offsetMsSql). */
  companyNowSql(company: string | Prisma.Sql): Prisma.Sql {
    const real = Prisma.sql`${new Date()}::timestamptz`;
    if (!this.sandbox) return real;
    return Prisma.sql`(${real} + ${this.offsetMsSql(company)} * interval '1 millisecond')`;
  }

  /** Moves the company's test clock forward; answers its new offset. */
  async advance(companyId: string, minutes: number): Promise<number> {
    if (!this.sandbox) throw new AppError('NOT_FOUND', 'The test clock exists only in sandbox mode');
    const ms = BigInt(Math.round(minutes * 60_000));
    const row = await this.db.sandboxClock.upsert({
      where: { companyId },
      create: { companyId, offsetMs: ms },
      update: { offsetMs: { increment: ms } },
    });
    for (const listener of this.advanced) listener(companyId);
    return Number(row.offsetMs);
  }

  /** Called after a company's test clock moved (what was scheduled on it may be due now). */
  onAdvance(listener: (companyId: string) => void): void {
    this.advanced.push(listener);
  }
}
