// Static addresses and deposits for GraphQL clients: the same edge schemas and service functions as the REST paths.
import { AutoswapType } from '../autoswap/graphql-types.ts';
import { parseInput } from '../core/validation.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain } from '../domain/money.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { BusMessage } from '../core/bus.ts';
import { AFTER_DESCRIPTION, liveEvents, liveResolver, parseLiveCursor } from '../graphql/live.ts';
import { builder, mutationOutcome, type GraphQLContext } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { ModeEnum, MoneyType, NetworkEnum, PaymentCurrencyEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, registerNodeType } from '../graphql/node-ids.ts';
import {
  createStaticAddress,
  createStaticAddressSchema,
  DEPOSIT_STATUS,
  STATE_OF,
  depositOrder,
  depositWhere,
  MAX_INTERNAL_USER_ID_LENGTH,
  staticAddressOrder,
  staticAddressWhere,
  type DepositStatus,
} from './service.ts';

registerNodeType('StaticAddress', nodeIdFormats.uuid);
registerNodeType('Deposit', nodeIdFormats.uuid);

const UUID = nodeIdFormats.uuid;

const StaticAddressType = builder.prismaNode('StaticAddress', {
  description: 'A permanent deposit address of one of the merchant’s users, for one payment currency.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'deposits:read') }),
  nullable: true,
  fields: (t) => ({
    addressId: t.exposeID('id', { description: 'Its id in REST, in `staticAddress(id:)` and in the deposit webhook `id`.' }),
    mode: t.field({ type: ModeEnum, description: 'The mode it belongs to: only a token of that mode sees it.', resolve: (_a, _args, ctx) => ctx.company!.mode }),
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What it receives (asset plus network).', resolve: (a) => a.asset as never }),
    network: t.field({ type: NetworkEnum, description: 'Its network.', resolve: (a) => PAYMENT_CURRENCY_INFO[a.asset as PaymentCurrency].network }),
    address: t.string({ description: 'The address to send to.', select: { paymentAddress: { select: { address: true } } }, resolve: (a) => a.paymentAddress.address }),
    tag: t.string({
      nullable: true,
      description: 'The deposit tag the sender must add (TON); null elsewhere.',
      select: { paymentAddress: { select: { tag: true } } },
      resolve: (a) => a.paymentAddress.tag,
    }),
    internalUserId: t.exposeString('internalUserId', { description: 'The merchant’s id of the user who owns it.' }),
    email: t.exposeString('email', { nullable: true, description: 'The owner’s e-mail, when given.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was issued.' }),
  }),
});

const DepositStatusEnum = builder.enumType('DepositStatus', {
  description: 'Where a deposit to a static address stands (the deposit webhook `status`).',
  values: {
    PROCESSING: { value: 'processing', description: 'Seen on chain, awaiting confirmations. REST: "processing".' },
    DONE: { value: 'done', description: 'Confirmed and credited, less its fee. REST: "done".' },
    FAILED: { value: 'failed', description: 'Left the chain before it was confirmed; nothing credited. REST: "failed".' },
    FROZEN: { value: 'frozen', description: 'Held by the risk checks; recorded, not credited. REST: "frozen".' },
  } as const,
});

