// The tenant behind a company id: which mode its objects belong to (docs/modes.md). A tenant's mode never changes.
import type { Company, Prisma } from '../../generated/prisma/client.ts';
import { ForbiddenError } from '../errors/app-error.ts';
import type { Mode } from '../domain/modes.ts';

/** The mode of a company (tenant), or null when there is none with that id. */
export async function modeOfCompany(db: Prisma.TransactionClient, companyId: string): Promise<Mode | null> {
  const company = await db.company.findUnique({ where: { id: companyId }, select: { mode: true } });
  return company?.mode ?? null;
}

/** The sandbox's tools (simulated transfers, the test clock) act on test-mode objects only: a live caller gets 403. */
export function requireTestMode(company: Pick<Company, 'mode'>): void {
  if (company.mode !== 'test') {
    throw new ForbiddenError('The sandbox takes a test-mode token (pk_test_…): a live-mode token never reaches simulated chains or the test clock');
  }
}
