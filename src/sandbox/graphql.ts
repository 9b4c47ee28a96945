import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder, mutationOutcome } from '../graphql/builder.ts';
import { MoneyType, PaymentCurrencyEnum, TransferStateEnum } from '../graphql/enums.ts';
import { callerCompanyId, nodeIdFormats, nodeIdInput, registerNodeType } from '../graphql/node-ids.ts';
import { requireTestMode } from '../core/tenants.ts';
import { parseInput } from '../core/validation.ts';
import { formatPlain } from '../domain/money.ts';
import {
  advanceClockSchema,
  advanceSandboxClock,
  confirmSandboxSchema,
  sandboxTransferSchema,
  confirmSandboxTransfer,
  createSandboxTransfer,
  dropSandboxTransfer,
  requiredConfirmations,
  type ClockView,
} from './service.ts';

registerNodeType('SandboxTransfer', nodeIdFormats.uuid);

// Each sandbox mutation refuses a live caller (FORBIDDEN) before it reads its input, as REST does (docs/modes.md).


const SandboxTransferType = builder.prismaNode('ChainTransfer', {
  variant: 'SandboxTransfer',
  description: 'A simulated incoming transfer (sandbox mode only), as the merchant who made it sees it.',
  id: { field: 'id' },
  findUnique: (id, ctx) => ({ id, companyId: callerCompanyId(ctx, 'invoices:read') }),
  nullable: true,
  fields: (t) => ({
    txHash: t.exposeString('txHash', { description: 'The simulated transaction hash.' }),
    outputIndex: t.exposeInt('outputIndex', { description: 'Output of the transaction that pays the address.' }),
    invoice: t.relation('invoice', { nullable: true, description: 'The invoice whose address it pays; null for a deposit to a static address.' }),
    asset: t.field({ type: PaymentCurrencyEnum, description: 'What was sent.', resolve: (x) => x.asset as never }),
    amount: t.field({ type: 'Decimal', description: 'How much, in `asset`.', resolve: (x) => formatPlain(x.amount) }),
    money: t.field({ type: MoneyType, description: '`amount` with its currency.', resolve: (x) => ({ amount: formatPlain(x.amount), currency: x.asset }) }),
    confirmations: t.exposeInt('confirmations', { description: 'Confirmations so far.' }),
    requiredConfirmations: t.int({ description: 'Confirmations its network needs before it counts.', resolve: (x) => requiredConfirmations(x.asset) }),
    state: t.field({ type: TransferStateEnum, description: 'Where it stands on the simulated chain.', resolve: (x) => x.state }),
  }),
});

const CreateSandboxTransferInput = builder.inputType('CreateSandboxTransferInput', {
  description: 'A transfer to simulate: to an invoice’s address, or to an address (and tag) given directly.',
  fields: (t) => ({
    invoiceId: t.id({ required: false, description: 'Pay this invoice’s address; or give address (and tag).' }),
    address: t.string({ required: false, description: 'The receiving address, when no invoiceId is given.' }),
    tag: t.string({ required: false, description: 'Deposit tag of that address (TON).' }),
    amount: t.field({ type: 'Decimal', required: true, description: 'How much is sent, greater than zero.' }),
    asset: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Defaults to the address’s payment currency.' }),
    confirmations: t.int({ required: false, description: 'Defaults to 0 (seen, unconfirmed).' }),
    txHash: t.string({ required: false, description: 'Defaults to a random hash; reuse one (with outputIndex) to test duplicate reports.' }),
    outputIndex: t.int({ required: false, description: 'Defaults to 0.' }),
  }),
});

const transferErrors = [ValidationError, NotFoundError, ConflictError, ForbiddenError];
const transferOutcome = (description: string) => mutationOutcome('transfer', description, transferErrors);

