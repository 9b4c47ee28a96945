// Withdrawals for GraphQL clients: the same edge schemas and service functions as the REST paths.
import { parseInput } from '../core/validation.ts';
import type { PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, toMoney } from '../domain/money.ts';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { BusMessage } from '../core/bus.ts';
import { Prisma, type Withdrawal } from '../../generated/prisma/client.ts';
import { AFTER_DESCRIPTION, currentThenEvents, liveEvents, liveResolver, parseLiveCursor, withLastEvent } from '../graphql/live.ts';
import { builder, mutationOutcome, type GraphQLContext } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { ModeEnum, MoneyType, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, ownCompanyAsset, registerNodeType } from '../graphql/node-ids.ts';
import { withdrawableNow } from './withdrawable.ts';
import { autoWithdrawalsPatchSchema, listAutoWithdrawals, updateAutoWithdrawals, type AutoWithdrawalRule } from './auto.ts';
import { quoteWithdrawal, withdrawItemSchema, withdrawRequestSchema } from './rules.ts';
import { confirmSandboxWithdrawal, rejectSandboxWithdrawal } from './sandbox.ts';
import { withdraw } from './hold.ts';
import type { WithdrawalStatus } from './model.ts';
import { getWithdrawal, withdrawalListOrder, withdrawalListWhere } from './queries.ts';

registerNodeType('Withdrawal', nodeIdFormats.uuid);
registerNodeType('AutoWithdrawalRule', nodeIdFormats.companyAsset);

const UUID = nodeIdFormats.uuid;

const WithdrawalStatusEnum = builder.enumType('WithdrawalStatus', {
  description: 'Where a withdrawal stands (the webhook `status`).',
  values: {
    PROCESSING: { value: 'processing', description: 'Accepted and held; on its way to or on the chain. REST: "processing".' },
    DONE: { value: 'done', description: 'Complete on chain; the money left the balance. REST: "done".' },
    REJECTED: { value: 'rejected', description: 'Blocked by the risk checks or failed on chain; the money is available again. REST: "rejected".' },
  } as const,
});

const WithdrawalOriginEnum = builder.enumType('WithdrawalOrigin', {
  description: 'What started a withdrawal.',
  values: {
    API: { value: 'api', description: 'A withdraw call (REST or GraphQL). REST: "api".' },
    AUTO: { value: 'auto', description: 'An auto-withdrawal rule, on a credit that reached its threshold. REST: "auto".' },
  } as const,
});

