import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { transactionWithRetry, type Db } from '../db/client.ts';
import { COMPANY_ASSETS, DEFAULT_ACCEPTED_ASSETS } from '../domain/assets.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { httpUrl, parseInput } from '../core/validation.ts';
import { hashToken, newPublicToken, newSecretKey } from '../core/tokens.ts';
import { recordCredentialsChanged } from '../core/auth.ts';
import type { CommitSignal } from '../core/events.ts';


export interface CompanyCredentials {
  companyId: string;
  publicToken: string;
  secretKey: string;
}

export const createCompanySchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  logoUrl: httpUrl.nullish(),
  redirectUrl: httpUrl.nullish(),
  acceptedAssets: z.array(z.enum(COMPANY_ASSETS)).max(COMPANY_ASSETS.length).nullish(),
});

export type CreateCompanyInput = z.input<typeof createCompanySchema>;

/** A new merchant; the input is checked here too, since operators reach this from a CLI as well as the admin API. */
export async function createCompany(db: Db, fields: CreateCompanyInput): Promise<CompanyCredentials> {
  const input = parseInput(createCompanySchema, fields);
  const publicToken = newPublicToken();
  const secretKey = newSecretKey();
  const company = await db.company.create({
    data: {
      id: randomUUID(),
      name: input.name,
      logoUrl: input.logoUrl ?? '',
      redirectUrl: input.redirectUrl ?? null,
      acceptedAssets: [...new Set(input.acceptedAssets ?? DEFAULT_ACCEPTED_ASSETS)],
      publicTokenHash: hashToken(publicToken),
      secretKey,
    },
  });
  return { companyId: company.id, publicToken, secretKey };
}

export interface CompanySummary {
  companyId: string;
  name: string;
  logoUrl: string;
  redirectUrl: string | null;
  acceptedAssets: string[];
  createdAt: string;
}

export async function listCompanies(db: Db): Promise<CompanySummary[]> {
  const rows = await db.company.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map((c) => ({
    companyId: c.id,
    name: c.name,
    logoUrl: c.logoUrl,
    redirectUrl: c.redirectUrl,
    acceptedAssets: c.acceptedAssets,
    createdAt: c.createdAt.toISOString(),
  }));
}

export const companyIdSchema = z.object({ companyId: z.uuid({ message: 'must be a company id (uuid)' }) });
type CompanyRef = z.output<typeof companyIdSchema>;

/**
 * Issues a new public token. The old one stops working at once everywhere: its rotation is an event (in the same
 * transaction) that every instance hears, dropping its cached lookups and ending the live connections opened with
 * it (docs/live.md). `events` is the committing process's bus, when it has one (a CLI on the database has none).
 */
export async function rotatePublicToken(db: Db, { companyId }: CompanyRef, events?: CommitSignal): Promise<{ companyId: string; publicToken: string }> {
  const publicToken = newPublicToken();
  await transactionWithRetry(db, async (tx) => {
    const updated = await tx.company.updateMany({ where: { id: companyId }, data: { publicTokenHash: hashToken(publicToken) } });
    if (updated.count === 0) throw new NotFoundError(`No company with id ${companyId}`);
    // A rotation contains a leaked token: the export download links it made end with it (docs/exports.md).
    await tx.exportLink.deleteMany({ where: { companyId } });
    await recordCredentialsChanged(tx, companyId, 'public_token_rotated');
  });
  events?.committed();
  return { companyId, publicToken };
}

export async function rotateSecretKey(db: Db, { companyId }: CompanyRef): Promise<{ companyId: string; secretKey: string }> {
  const secretKey = newSecretKey();
  const updated = await db.company.updateMany({ where: { id: companyId }, data: { secretKey } });
  if (updated.count === 0) throw new NotFoundError(`No company with id ${companyId}`);
  return { companyId, secretKey };
}

