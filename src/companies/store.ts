// The store's settings (docs/api-decisions.md, "Store settings"): name, logo, default redirect, accepted assets and who pays the fee by default.
// They are the account's, shared by its test and live tenants (docs/modes.md): a change from either mode's token
// writes both rows in one transaction, with an audit entry in each tenant's log. The change drops every instance's
// cached token lookups (they carry the Company row), so the next invoice already sees the new defaults.
import { z } from 'zod';
import type { Company, Prisma } from '../../generated/prisma/client.ts';
import { recordAudit } from '../core/audit.ts';
import { recordCredentialsChanged } from '../core/auth.ts';
import { commitWithEvents, type EventDeps } from '../core/events.ts';
import type { Actor } from '../core/scopes.ts';
import { httpsUrl, httpUrl } from '../core/validation.ts';
import { COMPANY_ASSETS, presentCompanyAssets, type OfferedNetwork } from '../domain/assets.ts';
import { MODES } from '../domain/modes.ts';

export const MAX_STORE_NAME_LENGTH = 200;

const assetMessage = { message: `must be one of: ${COMPANY_ASSETS.join(', ')}` };

/** PATCH: only the fields named change; null (or "" for the logo) clears the logo and the default redirect. */
export const storeSettingsPatchSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(MAX_STORE_NAME_LENGTH).optional(),
  logoUrl: z.union([z.literal(''), httpsUrl]).nullable().optional(),
  redirectURL: httpUrl.nullable().optional(),
  acceptedAssets: z
    .array(z.enum(COMPANY_ASSETS, assetMessage))
    .min(1, 'must name at least one asset (clients could pay in nothing otherwise)')
    .max(COMPANY_ASSETS.length)
    .refine((a) => new Set(a).size === a.length, 'must not name an asset twice')
    .optional(),
  isMerchantPaysFee: z.boolean().optional(),
});
export type StoreSettingsPatch = z.output<typeof storeSettingsPatchSchema>;

export const storeSettingsSchema = z
  .strictObject({
    name: z.string().meta({ description: 'Shown on the checkout page.' }),
    logoUrl: z.string().meta({ description: 'An https URL of the logo the checkout page shows; empty when none.' }),
    redirectURL: z.string().nullable().meta({ description: 'Where the checkout page sends the client once paid when the invoice names no redirectURL; null: nowhere.' }),
    acceptedAssets: z.array(z.enum(COMPANY_ASSETS)).meta({ description: 'The assets clients may pay in (where this mode offers them).' }),
    isMerchantPaysFee: z.boolean().meta({ description: 'isMerchantPaysFee of a new invoice (or payment link) that does not say.' }),
    assets: z
      .array(z.strictObject({ asset: z.enum(COMPANY_ASSETS), isAllowed: z.boolean() }))
      .meta({ description: 'Every asset with whether clients may pay in it in this mode: accepted and offered (as the invoice’s company.assets).' }),
    mode: z.enum(MODES).meta({ description: 'The caller’s mode (what `assets` is computed for); the settings themselves are the account’s, shared by both modes.' }),
  })
  .meta({ id: 'StoreSettings' });

export type StoreRow = Pick<Company, 'name' | 'logoUrl' | 'redirectUrl' | 'acceptedAssets' | 'isMerchantPaysFee' | 'mode'>;

export interface StoreSettingsView {
  name: string;
  logoUrl: string;
  redirectURL: string | null;
  acceptedAssets: (typeof COMPANY_ASSETS)[number][];
  isMerchantPaysFee: boolean;
  assets: { asset: (typeof COMPANY_ASSETS)[number]; isAllowed: boolean }[];
  mode: Company['mode'];
}

export const presentStoreSettings = (c: StoreRow, offered: OfferedNetwork): StoreSettingsView => ({
  name: c.name,
  logoUrl: c.logoUrl,
  redirectURL: c.redirectUrl,
  acceptedAssets: COMPANY_ASSETS.filter((a) => c.acceptedAssets.includes(a)),
  isMerchantPaysFee: c.isMerchantPaysFee,
  assets: presentCompanyAssets(c.acceptedAssets, offered),
  mode: c.mode,
});

/** The settings as stored now (never the cached row a token lookup carries). */
export const getStoreSettings = (db: Prisma.TransactionClient, companyId: string): Promise<Company> => db.company.findUniqueOrThrow({ where: { id: companyId } });

type Stored = Pick<Company, 'name' | 'logoUrl' | 'redirectUrl' | 'acceptedAssets' | 'isMerchantPaysFee'>;

/** The columns a patch writes, by the name the API gives them. */
function changesOf(current: Stored, patch: StoreSettingsPatch): { data: Partial<Stored>; changes: Record<string, { from: Prisma.InputJsonValue | null; to: Prisma.InputJsonValue | null }> } {
  const wanted: Partial<Stored> = {};
  if (patch.name !== undefined) wanted.name = patch.name;
  if (patch.logoUrl !== undefined) wanted.logoUrl = patch.logoUrl ?? '';
  if (patch.redirectURL !== undefined) wanted.redirectUrl = patch.redirectURL;
  if (patch.acceptedAssets !== undefined) wanted.acceptedAssets = COMPANY_ASSETS.filter((a) => patch.acceptedAssets!.includes(a));
  if (patch.isMerchantPaysFee !== undefined) wanted.isMerchantPaysFee = patch.isMerchantPaysFee;
  const apiName: Record<keyof Stored, string> = { name: 'name', logoUrl: 'logoUrl', redirectUrl: 'redirectURL', acceptedAssets: 'acceptedAssets', isMerchantPaysFee: 'isMerchantPaysFee' };
  const data: Partial<Stored> = {};
  const changes: Record<string, { from: Prisma.InputJsonValue | null; to: Prisma.InputJsonValue | null }> = {};
  for (const [column, value] of Object.entries(wanted) as [keyof Stored, Stored[keyof Stored]][]) {
    if (JSON.stringify(current[column]) === JSON.stringify(value)) continue;
    Object.assign(data, { [column]: value });
    changes[apiName[column]] = { from: current[column] as Prisma.InputJsonValue | null, to: value as Prisma.InputJsonValue | null };
  }
  return { data, changes };
}

/**
 * Applies a patch to the account's store (both tenants), recording what changed in each tenant's audit log. A patch
 * that changes nothing writes nothing. Answers the caller's tenant as it is after the change.
 */
export async function updateStoreSettings(deps: EventDeps, company: Pick<Company, 'id' | 'accountId' | 'mode'>, actor: Actor, patch: StoreSettingsPatch): Promise<Company> {
  return commitWithEvents(deps, async (tx) => {
    // Both tenants locked in one order (by mode): concurrent patches apply one after the other, each audited against
    // what the other left.
    const tenants = await tx.$queryRaw<{ id: string }[]>`
      SELECT "id" FROM "Company" WHERE "accountId" = ${company.accountId}::uuid ORDER BY "mode" FOR UPDATE`;
    const current = await getStoreSettings(tx, company.id);
    const { data, changes } = changesOf(current, patch);
    if (Object.keys(changes).length === 0) return current;
    await tx.company.updateMany({ where: { accountId: company.accountId }, data });
    for (const tenant of tenants) {
      await recordAudit(tx, tenant.id, actor, 'store_settings.changed', { mode: company.mode, changes });
      // Token lookups cache the Company row: every instance drops this tenant's (core/auth.ts).
      await recordCredentialsChanged(tx, tenant.id, 'store_settings_changed');
    }
    return getStoreSettings(tx, company.id);
  });
}
