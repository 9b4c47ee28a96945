import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Company } from '../../generated/prisma/client.ts';
import type { Db } from '../db/client.ts';
import { COMPANY_ASSETS, DEFAULT_ACCEPTED_ASSETS, type CompanyAsset } from '../domain/assets.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { httpUrl, parseInput } from '../validation.ts';
import { digestsEqual, hashToken, newPublicToken, newSecretKey } from './tokens.ts';

export type { Company };

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

export async function createCompany(db: Db, rawInput: unknown): Promise<CompanyCredentials> {
  const input = parseInput(createCompanySchema, rawInput);
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

const companyIdSchema = z.object({ companyId: z.uuid({ message: 'must be a company id (uuid)' }) });

/** Issues a new public token; the old one stops working at once (in this process) or within the cache TTL. */
export async function rotatePublicToken(db: Db, rawInput: unknown): Promise<{ companyId: string; publicToken: string }> {
  const { companyId } = parseInput(companyIdSchema, rawInput);
  const publicToken = newPublicToken();
  const updated = await db.company.updateMany({ where: { id: companyId }, data: { publicTokenHash: hashToken(publicToken) } });
  if (updated.count === 0) throw new NotFoundError(`No company with id ${companyId}`);
  return { companyId, publicToken };
}

export async function rotateSecretKey(db: Db, rawInput: unknown): Promise<{ companyId: string; secretKey: string }> {
  const { companyId } = parseInput(companyIdSchema, rawInput);
  const secretKey = newSecretKey();
  const updated = await db.company.updateMany({ where: { id: companyId }, data: { secretKey } });
  if (updated.count === 0) throw new NotFoundError(`No company with id ${companyId}`);
  return { companyId, secretKey };
}

/** company.assets: every spec asset with whether this company accepts it. */
export const presentCompanyAssets = (acceptedAssets: string[]): { asset: CompanyAsset; isAllowed: boolean }[] =>
  COMPANY_ASSETS.map((asset) => ({ asset, isAllowed: acceptedAssets.includes(asset) }));

/**
 * Resolves bearer tokens to companies. Lookups are cached briefly because every merchant call needs one;
 * rotations through this process drop the cache at once.
 */
export class TokenAuthenticator {
  private readonly cache = new Map<string, { company: Company; until: number }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticate(token: string): Promise<Company | null> {
    if (token.length === 0 || token.length > 200) return null;
    const digest = hashToken(token);
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return hit.company;
    const company = await this.db.company.findUnique({ where: { publicTokenHash: digest } });
    // The index lookup already matched; compare again in constant time so no code path leaks timing.
    if (!company || !digestsEqual(company.publicTokenHash, digest)) return null;
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(digest, { company, until: now + this.ttlMs });
    return company;
  }

  invalidate(): void {
    this.cache.clear();
  }
}