const WithdrawalType = builder.prismaNode('Withdrawal', {
  description: 'A payout from the merchant’s balance to an outside address.',
  id: { field: 'uid' },
  findUnique: (uid, ctx) => ({ uid, companyId: callerCompanyId(ctx, 'payouts:read') }),
  nullable: true,
  fields: (t) => ({
    uid: t.exposeID('uid', { description: 'The uid of the withdraw answer and of its webhooks.' }),
    mode: t.field({ type: ModeEnum, description: 'The mode it belongs to (the token’s).', select: { company: { select: { mode: true } } }, resolve: (w) => w.company.mode }),
    status: t.field({ type: WithdrawalStatusEnum, description: 'Where it stands.', resolve: (w) => w.status as WithdrawalStatus }),
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What is sent (asset plus network).', resolve: (w) => w.asset as never }),
    amount: t.field({ type: 'Decimal', description: 'Net amount the receiver gets.', resolve: (w) => formatPlain(w.amount) }),
    fee: t.field({ type: 'Decimal', description: 'Network fee, charged on top of the amount.', resolve: (w) => formatPlain(w.fee) }),
    total: t.field({
      type: MoneyType,
      description: 'Amount plus fee: what it takes from the balance, with its currency.',
      resolve: (w) => ({ amount: formatPlain(toMoney(w.amount).plus(toMoney(w.fee))), currency: w.asset }),
    }),
    to: t.exposeString('toAddress', { description: 'The receiver address.' }),
    tag: t.exposeString('tag', { nullable: true, description: 'The receiver tag (TON); null elsewhere.' }),
    txHash: t.exposeString('txHash', { nullable: true, description: 'The transaction hash once the chain has it; null before.' }),
    origin: t.field({ type: WithdrawalOriginEnum, description: 'What started it.', resolve: (w) => w.origin as 'api' | 'auto' }),
    rejectReason: t.exposeString('rejectReason', { nullable: true, description: 'Why it was rejected, when it was.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was accepted.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true, description: 'When the chain took the transaction.' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true, description: 'When it became done or rejected.' }),
  }),
});

builder.queryField('withdrawal', (t) =>
  t.prismaField({
    type: WithdrawalType,
    nullable: true,
    authScopes: { scope: 'payouts:read' },
    description: 'One withdrawal of the calling merchant by its uid; null when there is none.',
    args: { uid: t.arg.id({ required: true, description: 'The uid from the withdraw answer or a webhook.' }) },
    resolve: (query, _root, { uid }, ctx) =>
      UUID.test(String(uid)) ? ctx.db.withdrawal.findFirst({ ...query, where: { uid: String(uid), companyId: ctx.company!.id } }) : null,
  }),
);

const WithdrawalFilter = builder.inputType('WithdrawalFilter', {
  description: 'Narrows the withdrawal list; every condition given must hold.',
  fields: (t) => ({
    status: t.field({ type: [WithdrawalStatusEnum], required: false, description: 'Any of these statuses.' }),
    asset: t.field({ type: [PaymentCurrencyEnum], required: false, description: 'Any of these payment currencies.' }),
  }),
});

const filterOf = (f: { status?: string[] | null; asset?: string[] | null } | null | undefined) => ({
  status: f?.status ?? undefined,
  asset: f?.asset ?? undefined,
});

builder.queryField('withdrawals', (t) =>
  t.prismaConnection(
    {
      type: WithdrawalType,
      cursor: 'uid',
      authScopes: { scope: 'payouts:read' },
      description: 'The calling merchant’s withdrawals, newest first (one call’s items in request order).',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: WithdrawalFilter, required: false, description: 'Only the withdrawals that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.withdrawal.findMany({ ...query, where: withdrawalListWhere(ctx.company!, filterOf(args.filter)), orderBy: withdrawalListOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.withdrawal.count({ where: withdrawalListWhere(ctx.company!, filterOf(args.filter)) });
      },
    },
    connectionNames('Withdrawal', 'withdrawals'),
    edgeNames('Withdrawal'),
  ),
);

interface ItemResultShape {
  success: boolean;
  message: string;
  uid: string;
}

const WithdrawItemResult = builder.objectRef<ItemResultShape>('WithdrawItemResult').implement({
  description: 'The outcome of one item of a withdraw call (REST: one element of the answer array).',
  fields: (t) => ({
    success: t.exposeBoolean('success', { description: 'Whether the item was accepted.' }),
    message: t.exposeString('message', { description: 'Human-readable outcome; for a refused item, why.' }),
    uid: t.id({ nullable: true, description: 'The new withdrawal’s uid; null when refused.', resolve: (r) => r.uid || null }),
    withdrawal: t.prismaField({
      type: 'Withdrawal',
      nullable: true,
      description: 'The new withdrawal; null when refused.',
      resolve: (query, r, _args, ctx) => (r.uid ? ctx.db.withdrawal.findUnique({ ...query, where: { uid: r.uid } }) : null),
    }),
  }),
});

const WithdrawItemInput = builder.inputType('WithdrawItemInput', {
  description: 'One payout of a withdraw call.',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, required: true, description: 'What to send (asset plus network).' }),
    amount: t.field({ type: 'Decimal', required: true, description: 'Net amount the receiver gets; the network fee is charged on top.' }),
    to: t.string({ required: true, description: 'The receiver address, in the format of the asset’s network.' }),
    tag: t.string({ required: false, description: 'The receiver tag: required for TON, empty or absent elsewhere.' }),
  }),
});