const DepositType = builder.prismaNode('ChainTransfer', {
  variant: 'Deposit',
  description: 'A transfer to one of the merchant’s static addresses.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'deposits:read'), role: 'deposit' }),
  nullable: true,
  fields: (t) => ({
    mode: t.field({ type: ModeEnum, description: 'The chain it came on: the simulated one (TEST) or a real node (LIVE).', resolve: (x) => x.mode }),
    amount: t.field({ type: 'Decimal', description: 'What was sent, in `asset`.', resolve: (x) => formatPlain(x.amount) }),
    money: t.field({ type: MoneyType, description: '`amount` with its currency.', resolve: (x) => ({ amount: formatPlain(x.amount), currency: x.asset }) }),
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What was sent.', resolve: (x) => x.asset as never }),
    status: t.field({ type: DepositStatusEnum, description: 'Where it stands.', resolve: (x) => DEPOSIT_STATUS[x.state] }),
    hash: t.exposeString('txHash', { description: 'The bare transaction hash.' }),
    outputIndex: t.exposeInt('outputIndex', { description: 'Output (or log index) of the transaction that pays the address.' }),
    from: t.exposeString('fromAddress', { nullable: true, description: 'The sender, when the chain tells.' }),
    confirmations: t.exposeInt('confirmations', { description: 'Confirmations counted so far.' }),
    staticAddress: t.prismaField({
      type: 'StaticAddress',
      description: 'The static address it paid.',
      select: { addressId: true },
      resolve: (query, x, _args, ctx) => ctx.db.staticAddress.findUniqueOrThrow({ ...query, where: { id: x.addressId } }),
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When it was first seen.', resolve: (x) => x.seenAt }),
    confirmedAt: t.expose('confirmedAt', { type: 'DateTime', nullable: true, description: 'When it was confirmed and credited.' }),
    autoswaps: t.relation('autoswaps', {
      type: AutoswapType,
      description: 'Its autoswap, once credited under a rule (docs/autoswap.md).',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.queryField('staticAddress', (t) =>
  t.prismaField({
    type: StaticAddressType,
    nullable: true,
    authScopes: { scope: 'deposits:read' },
    description: 'One static address of the calling merchant; null when there is none.',
    args: { id: t.arg.id({ required: true, description: 'The static address id (also the deposit webhook `id`).' }) },
    resolve: (query, _root, { id }, ctx) =>
      UUID.test(String(id)) ? ctx.db.staticAddress.findFirst({ ...query, where: { id: String(id), companyId: ctx.company!.id } }) : null,
  }),
);

const StaticAddressFilter = builder.inputType('StaticAddressFilter', {
  description: 'Narrows the static address list; every condition given must hold.',
  fields: (t) => ({
    internalUserId: t.string({ required: false, description: 'Addresses of this user only.' }),
    asset: t.field({ type: [PaymentCurrencyEnum], required: false, description: 'Any of these payment currencies.' }),
  }),
});

function addressFilterOf(filter: { internalUserId?: string | null; asset?: string[] | null } | null | undefined) {
  const internalUserId = filter?.internalUserId ?? undefined;
  if (internalUserId !== undefined && (internalUserId.length === 0 || internalUserId.length > MAX_INTERNAL_USER_ID_LENGTH)) {
    throw new ValidationError([{ path: 'filter.internalUserId', message: `must be 1 to ${MAX_INTERNAL_USER_ID_LENGTH} characters` }]);
  }
  return { internalUserId, asset: filter?.asset ?? undefined };
}

builder.queryField('staticAddresses', (t) =>
  t.prismaConnection(
    {
      type: StaticAddressType,
      cursor: 'id',
      authScopes: { scope: 'deposits:read' },
      description: 'The calling merchant’s static addresses, newest first.',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: StaticAddressFilter, required: false, description: 'Only the addresses that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.staticAddress.findMany({ ...query, where: staticAddressWhere(ctx.company!, addressFilterOf(args.filter)), orderBy: staticAddressOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.staticAddress.count({ where: staticAddressWhere(ctx.company!, addressFilterOf(args.filter)) });
      },
    },
    connectionNames('StaticAddress', 'static addresses'),
    edgeNames('StaticAddress'),
  ),
);

const DepositFilter = builder.inputType('DepositFilter', {
  description: 'Narrows the deposit list; every condition given must hold.',
  fields: (t) => ({
    staticAddressId: t.id({ required: false, description: 'Deposits to this static address only.' }),
    status: t.field({ type: [DepositStatusEnum], required: false, description: 'Any of these statuses.' }),
  }),
});

function depositFilterOf(filter: { staticAddressId?: string | number | null; status?: DepositStatus[] | null } | null | undefined) {
  const addressId = filter?.staticAddressId == null ? undefined : String(filter.staticAddressId);
  if (addressId !== undefined && !UUID.test(addressId)) throw new ValidationError([{ path: 'filter.staticAddressId', message: 'must be a static address id' }]);
  return { addressId, status: filter?.status ?? undefined };
}

builder.queryField('deposits', (t) =>
  t.prismaConnection(
    {
      type: DepositType,
      cursor: 'id',
      authScopes: { scope: 'deposits:read' },
      description: 'Deposits to the calling merchant’s static addresses, newest first.',
      ...PAGE_SIZES,
      args: { filter: t.arg({ type: DepositFilter, required: false, description: 'Only the deposits that match.' }) },
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.chainTransfer.findMany({ ...query, where: depositWhere(ctx.company!, depositFilterOf(args.filter)), orderBy: depositOrder });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.chainTransfer.count({ where: depositWhere(ctx.company!, depositFilterOf(args.filter)) });
      },
    },
    connectionNames('Deposit', 'deposits'),
    edgeNames('Deposit'),
  ),
);

const CreateStaticAddressInput = builder.inputType('CreateStaticAddressInput', {
  description: 'A user’s permanent address for one payment currency (REST POST /api/static-addresses).',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, required: true, description: 'What it will receive.' }),
    internalUserId: t.string({ required: true, description: 'The merchant’s id of the user (1 to 128 characters).' }),
    email: t.string({ required: false, description: 'The user’s e-mail, sent in deposit webhooks.' }),
  }),
});

builder.mutationField('createStaticAddress', (t) =>
  t.field({
    type: StaticAddressType,
    authScopes: { scope: 'deposits:write' },
    description: 'Issues the user’s address for the asset, or answers the one they already have (never a second one).',
    errors: mutationOutcome('staticAddress', 'The user’s static address for the asset.', [ValidationError]),
    args: { input: t.arg({ type: CreateStaticAddressInput, required: true, description: 'The user and the asset.' }) },
    resolve: async (_root, { input }, ctx) => (await createStaticAddress(ctx.deposits, ctx.company!, parseInput(createStaticAddressSchema, input))).address,
  }),
);

/** The deposit a message is about, with the state its status announced (a later change may be committed). */
async function depositAt(ctx: GraphQLContext, m: BusMessage) {
  const t = await ctx.db.chainTransfer.findUnique({ where: { id: m.subject.id! } });
  if (!t) throw new NotFoundError(`No deposit with id ${m.subject.id}`);
  const status = (m.payload as { status?: string } | null)?.status;
  return status && status in STATE_OF ? { ...t, state: STATE_OF[status as DepositStatus] } : t;
}

builder.subscriptionField('depositEvents', (t) =>
  t.field({
    type: DepositType,
    authScopes: { scope: 'deposits:read' },
    description: 'Every deposit change of the calling merchant (the same steps as its webhooks), in commit order. With `after`: first the changes since that cursor.',
    args: { after: t.arg.string({ required: false, description: AFTER_DESCRIPTION }) },
    subscribe: (_root, { after }, ctx) => liveEvents(ctx, { subjectType: 'deposit', companyId: ctx.company!.id }, parseLiveCursor(after)),
    resolve: liveResolver(depositAt),
  }),
);
