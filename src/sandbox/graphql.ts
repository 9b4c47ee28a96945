import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { builder } from '../graphql/builder.ts';
import { PaymentCurrencyEnum } from '../graphql/enums.ts';
import { parseInput } from '../core/validation.ts';
import {
  advanceClockSchema,
  advanceSandboxClock,
  confirmSandboxSchema,
  sandboxTransferSchema,
  confirmSandboxTransfer,
  createSandboxTransfer,
  dropSandboxTransfer,
  presentSandboxTransfer,
  type ClockView,
  type SandboxTransferView,
} from './service.ts';

const SandboxTransferType = builder.objectRef<SandboxTransferView>('SandboxTransfer').implement({
  description: 'A simulated incoming transfer (sandbox mode only).',
  fields: (t) => ({
    id: t.exposeID('id'),
    txHash: t.exposeString('txHash'),
    outputIndex: t.exposeInt('outputIndex'),
    invoiceId: t.exposeID('invoiceId'),
    asset: t.field({ type: PaymentCurrencyEnum, resolve: (x) => x.asset as never }),
    amount: t.field({ type: 'Decimal', resolve: (x) => x.amount }),
    confirmations: t.exposeInt('confirmations'),
    requiredConfirmations: t.exposeInt('requiredConfirmations'),
    state: t.exposeString('state'),
  }),
});

const SandboxTransferInput = builder.inputType('SandboxTransferInput', {
  fields: (t) => ({
    invoiceId: t.id({ required: false, description: 'Pay this invoice’s address; or give address (and tag).' }),
    address: t.string({ required: false }),
    tag: t.string({ required: false }),
    amount: t.field({ type: 'Decimal', required: true }),
    asset: t.field({ type: PaymentCurrencyEnum, required: false, description: 'Defaults to the address’s payment currency.' }),
    confirmations: t.int({ required: false, description: 'Defaults to 0 (seen, unconfirmed).' }),
    txHash: t.string({ required: false }),
    outputIndex: t.int({ required: false }),
  }),
});

const errors = { types: [ValidationError, NotFoundError, ConflictError] };

builder.mutationField('sandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { merchant: true },
    errors,
    args: { input: t.arg({ type: SandboxTransferInput, required: true }) },
    resolve: async (_root, { input }, ctx) =>
      presentSandboxTransfer(
        await createSandboxTransfer(ctx.sandbox, ctx.company!, parseInput(sandboxTransferSchema, { ...input, invoiceId: input.invoiceId ? String(input.invoiceId) : null })),
      ),
  }),
);

builder.mutationField('confirmSandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { merchant: true },
    errors,
    args: { id: t.arg.id({ required: true }), confirmations: t.arg.int({ required: false }) },
    resolve: async (_root, { id, confirmations }, ctx) =>
      presentSandboxTransfer(await confirmSandboxTransfer(ctx.sandbox, ctx.company!, String(id), parseInput(confirmSandboxSchema, { confirmations }))),
  }),
);

builder.mutationField('dropSandboxTransfer', (t) =>
  t.field({
    type: SandboxTransferType,
    authScopes: { merchant: true },
    errors,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => presentSandboxTransfer(await dropSandboxTransfer(ctx.sandbox, ctx.company!, String(id))),
  }),
);

const SandboxClockType = builder.objectRef<ClockView>('SandboxClock').implement({
  fields: (t) => ({
    now: t.field({ type: 'DateTime', resolve: (c) => new Date(c.now) }),
    offsetMinutes: t.float({ resolve: (c) => c.offsetMinutes }),
    expired: t.exposeInt('expired', { description: 'Invoices the advance closed or settled.' }),
  }),
});

builder.mutationField('advanceSandboxClock', (t) =>
  t.field({
    type: SandboxClockType,
    authScopes: { merchant: true },
    errors: { types: [ValidationError, NotFoundError] },
    args: { minutes: t.arg.float({ required: true }) },
    resolve: (_root, { minutes }, ctx) => advanceSandboxClock(ctx.sandbox, ctx.company!, parseInput(advanceClockSchema, { minutes })),
  }),
);