const WithdrawInput = builder.inputType('WithdrawInput', {
  description: 'One or many payouts (REST POST /api/transactions/withdraw).',
  fields: (t) => ({
    items: t.field({ type: [WithdrawItemInput], required: true, description: 'The payouts, 1 to 100.' }),
    idempotencyKey: t.string({ required: false, description: 'Same as the REST Idempotency-Key header: a retry with the same key and input answers the first results.' }),
  }),
});

builder.mutationField('withdraw', (t) =>
  t.field({
    type: [WithdrawItemResult],
    authScopes: { scope: 'payouts:write' },
    description:
      'Withdraws to one or many addresses. A malformed input is a ValidationError; otherwise every item gets a result in input order, refused items with `success: false` and why.',
    errors: mutationOutcome('results', 'One result per item, in input order.', [ValidationError, ConflictError]),
    args: { input: t.arg({ type: WithdrawInput, required: true, description: 'The payouts.' }) },
    resolve: async (_root, { input }, ctx) => {
      const request = parseInput(withdrawRequestSchema, { items: input.items.map((i) => ({ ...i, tag: i.tag ?? '' })) });
      return (await withdraw(ctx.withdrawals, ctx.company!, ctx.access!.actor, request, input.idempotencyKey)).results;
    },
  }),
);

interface QuoteShape {
  asset: PaymentCurrency;
  amount: string;
  fee: string;
  total: string;
  minimum: string;
  available: string;
  covered: boolean;
}

const WithdrawalQuoteType = builder.objectRef<QuoteShape>('WithdrawalQuote').implement({
  description: 'What one withdrawal would cost, before making it.',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, description: 'The payment currency.', resolve: (q) => q.asset }),
    amount: t.field({ type: 'Decimal', description: 'The net amount asked for.', resolve: (q) => q.amount }),
    fee: t.field({ type: 'Decimal', description: 'Network fee charged on top.', resolve: (q) => q.fee }),
    total: t.field({ type: 'Decimal', description: 'Amount plus fee: what it would take from the balance.', resolve: (q) => q.total }),
    minimum: t.field({ type: 'Decimal', description: 'The smallest amount of this asset a withdrawal may send.', resolve: (q) => q.minimum }),
    available: t.field({
      type: 'Decimal',
      description: 'What withdrawals may take now: the available balance less the fees invoices will still charge.',
      resolve: (q) => q.available,
    }),
    covered: t.boolean({ description: 'Whether that covers the total now (a later withdraw checks again, exactly).', resolve: (q) => q.covered }),
  }),
});

builder.queryField('withdrawalQuote', (t) =>
  t.field({
    type: WithdrawalQuoteType,
    authScopes: { scope: 'payouts:read' },
    description: 'The fee, the minimum and whether the balance covers a withdrawal of `amount`.',
    args: {
      asset: t.arg({ type: PaymentCurrencyEnum, required: true, description: 'What would be sent.' }),
      amount: t.arg({ type: 'Decimal', required: true, description: 'The net amount.' }),
    },
    resolve: async (_root, { asset, amount }, ctx) => {
      const item = parseInput(withdrawItemSchema, { asset, amount, to: '-', tag: '' });
      const q = quoteWithdrawal(item.asset, item.amount);
      const available = await withdrawableNow(ctx.withdrawals, ctx.company!.id, item.asset);
      return {
        asset: item.asset,
        amount: formatPlain(q.amount),
        fee: formatPlain(q.fee),
        total: formatPlain(q.total),
        minimum: formatPlain(q.minimum),
        available: formatPlain(available),
        covered: available.gte(q.total),
      };
    },
  }),
);

type RuleShape = AutoWithdrawalRule & { companyId: string };


