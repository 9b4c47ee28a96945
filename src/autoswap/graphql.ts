// Autoswap for GraphQL clients: the same schemas and service functions as the REST paths.
import type { AutoSwap } from '../../generated/prisma/client.ts';
import type { BusMessage } from '../core/bus.ts';
import { requireTestMode } from '../core/tenants.ts';
import { parseInput } from '../core/validation.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome, type GraphQLContext } from '../graphql/builder.ts';
import { PaymentCurrencyEnum } from '../graphql/enums.ts';
import { nodeIdFormats, ownCompanyAsset, registerNodeType } from '../graphql/node-ids.ts';
import { AFTER_DESCRIPTION, liveEvents, liveResolver, parseLiveCursor } from '../graphql/live.ts';
import { AUTOSWAP_QUEUED } from './declarations.ts';
import { AutoswapType } from './graphql-types.ts';
import { autoswapPatchSchema, type AutoswapRule } from './rules.ts';
import { listAutoswapRules, updateAutoswapRules } from './service.ts';
import { SANDBOX_BEHAVIOURS, sandboxVenueSchema, setSandboxVenue, type SandboxVenueSettings } from './venues/sandbox.ts';

registerNodeType('AutoswapRule', nodeIdFormats.companyAsset);

type RuleShape = AutoswapRule & { companyId: string };

const AutoswapRuleType = builder.node(builder.objectRef<RuleShape>('AutoswapRule'), {
  id: { resolve: (r) => `${r.companyId}:${r.asset}` },
  loadMany: async (keys, ctx) => {
    const rules = ctx.company ? await listAutoswapRules(ctx.db, ctx.company.id) : [];
    return keys.map((key) => {
      const rule = rules.find((r) => r.asset === ownCompanyAsset(ctx, key, 'payouts:read'));
      return rule ? { ...rule, companyId: ctx.company!.id } : null;
    });
  },
  description: 'The merchant’s autoswap rule for one payment currency (REST: one `autoswaps` entry).',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, description: 'The payment currency whose credits are swapped.', resolve: (r) => r.asset }),
    isEnabled: t.exposeBoolean('isEnabled', { description: 'Whether the rule acts.' }),
    toCurrency: t.field({ type: PaymentCurrencyEnum, nullable: true, description: 'What credits are swapped to; null while never set.', resolve: (r) => r.toCurrency }),
    maxSlippagePercent: t.field({ type: 'Decimal', description: 'A fill worse than the rate at submission less this share fails the swap.', resolve: (r) => r.maxSlippagePercent }),
  }),
});

const rulesOf = (ctx: GraphQLContext, rules: AutoswapRule[]): RuleShape[] => rules.map((r) => ({ ...r, companyId: ctx.company!.id }));

builder.queryField('autoswapRules', (t) =>
  t.field({
    type: [AutoswapRuleType],
    authScopes: { scope: 'payouts:read' },
    description: 'One autoswap rule per payment currency (REST GET /api/company/autoswap).',
    resolve: async (_root, _args, ctx) => rulesOf(ctx, await listAutoswapRules(ctx.db, ctx.company!.id)),
  }),
);

const AutoswapRuleInput = builder.inputType('AutoswapRuleInput', {
  description: 'The new rule for one payment currency.',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, required: true, description: 'The payment currency.' }),
    isEnabled: t.boolean({ required: true, description: 'Whether the rule acts.' }),
    toCurrency: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Required when enabled: another payment currency with a route in this mode.' }),
    maxSlippagePercent: t.field({ type: 'Decimal', required: false, description: '0.01 to 10; left out: unchanged.' }),
  }),
});

