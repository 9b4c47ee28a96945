import { builder, mutationOutcome } from '../graphql/builder.ts';
import { CompanyAssetEnum, ModeEnum, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { offeredIn } from '../chains/offered.ts';
import { nodeIdFormats, ownCompanyAsset, registerNodeType } from '../graphql/node-ids.ts';
import { ValidationError } from '../errors/app-error.ts';
import { companyBalances, type AssetBalance } from '../ledger/balances.ts';
import { parseInput } from '../core/validation.ts';
import { presentCompanyAssets } from '../domain/assets.ts';
import { getStoreSettings, presentStoreSettings, storeSettingsPatchSchema, updateStoreSettings, type StoreSettingsView } from './store.ts';
import { getUnderpaymentLimits, setUnderpaymentLimits, underpaymentLimitsSchema } from '../invoices/underpayment.ts';

registerNodeType('Company', nodeIdFormats.uuid);
registerNodeType('Balance', nodeIdFormats.companyAsset);
registerNodeType('UnderpaymentLimit', nodeIdFormats.companyAsset);

const CompanyAssetSetting = builder
  .objectRef<ReturnType<typeof presentCompanyAssets>[number]>('CompanyAssetSetting')
  .implement({
    description: 'Whether the merchant accepts one asset.',
    fields: (t) => ({
      asset: t.field({ type: CompanyAssetEnum, description: 'The asset.', resolve: (a) => a.asset }),
      isAllowed: t.exposeBoolean('isAllowed', { description: 'Clients may pay in it.' }),
    }),
  });

builder.prismaNode('Company', {
  description: 'The merchant as a paying client sees it.',
  id: { field: 'id' },
  nullable: true,
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Shown on the checkout page.' }),
    logoUrl: t.exposeString('logoUrl', { description: 'Logo shown on the checkout page.' }),
    assets: t.field({
      type: [CompanyAssetSetting],
      description: 'Every asset, with whether clients may pay in it: the merchant accepts it and its mode offers it (live mode: a network with a node).',
      select: { acceptedAssets: true, mode: true },
      resolve: (c, _args, ctx) => presentCompanyAssets(c.acceptedAssets, offeredIn(ctx.invoices.chains, c.mode)),
    }),
    mode: t.field({ type: ModeEnum, description: 'The mode of this side of the merchant: the token’s (docs/modes.md).', resolve: (c) => c.mode }),
  }),
});


builder.queryField('viewer', (t) =>
  t.prismaField({
    type: 'Company',
    authScopes: { merchant: true },
    description: 'The calling merchant (the company behind the token), e.g. to show who is signed in to a dashboard.',
    resolve: (query, _root, _args, ctx) => ctx.db.company.findUniqueOrThrow({ ...query, where: { id: ctx.company!.id } }),
  }),
);

type BalanceShape = AssetBalance & { companyId: string };

const BalanceType = builder.node(builder.objectRef<BalanceShape>('Balance'), {
  id: { resolve: (b) => `${b.companyId}:${b.asset}` },
  loadMany: async (keys, ctx) => {
    const balances = ctx.company ? await companyBalances(ctx.db, ctx.company.id, ctx.balanceAccounts) : [];
    return keys.map((key) => {
      const balance = balances.find((b) => b.asset === ownCompanyAsset(ctx, key, 'payouts:read'));
      return balance ? { ...balance, companyId: ctx.company!.id } : null;
    });
  },
  description: 'Money of the calling merchant in one payment currency (asset plus network).',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, description: 'The payment currency.', resolve: (b) => b.asset as never }),
    mode: t.field({ type: ModeEnum, description: 'The mode of this money (the token’s).', resolve: (_b, _args, ctx) => ctx.company!.mode }),
    available: t.field({ type: 'Decimal', description: 'Confirmed and free to withdraw.', resolve: (b) => b.available }),
    held: t.field({
      type: 'Decimal',
      description: 'Taken by withdrawals in flight (amount plus fee): back to available if rejected, gone when done.',
      resolve: (b) => b.held,
    }),
    pending: t.field({ type: 'Decimal', description: 'Seen on chain, not yet confirmed.', resolve: (b) => b.pending }),
    suspense: t.field({ type: 'Decimal', description: 'Received in an asset an invoice did not expect.', resolve: (b) => b.suspense }),
  }),
});