const AutoWithdrawalRuleType = builder.node(builder.objectRef<RuleShape>('AutoWithdrawalRule'), {
  id: { resolve: (r) => `${r.companyId}:${r.asset}` },
  loadMany: async (keys, ctx) => {
    const rules = ctx.company ? await listAutoWithdrawals(ctx.db, ctx.company.id) : [];
    return keys.map((key) => {
      const rule = rules.find((r) => r.asset === ownCompanyAsset(ctx, key, 'payouts:read'));
      return rule ? { ...rule, companyId: ctx.company!.id } : null;
    });
  },
  description: 'The merchant’s auto-withdrawal rule for one payment currency (REST: one `autoWithdrawals` entry).',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, description: 'The payment currency (REST `assetId`).', resolve: (r) => r.asset }),
    threshold: t.field({ type: 'Decimal', description: 'A credit that brings the available balance to this or above sends it out (REST `amount`).', resolve: (r) => r.amount }),
    isEnabled: t.exposeBoolean('isEnabled', { description: 'Whether the rule acts.' }),
    withdrawalTag: t.exposeString('withdrawalTag', { nullable: true, description: 'Receiver tag (TON); null elsewhere.' }),
    withdrawalAddress: t.exposeString('withdrawalAddress', { description: 'Receiver address; empty while unset.' }),
  }),
});

const rulesOf = async (ctx: GraphQLContext, rules: AutoWithdrawalRule[]) => rules.map((r) => ({ ...r, companyId: ctx.company!.id }));

builder.queryField('autoWithdrawals', (t) =>
  t.field({
    type: [AutoWithdrawalRuleType],
    authScopes: { scope: 'payouts:read' },
    description: 'One auto-withdrawal rule per payment currency (unset ones disabled, threshold 0).',
    resolve: async (_root, _args, ctx) => rulesOf(ctx, await listAutoWithdrawals(ctx.db, ctx.company!.id)),
  }),
);

const AutoWithdrawalRuleInput = builder.inputType('AutoWithdrawalRuleInput', {
  description: 'The new rule for one payment currency.',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, required: true, description: 'The payment currency.' }),
    threshold: t.field({ type: 'Decimal', required: true, description: 'At least the minimum withdrawal plus its fee when enabled.' }),
    isEnabled: t.boolean({ required: true, description: 'Whether the rule acts.' }),
    withdrawalTag: t.string({ required: false, description: 'Required for TON; null elsewhere.' }),
    withdrawalAddress: t.string({ required: true, description: 'Receiver address, in the format of the asset’s network.' }),
  }),
});

const UpdateAutoWithdrawalsInput = builder.inputType('UpdateAutoWithdrawalsInput', {
  description: 'Rules to set (REST PATCH /api/company/auto-withdrawals); the assets not named keep theirs.',
  fields: (t) => ({
    rules: t.field({ type: [AutoWithdrawalRuleInput], required: true, description: 'One per payment currency to change.' }),
  }),
});

builder.mutationField('updateAutoWithdrawals', (t) =>
  t.field({
    type: [AutoWithdrawalRuleType],
    authScopes: { scope: 'payouts:write' },
    description: 'Sets the auto-withdrawal rules of the named payment currencies, all or none; answers every rule.',
    errors: mutationOutcome('autoWithdrawals', 'Every rule after the change.', [ValidationError]),
    args: { input: t.arg({ type: UpdateAutoWithdrawalsInput, required: true, description: 'The rules to set.' }) },
    resolve: async (_root, { input }, ctx) => {
      const assets = Object.fromEntries(input.rules.map(({ asset, threshold, ...rule }) => [asset, { ...rule, amount: threshold }]));
      if (Object.keys(assets).length !== input.rules.length) throw new ValidationError([{ path: 'rules', message: 'names an asset twice' }]);
      return rulesOf(ctx, await updateAutoWithdrawals(ctx.withdrawals, ctx.company!, ctx.access!.actor, parseInput(autoWithdrawalsPatchSchema, { assets })));
    },
  }),
);

const SandboxWithdrawalInput = builder.inputType('SandboxWithdrawalInput', {
  description: 'A withdrawal the sandbox chain has broadcast.',
  fields: (t) => ({ uid: t.id({ required: true, description: 'The withdrawal’s uid.' }) }),
});

const sandboxOutcome = (description: string) => mutationOutcome('withdrawal', description, [NotFoundError, ConflictError, ForbiddenError]);

