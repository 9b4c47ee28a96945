import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Company, Prisma } from '../../generated/prisma/client.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';
import { COMPANY_ASSETS, DEFAULT_ACCEPTED_ASSETS } from '../domain/assets.ts';
import { MODES, type Mode } from '../domain/modes.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { httpUrl, parseInput } from '../core/validation.ts';
import { hashToken, newPublicToken, newSecretKey, standardWebhooksSecret } from '../core/tokens.ts';
import { recordCredentialsChanged } from '../core/auth.ts';
import { recordAudit } from '../core/audit.ts';
import { OPERATOR } from '../core/scopes.ts';
import type { CommitSignal } from '../core/events.ts';

export interface ModeCredentials {
  publicToken: string;
  secretKey: string;
  /** The same secret in the form Standard Webhooks libraries take (shown beside it so nobody has to derive it). */
  standardWebhooksSecret: string;
}

/** A new merchant account: its id and each mode's credentials (shown once). */
export interface CompanyCredentials {
  companyId: string;
  test: ModeCredentials;
  live: ModeCredentials;
}

export const createCompanySchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  logoUrl: httpUrl.nullish(),
  redirectUrl: httpUrl.nullish(),
  acceptedAssets: z.array(z.enum(COMPANY_ASSETS)).max(COMPANY_ASSETS.length).nullish(),
});

export type CreateCompanyInput = z.input<typeof createCompanySchema>;

type StoreFields = Pick<Company, 'name' | 'logoUrl' | 'redirectUrl' | 'acceptedAssets'>;

/**
 * One mode's tenant of an account. The store's own fields (name, logo, redirect, accepted assets) are the account's:
 * both tenants carry the same values, written together.
 */
const tenantData = (accountId: string, mode: Mode, store: StoreFields, credentials: { secretKey: string; publicToken: string | null }) => ({
  // A test tenant's id is its account's id (a CHECK in the migration): an account id names one test tenant.
  id: mode === 'test' ? accountId : randomUUID(),
  accountId,
  mode,
  ...store,
  publicTokenHash: credentials.publicToken === null ? null : hashToken(credentials.publicToken),
  secretKey: credentials.secretKey,
});

function freshCredentials(mode: Mode): ModeCredentials {
  const secretKey = newSecretKey(mode);
  return { publicToken: newPublicToken(mode), secretKey, standardWebhooksSecret: standardWebhooksSecret(secretKey) };
}

/** A new merchant account with both modes; the input is checked here too (operators reach this from a CLI as well as the admin API). */
export async function createCompany(db: Db, fields: CreateCompanyInput): Promise<CompanyCredentials> {
  const input = parseInput(createCompanySchema, fields);
  const accountId = randomUUID();
  const store: StoreFields = {
    name: input.name,
    logoUrl: input.logoUrl ?? '',
    redirectUrl: input.redirectUrl ?? null,
    acceptedAssets: [...new Set(input.acceptedAssets ?? DEFAULT_ACCEPTED_ASSETS)],
  };
  const test = freshCredentials('test');
  const live = freshCredentials('live');
  await db.company.createMany({ data: [tenantData(accountId, 'test', store, test), tenantData(accountId, 'live', store, live)] });
  return { companyId: accountId, test, live };
}

export interface CompanySummary {
  companyId: string;
  name: string;
  logoUrl: string;
  redirectUrl: string | null;
  acceptedAssets: string[];
  /** The modes that have a public token (an account made before modes has live credentials once they are issued). */
  modes: Mode[];
  createdAt: string;
}

export async function listCompanies(db: Db): Promise<CompanySummary[]> {
  const rows = await db.company.findMany({ orderBy: [{ createdAt: 'asc' }, { accountId: 'asc' }, { mode: 'asc' }] });
  const accounts = new Map<string, CompanySummary>();
  for (const c of rows) {
    const account = accounts.get(c.accountId) ?? {
      companyId: c.accountId,
      name: c.name,
      logoUrl: c.logoUrl,
      redirectUrl: c.redirectUrl,
      acceptedAssets: c.acceptedAssets,
      modes: [],
      createdAt: c.createdAt.toISOString(),
    };
    if (c.publicTokenHash !== null) account.modes.push(c.mode);
    accounts.set(c.accountId, account);
  }
  return [...accounts.values()].map((a) => ({ ...a, modes: MODES.filter((m) => a.modes.includes(m)) }));
}

export const companyModeSchema = z.object({
  companyId: z.uuid({ message: 'must be a company id (uuid)' }),
  mode: z.enum(MODES, { message: 'must be test or live' }),
});
type CompanyModeRef = z.output<typeof companyModeSchema>;

/**
 * The tenant of one mode of an account, made on first use for an account from before modes (its live twin, with the
 * account's store fields and a fresh secret key, but no public token until one is issued).
 */
async function tenantOf(tx: Prisma.TransactionClient, { companyId, mode }: CompanyModeRef): Promise<Company> {
  const existing = await tx.company.findUnique({ where: { accountId_mode: { accountId: companyId, mode } } });
  if (existing) return existing;
  const sibling = await tx.company.findFirst({ where: { accountId: companyId } });
  if (!sibling) throw new NotFoundError(`No company with id ${companyId}`);
  const data = tenantData(companyId, mode, sibling, { publicToken: null, secretKey: newSecretKey(mode) });
  return tx.company.create({ data });
}

/**
 * Issues a new public token for one mode. The old one stops working at once everywhere: its rotation is an event (in
 * the same transaction) that every instance hears, dropping its cached lookups and ending the live connections opened
 * with it (docs/live.md). `events` is the committing process's bus, when it has one (a CLI on the database has none).
 */
export async function rotatePublicToken(db: Db, ref: CompanyModeRef, events?: CommitSignal): Promise<{ companyId: string; mode: Mode; publicToken: string }> {
  const publicToken = newPublicToken(ref.mode);
  await transactionWithRetry(db, async (tx) => {
    const tenant = await tenantOf(tx, ref);
    await tx.company.update({ where: { id: tenant.id }, data: { publicTokenHash: hashToken(publicToken) } });
    // A rotation contains a leaked token: the export download links it made end with it (docs/exports.md).
    await tx.exportLink.deleteMany({ where: { companyId: tenant.id } });
    await recordCredentialsChanged(tx, tenant.id, 'public_token_rotated');
    await recordAudit(tx, tenant.id, OPERATOR, 'public_token.rotated', { mode: ref.mode });
  });
  events?.committed();
  return { companyId: ref.companyId, mode: ref.mode, publicToken };
}

export async function rotateSecretKey(
  db: Db,
  ref: CompanyModeRef,
): Promise<{ companyId: string; mode: Mode; secretKey: string; standardWebhooksSecret: string }> {
  const secretKey = newSecretKey(ref.mode);
  await transactionWithRetry(db, async (tx) => {
    const tenant = await tenantOf(tx, ref);
    await tx.company.update({ where: { id: tenant.id }, data: { secretKey } });
    await recordAudit(tx, tenant.id, OPERATOR, 'secret_key.rotated', { mode: ref.mode });
  });
  return { companyId: ref.companyId, mode: ref.mode, secretKey, standardWebhooksSecret: standardWebhooksSecret(secretKey) };
}
