// Merchant settings and money: underpayment limits and balances.
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { getUnderpaymentLimits, setUnderpaymentLimits, underpaymentLimitsAnswerSchema, underpaymentLimitsSchema } from '../invoices/underpayment.ts';
import { z } from 'zod';
import { decimalString } from '../http/schemas.ts';
import { companyBalances } from '../ledger/balances.ts';
import { offeredIn } from '../chains/offered.ts';
import { getStoreSettings, presentStoreSettings, storeSettingsPatchSchema, storeSettingsSchema, updateStoreSettings } from './store.ts';

const TAG = 'Merchant';

export const balancesSchema = z
  .strictObject({
    balances: z.array(
      z
        .strictObject({
          asset: z.string().meta({ description: 'Payment currency (asset plus network).' }),
          available: decimalString.meta({ description: 'Confirmed money a withdrawal or refund may take.' }),
          held: decimalString.meta({ description: 'Taken by withdrawals and autoswaps in flight: back to available if rejected or failed, gone when done.' }),
          pending: decimalString.meta({ description: 'Seen on chain for open invoices and static addresses, not yet confirmed.' }),
          suspense: decimalString.meta({ description: 'Received in an asset or network an invoice did not expect; held apart.' }),
        })
        .meta({ id: 'Balance' }),
    ),
  })
  .meta({ id: 'Balances' });

export const companyRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/company/settings/store',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'getStoreSettings',
      summary: 'Read the store settings',
      description: 'The store’s name, logo, default redirect, accepted assets and fee default: the account’s, shared by test and live mode (docs/api-decisions.md, "Store settings"). `assets` shows what clients may pay in, in the token’s mode.',
      tag: TAG,
      responses: { 200: { description: 'The settings.', schema: storeSettingsSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: presentStoreSettings(await getStoreSettings(ctx.db, req.company!.id), offeredIn(ctx.invoices.chains, req.company!.mode)) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/settings/store',
    auth: 'required',
    scope: 'settings:write',
    body: storeSettingsPatchSchema,
    doc: {
      operationId: 'updateStoreSettings',
      summary: 'Change the store settings',
      description:
        'Only the fields named change, for both modes (the store is the account’s; docs/api-decisions.md, "Store settings"). `logoUrl`: https only (the checkout page loads it), `""` or null removes it; `redirectURL`: null removes the default; `acceptedAssets`: at least one. Each change is in the audit log (`store_settings.changed`).',
      tag: TAG,
      requestExample: { name: 'Acme Coffee', logoUrl: 'https://shop.example/logo.png', redirectURL: 'https://shop.example/thanks', acceptedAssets: ['btc', 'usdt'], isMerchantPaysFee: true },
      responses: { 200: { description: 'The settings after the change.', schema: storeSettingsSchema } },
    },
    handler: async (req, ctx) => {
      const company = await updateStoreSettings(ctx.store, req.company!, req.access!.actor, req.body);
      return { status: 200, body: presentStoreSettings(company, offeredIn(ctx.invoices.chains, company.mode)) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    scope: 'settings:read',
    doc: {
      operationId: 'getUnderpaymentLimits',
      summary: 'Read the underpayment limits',
      tag: TAG,
      responses: { 200: { description: 'The limits set.', schema: underpaymentLimitsAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: { limits: await getUnderpaymentLimits(ctx.db, req.company!.id) } }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/underpayment-limits',
    auth: 'required',
    scope: 'settings:write',
    body: underpaymentLimitsSchema,
    doc: {
      operationId: 'setUnderpaymentLimits',
      summary: 'Set underpayment limits',
      description: 'Per asset, how short a payment may be and still make the invoice `done`: max(fixed, percent of the amount due), never more than the service maximum. null removes an asset\'s limit; assets not named stay as they are.',
      tag: TAG,
      requestExample: { limits: { usdt: { fixed: '0.5', percent: null }, btc: null } },
      responses: { 200: { description: 'Every limit, after the change.', schema: underpaymentLimitsAnswerSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: { limits: await setUnderpaymentLimits(ctx.db, req.company!.id, req.body) } }),
  }),
  route({
    method: 'GET',
    path: '/api/company/balances',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'getBalances',
      summary: 'Read the balances',
      description: 'Per payment currency the merchant has money in (docs/withdrawals.md).',
      tag: TAG,
      responses: { 200: { description: 'The balances.', schema: balancesSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: { balances: await companyBalances(ctx.db, req.company!.id, ctx.balanceAccounts) } }),
  }),
];