builder.mutationField('createSandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { scope: 'invoices:write' },
    description: 'Simulates an incoming transfer, as a chain adapter would report it (REST POST /api/sandbox/transfers).',
    errors: transferOutcome('The simulated transfer.'),
    args: { input: t.arg({ type: CreateSandboxTransferInput, required: true, description: 'The transfer to simulate.' }) },
    resolve: (_root, { input }, ctx) => {
      requireTestMode(ctx.company!);
      return createSandboxTransfer(ctx.sandbox, ctx.company!, parseInput(sandboxTransferSchema, { ...input, invoiceId: input.invoiceId ? String(input.invoiceId) : null }));
    },
  }),
);

const ConfirmSandboxTransferInput = builder.inputType('ConfirmSandboxTransferInput', {
  description: 'The transfer to confirm.',
  fields: (t) => ({
    id: t.id({ required: true, description: 'The SandboxTransfer id.' }),
    confirmations: t.int({ required: false, description: 'Confirmations to reach; defaults to what the network requires.' }),
  }),
});

builder.mutationField('confirmSandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { scope: 'invoices:write' },
    description: 'Adds confirmations to a simulated transfer; at the required count it is credited.',
    errors: transferOutcome('The transfer after the change.'),
    args: { input: t.arg({ type: ConfirmSandboxTransferInput, required: true, description: 'The transfer and its confirmations.' }) },
    resolve: (_root, { input }, ctx) => {
      requireTestMode(ctx.company!);
      return confirmSandboxTransfer(
        ctx.sandbox,
        ctx.company!,
        nodeIdInput(input.id, 'SandboxTransfer', 'id'),
        parseInput(confirmSandboxSchema, { confirmations: input.confirmations }),
      );
    },
  }),
);

const DropSandboxTransferInput = builder.inputType('DropSandboxTransferInput', {
  description: 'The transfer to drop.',
  fields: (t) => ({ id: t.id({ required: true, description: 'The SandboxTransfer id.' }) }),
});

builder.mutationField('dropSandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { scope: 'invoices:write' },
    description: 'Simulates a transfer leaving the chain (replaced or reorganised away); whatever it added is undone.',
    errors: transferOutcome('The transfer, state DROPPED.'),
    args: { input: t.arg({ type: DropSandboxTransferInput, required: true, description: 'The transfer to drop.' }) },
    resolve: (_root, { input }, ctx) => {
      requireTestMode(ctx.company!);
      return dropSandboxTransfer(ctx.sandbox, ctx.company!, nodeIdInput(input.id, 'SandboxTransfer', 'id'));
    },
  }),
);

const SandboxClockType = builder.objectRef<ClockView>('SandboxClock').implement({
  description: 'The calling merchant’s test clock (sandbox mode only).',
  fields: (t) => ({
    now: t.field({ type: 'DateTime', description: 'The merchant’s current time.', resolve: (c) => new Date(c.now) }),
    offsetMinutes: t.float({ description: 'How far it runs ahead of real time, in minutes (a duration, not money).', resolve: (c) => c.offsetMinutes }),
    expired: t.exposeInt('expired', { description: 'Invoices the advance closed or settled.' }),
  }),
});

const AdvanceSandboxClockInput = builder.inputType('AdvanceSandboxClockInput', {
  description: 'How far to move the test clock.',
  fields: (t) => ({ minutes: t.int({ required: true, description: 'Whole minutes forward, 1 to 527040 (366 days).' }) }),
});

builder.mutationField('advanceSandboxClock', (t) =>
  t.field({
    type: SandboxClockType,
    authScopes: { scope: 'invoices:write' },
    description: 'Moves the merchant’s test clock forward and expires what is due at once (REST POST /api/sandbox/clock/advance).',
    errors: mutationOutcome('clock', 'The clock after the move.', [ValidationError, NotFoundError, ForbiddenError]),
    args: { input: t.arg({ type: AdvanceSandboxClockInput, required: true, description: 'How far to move it.' }) },
    resolve: (_root, { input }, ctx) => {
      requireTestMode(ctx.company!);
      return advanceSandboxClock(ctx.sandbox, ctx.company!, parseInput(advanceClockSchema, { minutes: input.minutes }));
    },
  }),
);
