import { Prisma } from '../generated/prisma/client.ts';
import type { Db } from './db/client.ts';
import { AppError } from './errors/app-error.ts';

/**
 * Service time. Live mode runs on the real clock. Every test-mode tenant has a test clock of its own (like Stripe's
 * test clocks): it only moves forward, its offset is stored (it survives restarts and is shared by every process on
 * the database), and it moves only that tenant's invoices and webhook retries. A live tenant never has one: only a
 * test-mode company's clock can be written (advance), so every offset read for a live one is 0.
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

  /** Moves a test-mode company's test clock forward; answers its new offset. A live company has no test clock. */
  async advance(companyId: string, minutes: number): Promise<number> {
    if (!this.sandbox) throw new AppError('NOT_FOUND', 'The test clock exists only in test mode');
    const ms = BigInt(Math.round(minutes * 60_000));
    // The company's mode is read in the statement that writes: a live company's clock cannot come to exist.
    const [row] = await this.db.$queryRaw<{ offsetMs: bigint }[]>`
      INSERT INTO "SandboxClock" ("companyId", "offsetMs")
      SELECT c."id", ${ms}::bigint FROM "Company" c WHERE c."id" = ${companyId}::uuid AND c."mode" = 'test'
      ON CONFLICT ("companyId") DO UPDATE SET "offsetMs" = "SandboxClock"."offsetMs" + EXCLUDED."offsetMs"
      RETURNING "offsetMs"`;
    if (!row) throw new AppError('FORBIDDEN', 'Only a test-mode merchant has a test clock');
    for (const listener of this.advanced) listener(companyId);
    return Number(row.offsetMs);
  }

  /** Called after a company's test clock moved (what was scheduled on it may be due now). */
  onAdvance(listener: (companyId: string) => void): void {
    this.advanced.push(listener);
  }
}