builder.mutationField('confirmSandboxWithdrawal', (t) =>
  t.field({
    type: WithdrawalType,
    authScopes: { scope: 'payouts:write' },
    description: 'Sandbox only: the chain confirms a broadcast withdrawal, which becomes DONE (REST POST /api/sandbox/withdrawals/{uid}/confirm).',
    errors: sandboxOutcome('The withdrawal, DONE.'),
    args: { input: t.arg({ type: SandboxWithdrawalInput, required: true, description: 'The withdrawal.' }) },
    resolve: (_root, { input }, ctx) => confirmSandboxWithdrawal(ctx.withdrawals, ctx.company!, String(input.uid)),
  }),
);

builder.mutationField('rejectSandboxWithdrawal', (t) =>
  t.field({
    type: WithdrawalType,
    authScopes: { scope: 'payouts:write' },
    description: 'Sandbox only: the chain fails a broadcast withdrawal, which becomes REJECTED and releases its money (REST POST /api/sandbox/withdrawals/{uid}/reject).',
    errors: sandboxOutcome('The withdrawal, REJECTED.'),
    args: { input: t.arg({ type: SandboxWithdrawalInput, required: true, description: 'The withdrawal.' }) },
    resolve: (_root, { input }, ctx) => rejectSandboxWithdrawal(ctx.withdrawals, ctx.company!, String(input.uid)),
  }),
);

/** The withdrawal a message is about, with the status the message announced (a later change may be committed). */
async function withdrawalAt(ctx: GraphQLContext, m: BusMessage) {
  const w = await ctx.db.withdrawal.findUnique({ where: { uid: m.subject.id! } });
  if (!w) throw new NotFoundError(`No withdrawal with uid ${m.subject.id}`);
  const payload = (m.payload ?? {}) as { status?: string; txHash?: string };
  const status = payload.status;
  if (status !== 'processing' && status !== 'done' && status !== 'rejected') return w;
  // As the step's webhook said it: no hash yet on the first processing step.
  return { ...w, status, txHash: payload.txHash === undefined ? w.txHash : payload.txHash || null };
}

const resolveWithdrawal = liveResolver(withdrawalAt);

builder.subscriptionField('withdrawalStatusChanged', (t) =>
  t.field({
    type: WithdrawalType,
    authScopes: { scope: 'payouts:read' },
    description:
      'One withdrawal of the calling merchant: first as it stands, then once per webhook-worthy change (both processing steps, done or rejected). With `after`: the changes since that cursor instead of the current state.',
    args: {
      uid: t.arg.id({ required: true, description: 'The uid from the withdraw answer.' }),
      after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }),
    },
    subscribe: async (_root, { uid, after }, ctx) => {
      const company = ctx.company!;
      const cursor = parseLiveCursor(after);
      // Tenant and format checks first (NOT_FOUND for another merchant's uid).
      const withdrawalUid = (await getWithdrawal(ctx.withdrawals, company, String(uid))).uid;
      const filter = { subjectType: 'withdrawal', companyId: company.id, subjectId: withdrawalUid };
      return currentThenEvents(ctx, filter, cursor, async () => {
        const snapshot = await withLastEvent<Withdrawal>(ctx.db, { type: 'withdrawal', id: withdrawalUid }, Prisma.sql`SELECT * FROM "Withdrawal" WHERE "uid" = ${withdrawalUid}::uuid`);
        if (!snapshot) throw new NotFoundError(`No withdrawal with uid ${withdrawalUid}`);
        return snapshot;
      });
    },
    resolve: resolveWithdrawal,
  }),
);

builder.subscriptionField('withdrawalEvents', (t) =>
  t.field({
    type: WithdrawalType,
    authScopes: { scope: 'payouts:read' },
    description: 'Every withdrawal change of the calling merchant (the same steps as its webhooks), in commit order. With `after`: first the changes since that cursor.',
    args: { after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }) },
    subscribe: (_root, { after }, ctx) => liveEvents(ctx, { subjectType: 'withdrawal', companyId: ctx.company!.id }, parseLiveCursor(after)),
    resolve: resolveWithdrawal,
  }),
);