builder.queryField('balances', (t) =>
  t.field({
    type: [BalanceType],
    authScopes: { scope: 'payouts:read' },
    description: 'The calling merchant’s balances, one per payment currency it ever received (REST GET /api/company/balances).',
    resolve: async (_root, _args, ctx) => (await companyBalances(ctx.db, ctx.company!.id, ctx.balanceAccounts)).map((b) => ({ ...b, companyId: ctx.company!.id })),
  }),
);

interface LimitRow {
  companyId: string;
  asset: string;
  fixed: string | null;
  percent: string | null;
}

const toRows = (companyId: string, limits: Record<string, { fixed: string | null; percent: string | null }>): LimitRow[] =>
  Object.entries(limits).map(([asset, l]) => ({ companyId, asset, ...l }));

const UnderpaymentLimitType = builder.node(builder.objectRef<LimitRow>('UnderpaymentLimit'), {
  id: { resolve: (l) => `${l.companyId}:${l.asset}` },
  loadMany: async (keys, ctx) => {
    const rows = ctx.company ? toRows(ctx.company.id, await getUnderpaymentLimits(ctx.db, ctx.company.id)) : [];
    return keys.map((key) => rows.find((r) => r.asset === ownCompanyAsset(ctx, key, 'settings:read')) ?? null);
  },
  description: 'An invoice short by at most max(fixed, percent of its amount) counts as paid.',
  fields: (t) => ({
    asset: t.field({ type: CompanyAssetEnum, description: 'The asset it applies to (every network of it).', resolve: (l) => l.asset as never }),
    fixed: t.field({ type: 'Decimal', nullable: true, description: 'Tolerated shortfall in units of the asset.', resolve: (l) => l.fixed }),
    percent: t.field({ type: 'Decimal', nullable: true, description: 'Tolerated shortfall in percent of the invoice amount.', resolve: (l) => l.percent }),
  }),
});

builder.queryField('underpaymentLimits', (t) =>
  t.field({
    type: [UnderpaymentLimitType],
    authScopes: { scope: 'settings:read' },
    description: 'The calling merchant’s underpayment limits, one per asset that has one.',
    resolve: async (_root, _args, ctx) => toRows(ctx.company!.id, await getUnderpaymentLimits(ctx.db, ctx.company!.id)),
  }),
);

const UnderpaymentLimitInput = builder.inputType('UnderpaymentLimitInput', {
  description: 'The limit of one asset.',
  fields: (t) => ({
    asset: t.field({ type: CompanyAssetEnum, required: true, description: 'The asset it applies to.' }),
    fixed: t.field({ type: 'Decimal', required: false, description: 'In units of the asset.' }),
    percent: t.field({ type: 'Decimal', required: false, description: 'Of the invoice amount, 0 to 100.' }),
  }),
});

const SetUnderpaymentLimitsInput = builder.inputType('SetUnderpaymentLimitsInput', {
  description: 'Limits to set; assets not listed keep theirs.',
  fields: (t) => ({
    limits: t.field({ type: [UnderpaymentLimitInput], required: true, description: 'One entry per asset.' }),
  }),
});

