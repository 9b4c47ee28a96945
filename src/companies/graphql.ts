import { builder } from '../graphql/builder.ts';
import { CompanyAssetEnum } from '../graphql/enums.ts';
import { presentCompanyAssets } from './service.ts';

const CompanyAssetSetting = builder
  .objectRef<ReturnType<typeof presentCompanyAssets>[number]>('CompanyAssetSetting')
  .implement({
    fields: (t) => ({
      asset: t.field({ type: CompanyAssetEnum, resolve: (a) => a.asset }),
      isAllowed: t.exposeBoolean('isAllowed'),
    }),
  });

export const CompanyType = builder.prismaObject('Company', {
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