builder.mutationField('updateAutoswapRules', (t) =>
  t.field({
    type: [AutoswapRuleType],
    authScopes: { scope: 'payouts:write' },
    description: 'Sets the autoswap rules of the named payment currencies, all or none (REST PATCH /api/company/autoswap); answers every rule.',
    errors: mutationOutcome('autoswapRules', 'Every rule after the change.', [ValidationError]),
    args: { rules: t.arg({ type: [AutoswapRuleInput], required: true, description: 'One per payment currency to change.' }) },
    resolve: async (_root, { rules }, ctx) => {
      const assets = Object.fromEntries(rules.map(({ asset, ...rule }) => [asset, rule]));
      if (Object.keys(assets).length !== rules.length) throw new ValidationError([{ path: 'rules', message: 'names an asset twice' }]);
      return rulesOf(ctx, await updateAutoswapRules(ctx.autoswap, ctx.company!, ctx.access!.actor, parseInput(autoswapPatchSchema, { assets })));
    },
  }),
);

async function autoswapAt(ctx: GraphQLContext, m: BusMessage): Promise<AutoSwap> {
  const s = await ctx.db.autoSwap.findUnique({ where: { id: m.subject.id! } });
  if (!s) throw new NotFoundError(`No autoswap ${m.subject.id}`);
  return s;
}

builder.subscriptionField('autoswapEvents', (t) =>
  t.field({
    type: AutoswapType,
    authScopes: { scope: 'payouts:read' },
    description: 'Every autoswap of the calling merchant as it is done or fails (the same as its webhooks), in commit order. With `after`: first the changes since that cursor.',
    args: { after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }) },
    subscribe: (_root, { after }, ctx) => liveEvents(ctx, { subjectType: 'autoswap', companyId: ctx.company!.id, exceptTypes: [AUTOSWAP_QUEUED] }, parseLiveCursor(after)),
    resolve: liveResolver(autoswapAt),
  }),
);

const SandboxBehaviourEnum = builder.enumType('SandboxSwapBehaviour', {
  description: 'How the sandbox venue answers.',
  values: Object.fromEntries(SANDBOX_BEHAVIOURS.map((b) => [b.toUpperCase(), { value: b, description: `REST: "${b}".` }])) as Record<'FILL' | 'HOLD' | 'DOWN', { value: (typeof SANDBOX_BEHAVIOURS)[number]; description: string }>,
});

const SandboxSwapVenueType = builder.objectRef<SandboxVenueSettings>('SandboxSwapVenue').implement({
  description: 'How the sandbox venue fills this merchant’s swaps (test mode).',
  fields: (t) => ({
    slippagePercent: t.field({ type: 'Decimal', description: 'Fills are this much worse than the test rate.', resolve: (s) => s.slippagePercent }),
    feePercent: t.field({ type: 'Decimal', description: 'The venue’s fee in percent of the output.', resolve: (s) => s.feePercent }),
    behaviour: t.field({ type: SandboxBehaviourEnum, description: 'fill, hold or down.', resolve: (s) => s.behaviour }),
  }),
});

builder.mutationField('setSandboxSwapVenue', (t) =>
  t.field({
    type: SandboxSwapVenueType,
    authScopes: { scope: 'payouts:write' },
    description: 'Test mode only: how the sandbox venue fills swaps (REST PUT /api/sandbox/autoswap-venue).',
    errors: mutationOutcome('venue', 'The settings now.', [ValidationError, ForbiddenError]),
    args: {
      slippagePercent: t.arg({ type: 'Decimal', required: false, description: 'Simulated slippage in percent.' }),
      feePercent: t.arg({ type: 'Decimal', required: false, description: 'Simulated venue fee in percent.' }),
      behaviour: t.arg({ type: SandboxBehaviourEnum, required: false, description: 'fill, hold or down.' }),
    },
    resolve: async (_root, args, ctx) => {
      requireTestMode(ctx.company!);
      const input = parseInput(sandboxVenueSchema, { slippagePercent: args.slippagePercent ?? undefined, feePercent: args.feePercent ?? undefined, behaviour: args.behaviour ?? undefined });
      return setSandboxVenue(ctx.db, ctx.company!.id, input);
    },
  }),
);