builder.mutationField('setUnderpaymentLimits', (t) =>
  t.field({
    type: [UnderpaymentLimitType],
    authScopes: { scope: 'settings:write' },
    description: 'Sets the limits of the assets given; an entry with neither fixed nor percent removes that asset’s limit.',
    errors: mutationOutcome('underpaymentLimits', 'Every limit of the merchant after the change.', [ValidationError]),
    args: { input: t.arg({ type: SetUnderpaymentLimitsInput, required: true, description: 'The limits to set.' }) },
    resolve: async (_root, { input }, ctx) => {
      const body = { limits: Object.fromEntries(input.limits.map((l) => [l.asset, { fixed: l.fixed, percent: l.percent }])) };
      return toRows(ctx.company!.id, await setUnderpaymentLimits(ctx.db, ctx.company!.id, parseInput(underpaymentLimitsSchema, body)));
    },
  }),
);

const StoreSettingsType = builder.objectRef<StoreSettingsView>('StoreSettings').implement({
  description: 'The store as its clients see it and the defaults of new invoices: the account’s, shared by test and live mode (docs/api-decisions.md, "Store settings").',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Shown on the checkout page.' }),
    logoUrl: t.exposeString('logoUrl', { description: 'An https URL of the logo the checkout page shows; empty when none.' }),
    redirectURL: t.exposeString('redirectURL', { nullable: true, description: 'Where the checkout page sends the client once paid when the invoice names no redirectURL; null: nowhere.' }),
    acceptedAssets: t.field({ type: [CompanyAssetEnum], description: 'The assets clients may pay in (where the mode offers them).', resolve: (s) => s.acceptedAssets }),
    isMerchantPaysFee: t.exposeBoolean('isMerchantPaysFee', { description: 'isMerchantPaysFee of a new invoice (or payment link) that does not say.' }),
    assets: t.field({
      type: [CompanyAssetSetting],
      description: 'Every asset with whether clients may pay in it in the caller’s mode: accepted and offered (as Company.assets).',
      resolve: (s) => s.assets,
    }),
    mode: t.field({ type: ModeEnum, description: 'The caller’s mode (what `assets` is computed for).', resolve: (s) => s.mode }),
  }),
});

builder.queryField('storeSettings', (t) =>
  t.field({
    type: StoreSettingsType,
    authScopes: { scope: 'settings:read' },
    description: 'The calling merchant’s store settings (REST GET /api/company/settings/store).',
    resolve: async (_root, _args, ctx) => presentStoreSettings(await getStoreSettings(ctx.db, ctx.company!.id), offeredIn(ctx.invoices.chains, ctx.company!.mode)),
  }),
);

const UpdateStoreSettingsInput = builder.inputType('UpdateStoreSettingsInput', {
  description: 'The settings to change; fields left out stay as they are (REST PATCH /api/company/settings/store).',
  fields: (t) => ({
    name: t.string({ required: false, description: 'Shown on the checkout page (1 to 200 characters).' }),
    logoUrl: t.string({ required: false, description: 'An https URL without credentials; "" or null removes the logo.' }),
    redirectURL: t.string({ required: false, description: 'An http(s) URL; null removes the default redirect.' }),
    acceptedAssets: t.field({ type: [CompanyAssetEnum], required: false, description: 'The assets clients may pay in: at least one.' }),
    isMerchantPaysFee: t.boolean({ required: false, description: 'Who pays the fee of a new invoice that does not say.' }),
  }),
});

builder.mutationField('updateStoreSettings', (t) =>
  t.field({
    type: StoreSettingsType,
    authScopes: { scope: 'settings:write' },
    description: 'Changes the fields given, for both modes; each change is in the audit log (STORE_SETTINGS_CHANGED).',
    errors: mutationOutcome('storeSettings', 'The settings after the change.', [ValidationError]),
    args: { input: t.arg({ type: UpdateStoreSettingsInput, required: true, description: 'The fields to change.' }) },
    resolve: async (_root, { input }, ctx) => {
      // A field given as null in GraphQL is kept as null (it clears); one left out is undefined (unchanged).
      const company = await updateStoreSettings(ctx.store, ctx.company!, ctx.access!.actor, parseInput(storeSettingsPatchSchema, input));
      return presentStoreSettings(company, offeredIn(ctx.invoices.chains, company.mode));
    },
  }),
);
