// Autoswap rules (GET/PATCH /api/company/autoswap) and the sandbox venue's controls.
import type { Services } from '../core/feature.ts';
import { route, type Route } from '../http/router.ts';
import { autoswapRulesSchema, presentAutoswapRules, presentSandboxVenue, sandboxVenueViewSchema } from './presenter.ts';
import { autoswapPatchSchema } from './rules.ts';
import { listAutoswapRules, updateAutoswapRules } from './service.ts';
import { sandboxVenueSchema, sandboxVenueSettings, setSandboxVenue } from './venues/sandbox.ts';

export const autoswapRoutes: Route<Services>[] = [
  route({
    method: 'GET',
    path: '/api/company/autoswap',
    auth: 'required',
    scope: 'payouts:read',
    doc: {
      operationId: 'listAutoswapRules',
      summary: 'List autoswap rules',
      description: 'One entry per payment currency; one never set is disabled, with no target and a slippage cap of 1 %.',
      tag: 'Autoswap',
      responses: { 200: { description: 'Every rule.', schema: autoswapRulesSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: presentAutoswapRules(await listAutoswapRules(ctx.db, req.company!.id)) }),
  }),
  route({
    method: 'PATCH',
    path: '/api/company/autoswap',
    auth: 'required',
    scope: 'payouts:write',
    body: autoswapPatchSchema,
    doc: {
      operationId: 'updateAutoswapRules',
      summary: 'Set autoswap rules',
      description:
        'Changes only the assets named (payment currency ids), all or nothing. An enabled rule needs a `toCurrency` other than the asset, with a route on a venue of this mode; `maxSlippagePercent` is 0.01 to 10 (two places) and keeps its value when left out. Answers the whole list (docs/autoswap.md).',
      tag: 'Autoswap',
      requestExample: { assets: { btc: { isEnabled: true, toCurrency: 'trc20usdt', maxSlippagePercent: '1' } } },
      responses: { 200: { description: 'Every rule, after the change.', schema: autoswapRulesSchema } },
    },
    handler: async (req, ctx) => ({ status: 200, body: presentAutoswapRules(await updateAutoswapRules(ctx.autoswap, req.company!, req.access!.actor, req.body)) }),
  }),
  route({
    method: 'GET',
    path: '/api/sandbox/autoswap-venue',
    auth: 'required',
    testModeOnly: true,
    scope: 'payouts:read',
    doc: {
      operationId: 'getSandboxSwapVenue',
      summary: 'Sandbox: how the sandbox venue fills swaps',
      description: 'Test mode only (a live-mode token gets 403).',
      tag: 'Sandbox',
      responses: { 200: { description: 'The settings.', schema: sandboxVenueViewSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentSandboxVenue(await sandboxVenueSettings(ctx.db, req.company!.id)) }),
  }),
  route({
    method: 'PUT',
    path: '/api/sandbox/autoswap-venue',
    auth: 'required',
    testModeOnly: true,
    scope: 'payouts:write',
    body: sandboxVenueSchema,
    doc: {
      operationId: 'setSandboxSwapVenue',
      summary: 'Sandbox: set how the sandbox venue fills swaps',
      description:
        'Test mode only (a live-mode token gets 403). `slippagePercent`: fills are this much worse than the test rate (beyond a rule’s `maxSlippagePercent` the fill is refused and the swap fails); `feePercent`: the venue’s fee; `behaviour`: `fill` at once, `hold` orders pending, `down` (takes no new orders: their swaps are retried, then fail). Fields left out keep their value.',
      tag: 'Sandbox',
      requestExample: { slippagePercent: '0.5', feePercent: '0.3', behaviour: 'fill' },
      responses: { 200: { description: 'The settings now.', schema: sandboxVenueViewSchema } },
      errors: [403],
    },
    handler: async (req, ctx) => ({ status: 200, body: presentSandboxVenue(await setSandboxVenue(ctx.db, req.company!.id, req.body)) }),
  }),
];
