// GraphQL for payout protection: payoutPolicy, setPayoutPolicy, payoutAddresses, addPayoutAddress,
// removePayoutAddress; the same service as REST (docs/security.md, "Payout protection").
import { parseInput } from '../core/validation.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { checkPage, connectionNames, edgeNames, PAGE_SIZES } from '../graphql/connections.ts';
import { PaymentCurrencyEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, nodeIdInput, registerNodeType } from '../graphql/node-ids.ts';
import type { PolicyState } from './protection-rules.ts';
import { usableFrom } from './protection-rules.ts';
import { addPayoutAddress, getPayoutPolicy, payoutAddressInputSchema, payoutPolicySchema, removePayoutAddress, setPayoutPolicy } from './protection.ts';

registerNodeType('PayoutAddress', nodeIdFormats.uuid);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const PendingPolicyType = builder.objectRef<NonNullable<PolicyState['pending']>>('PendingPayoutPolicy').implement({
  description: 'A weakening of the payout policy that waits for the cool-down in force when it was asked for.',
  fields: (t) => ({
    allowListOnly: t.exposeBoolean('allowListOnly', { description: 'allowListOnly from `effectiveAt`.' }),
    cooldownHours: t.exposeInt('cooldownHours', { description: 'cooldownHours from `effectiveAt`.' }),
    effectiveAt: t.expose('effectiveAt', { type: 'DateTime', description: 'When it takes effect (the tenant’s clock).' }),
  }),
});

const PayoutPolicyType = builder.objectRef<PolicyState>('PayoutPolicy').implement({
  description: 'The payout policy in force now (docs/security.md).',
  fields: (t) => ({
    allowListOnly: t.exposeBoolean('allowListOnly', { description: 'Withdrawals and auto-withdrawal rules may pay only book addresses past the cool-down.' }),
    cooldownHours: t.exposeInt('cooldownHours', { description: 'How long a book address waits before it may be paid, and a weakening before it holds.' }),
    pending: t.field({ type: PendingPolicyType, nullable: true, description: 'A weakening that waits; null when none.', resolve: (p) => p.pending }),
  }),
});

builder.queryField('payoutPolicy', (t) =>
  t.field({
    type: PayoutPolicyType,
    authScopes: { scope: 'payouts:read' },
    description: 'The payout policy of the calling mode (REST GET /api/company/settings/payout-policy).',
    resolve: (_root, _args, ctx) => getPayoutPolicy(ctx.withdrawals, ctx.company!),
  }),
);

const SetPayoutPolicyInput = builder.inputType('SetPayoutPolicyInput', {
  description: 'The policy asked for: strengthening holds at once, weakening after the cool-down in force.',
  fields: (t) => ({
    allowListOnly: t.boolean({ required: true, description: 'Pay only addresses of the book past the cool-down.' }),
    cooldownHours: t.int({ required: true, description: '0 to 8760 hours; 0 in test mode only.' }),
  }),
});

builder.mutationField('setPayoutPolicy', (t) =>
  t.field({
    type: PayoutPolicyType,
    authScopes: { scope: 'payouts:write' },
    description: 'Sets the payout policy (REST PUT /api/company/settings/payout-policy).',
    errors: mutationOutcome('payoutPolicy', 'The policy after the change.', [ValidationError]),
    args: { input: t.arg({ type: SetPayoutPolicyInput, required: true, description: 'The policy asked for.' }) },
    resolve: (_root, { input }, ctx) => setPayoutPolicy(ctx.withdrawals, ctx.company!, ctx.access!.actor, parseInput(payoutPolicySchema, input)),
  }),
);

const PayoutAddressType = builder.prismaNode('PayoutAddress', {
  description: 'An address of the payout address book.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'payouts:read') }),
  nullable: true,
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What may be sent there.', resolve: (a) => a.asset as never }),
    address: t.exposeString('address', { description: 'The receiver address.' }),
    tag: t.exposeString('tag', { nullable: true, description: 'The receiver tag (TON); null elsewhere.' }),
    label: t.exposeString('label', { description: 'What the merchant called it.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was added (the tenant’s clock).' }),
    usableFrom: t.field({
      type: 'DateTime',
      description: 'When it may be paid under allowListOnly (createdAt plus the cool-down in force).',
      resolve: async (a, _args, ctx) => usableFrom(a, await getPayoutPolicy(ctx.withdrawals, ctx.company!)),
    }),
  }),
});

builder.queryField('payoutAddresses', (t) =>
  t.prismaConnection(
    {
      type: PayoutAddressType,
      cursor: 'id',
      authScopes: { scope: 'payouts:read' },
      description: 'The payout address book of the calling mode, newest first (REST GET /api/company/payout-addresses).',
      ...PAGE_SIZES,
      resolve: (query, _root, args, ctx) => {
        checkPage(args, query, UUID);
        return ctx.db.payoutAddress.findMany({ ...query, where: { companyId: ctx.company!.id }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
      },
      totalCount: (_root, args, ctx) => {
        checkPage(args, {}, UUID);
        return ctx.db.payoutAddress.count({ where: { companyId: ctx.company!.id } });
      },
    },
    connectionNames('PayoutAddress', 'payout addresses'),
    edgeNames('PayoutAddress'),
  ),
);

const AddPayoutAddressInput = builder.inputType('AddPayoutAddressInput', {
  description: 'A new address book entry, validated like a withdrawal’s receiver.',
  fields: (t) => ({
    asset: t.field({ type: PaymentCurrencyEnum, required: true, description: 'What may be sent there.' }),
    address: t.string({ required: true, description: 'The receiver address of the asset’s network.' }),
    tag: t.string({ required: false, description: 'Required for TON; none elsewhere.' }),
    label: t.string({ required: true, description: 'What it is (1 to 100 characters).' }),
  }),
});

builder.mutationField('addPayoutAddress', (t) =>
  t.prismaField({
    type: 'PayoutAddress',
    authScopes: { scope: 'payouts:write' },
    description: 'Adds an address to the payout address book (REST POST /api/company/payout-addresses).',
    errors: mutationOutcome('payoutAddress', 'The entry.', [ValidationError, ConflictError]),
    args: { input: t.arg({ type: AddPayoutAddressInput, required: true, description: 'The entry.' }) },
    resolve: (_query, _root, { input }, ctx) => addPayoutAddress(ctx.withdrawals, ctx.company!, ctx.access!.actor, parseInput(payoutAddressInputSchema, input)),
  }),
);

const RemovePayoutAddressInput = builder.inputType('RemovePayoutAddressInput', {
  description: 'The entry to remove.',
  fields: (t) => ({ id: t.id({ required: true, description: 'The PayoutAddress id.' }) }),
});

builder.mutationField('removePayoutAddress', (t) =>
  t.prismaField({
    type: 'PayoutAddress',
    authScopes: { scope: 'payouts:write' },
    description: 'Removes an address from the book at once (REST DELETE /api/company/payout-addresses/{id}).',
    errors: mutationOutcome('payoutAddress', 'The removed entry.', [NotFoundError]),
    args: { input: t.arg({ type: RemovePayoutAddressInput, required: true, description: 'Which entry.' }) },
    resolve: (_query, _root, { input }, ctx) => removePayoutAddress(ctx.withdrawals, ctx.company!, ctx.access!.actor, nodeIdInput(input.id, 'PayoutAddress', 'id')),
  }),
);
