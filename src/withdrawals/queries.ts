// Reads of withdrawals: one merchant's withdrawal, and the list REST and GraphQL share.
import { z } from 'zod';
import type { Prisma, Withdrawal } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import { PAYMENT_CURRENCIES } from '../domain/assets.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { WITHDRAWAL_STATUSES, type WithdrawalDeps } from './model.ts';

/** The withdrawal of this merchant, or 404. */
export async function getWithdrawal(deps: Pick<WithdrawalDeps, 'db'>, company: Company, uid: string): Promise<Withdrawal> {
  const w = z.uuid().safeParse(uid).success ? await deps.db.withdrawal.findUnique({ where: { uid } }) : null;
  if (!w || w.companyId !== company.id) throw new NotFoundError(`No withdrawal with uid ${uid}`);
  return w;
}

export const withdrawalListSchema = z.object({
  status: z.enum(WITHDRAWAL_STATUSES).optional(),
  asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }).optional(),
  after: z.uuid({ message: 'must be a withdrawal uid from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export interface WithdrawalFilter {
  /** Any of these statuses / assets. */
  status?: string[] | undefined;
  asset?: string[] | undefined;
}

/** The merchant's withdrawals matching a filter: the one definition REST and GraphQL lists share. */
export const withdrawalListWhere = (company: Company, filter: WithdrawalFilter = {}): Prisma.WithdrawalWhereInput => ({
  companyId: company.id,
  ...(filter.status?.length ? { status: { in: filter.status } } : {}),
  ...(filter.asset?.length ? { asset: { in: filter.asset } } : {}),
});

/** Newest first; within one call in request order. */
export const withdrawalListOrder = [{ createdAt: 'desc' }, { position: 'asc' }, { uid: 'desc' }] satisfies Prisma.WithdrawalOrderByWithRelationInput[];

/** Newest first; `after` is the last uid of the previous page. */
export async function listWithdrawals(deps: Pick<WithdrawalDeps, 'db'>, company: Company, q: z.output<typeof withdrawalListSchema>) {
  const rows = await deps.db.withdrawal.findMany({
    where: withdrawalListWhere(company, { status: q.status ? [q.status] : undefined, asset: q.asset ? [q.asset] : undefined }),
    orderBy: withdrawalListOrder,
    ...pageArgs('uid', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (w) => w.uid);
  return { withdrawals: page, nextCursor };
}
