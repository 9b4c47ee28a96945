import { builder } from '../graphql/builder.ts';
import { CompanyAssetEnum, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { ValidationError } from '../errors/app-error.ts';
import { companyBalances, type AssetBalance } from '../ledger/balances.ts';
import { parseInput } from '../core/validation.ts';
import { presentCompanyAssets } from '../domain/assets.ts';
import { getUnderpaymentLimits, setUnderpaymentLimits, underpaymentLimitsSchema } from '../invoices/underpayment.ts';

const CompanyAssetSetting = builder
  .objectRef<ReturnType<typeof presentCompanyAssets>[number]>('CompanyAssetSetting')
  .implement({
    fields: (t) => ({
      asset: t.field({ type: CompanyAssetEnum, resolve: (a) => a.asset }),
      isAllowed: t.exposeBoolean('isAllowed'),
    }),
  });

builder.prismaObject('Company', {
  description: 'The merchant as a paying client sees it.',
  fields: (t) => ({
    name: t.exposeString('name'),
    logoUrl: t.exposeString('logoUrl'),
    assets: t.field({
      type: [CompanyAssetSetting],
      select: { acceptedAssets: true },
      resolve: (c) => presentCompanyAssets(c.acceptedAssets),
    }),
  }),
});

const BalanceType = builder.objectRef<AssetBalance>('Balance').implement({
  description: 'Money of the calling merchant in one payment currency (asset plus network).',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, resolve: (b) => b.asset as never }),
    available: t.field({ type: 'Decimal', resolve: (b) => b.available }),
    pending: t.field({ type: 'Decimal', description: 'Seen on chain, not yet confirmed.', resolve: (b) => b.pending }),
    suspense: t.field({ type: 'Decimal', description: 'Received in an asset an invoice did not expect.', resolve: (b) => b.suspense }),
  }),
});

builder.queryField('balances', (t) =>
  t.field({
    type: [BalanceType],
    authScopes: { merchant: true },
    resolve: (_root, _args, ctx) => companyBalances(ctx.db, ctx.company!.id),
  }),
);

interface LimitRow {
  asset: string;
  fixed: string | null;
  percent: string | null;
}

const UnderpaymentLimitType = builder.objectRef<LimitRow>('UnderpaymentLimit').implement({
  description: 'An invoice short by at most max(fixed, percent of its amount) counts as paid.',
  fields: (t) => ({
    asset: t.field({ type: CompanyAssetEnum, resolve: (l) => l.asset as never }),
    fixed: t.field({ type: 'Decimal', nullable: true, resolve: (l) => l.fixed }),
    percent: t.field({ type: 'Decimal', nullable: true, resolve: (l) => l.percent }),
  }),
});

const toRows = (limits: Record<string, { fixed: string | null; percent: string | null }>): LimitRow[] =>
  Object.entries(limits).map(([asset, l]) => ({ asset, ...l }));

builder.queryField('underpaymentLimits', (t) =>
  t.field({
    type: [UnderpaymentLimitType],
    authScopes: { merchant: true },
    resolve: async (_root, _args, ctx) => toRows(await getUnderpaymentLimits(ctx.db, ctx.company!.id)),
  }),
);

const UnderpaymentLimitInput = builder.inputType('UnderpaymentLimitInput', {
  fields: (t) => ({
    asset: t.field({ type: CompanyAssetEnum, required: true }),
    fixed: t.field({ type: 'Decimal', required: false, description: 'In units of the asset.' }),
    percent: t.field({ type: 'Decimal', required: false, description: 'Of the invoice amount, 0 to 100.' }),
  }),
});

builder.mutationField('setUnderpaymentLimits', (t) =>
  t.field({
    type: [UnderpaymentLimitType],
    authScopes: { merchant: true },
    description: 'Sets the limits of the assets given; an entry with neither fixed nor percent removes that asset’s limit.',
    errors: { types: [ValidationError] },
    args: { limits: t.arg({ type: [UnderpaymentLimitInput], required: true }) },
    resolve: async (_root, { limits }, ctx) => {
      const body = { limits: Object.fromEntries(limits.map((l) => [l.asset, { fixed: l.fixed, percent: l.percent }])) };
      return toRows(await setUnderpaymentLimits(ctx.db, ctx.company!.id, parseInput(underpaymentLimitsSchema, body)));
    },
  }),
);
