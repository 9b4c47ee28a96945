// Simulated chain activity for the sandbox: transfers to invoice addresses, confirmations, drops, and the
// test clock. Each call goes through the same report path a real chain watcher uses (the payee lookup and the
// report entry of src/payments).
import { z } from 'zod';
import type { ChainTransfer } from '../../generated/prisma/client.ts';
import { sandboxTxHash, type SandboxRegistry } from '../chains/sandbox.ts';
import type { Company } from '../core/auth.ts';
import { requireTestMode } from '../core/tenants.ts';
import { PAYMENT_CURRENCIES, PAYMENT_CURRENCY_INFO, isPaymentCurrency, type PaymentCurrency } from '../domain/assets.ts';
import { formatPlain, MAX_AMOUNT, toMoney } from '../domain/money.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { decimal, quantity, tag } from '../core/validation.ts';
import { decimalString, isoInstant } from '../http/schemas.ts';
import { INVOICE_ID_PATTERN } from '../invoices/ids.ts';
import { sweepExpired, type LifecycleDeps } from '../invoices/lifecycle.ts';
import type { PaymentsService } from '../payments/service.ts';

export interface SandboxDeps extends LifecycleDeps {
  /** null when sandbox mode is off: every sandbox operation then answers 404. */
  sandbox: SandboxRegistry | null;
  /** Where simulated transfers are reported: the entry a chain watcher's reports take. */
  payments: PaymentsService;
}

const MAX_CONFIRMATIONS = 1_000_000;

export const sandboxTransferSchema = z
  .object({
    invoiceId: z.string().min(1).max(64).nullish(),
    address: z.string().min(1).max(128).nullish(),
    tag: tag.nullish(),
    amount: decimal({ positive: true, max: MAX_AMOUNT }),
    asset: z.enum(PAYMENT_CURRENCIES, { message: `must be one of: ${PAYMENT_CURRENCIES.join(', ')}` }).nullish(),
    confirmations: z.number().int().min(0).max(MAX_CONFIRMATIONS).nullish(),
    txHash: z.string().regex(/^[0-9A-Za-z]{8,128}$/, 'must be 8-128 letters or digits').nullish(),
    outputIndex: z.number().int().min(0).max(10_000).nullish(),
    from: z.string().min(1).max(128).nullish(),
  })
  .refine((v) => Boolean(v.invoiceId) !== Boolean(v.address), { message: 'give exactly one of invoiceId and address', path: ['invoiceId'] });

export const confirmSandboxSchema = z.object({ confirmations: z.number().int().min(1).max(MAX_CONFIRMATIONS).nullish() }).nullish();
export const advanceClockSchema = z.object({ minutes: quantity().pipe(z.number().positive().max(60 * 24 * 366)) });

/** The simulated chain, for a test-mode caller (403 for a live one; 404 when test mode is off). */
function requireSandbox(deps: SandboxDeps, company: Company): SandboxRegistry {
  requireTestMode(company);
  if (!deps.sandbox) throw new NotFoundError('Sandbox endpoints exist only in test mode');
  return deps.sandbox;
}

export interface SandboxTransferView {
  id: string;
  txHash: string;
  outputIndex: number;
  /** Null for a deposit to a static address. */
  invoiceId: string | null;
  addressId: string;
  asset: string;
  amount: string;
  confirmations: number;
  requiredConfirmations: number;
  state: string;
}

export const sandboxTransferAnswerSchema = z
  .strictObject({
    id: z.string(),
    txHash: z.string(),
    outputIndex: z.int(),
    invoiceId: z.string().nullable().meta({ description: 'Null for a deposit to a static address.' }),
    addressId: z.string(),
    asset: z.enum(PAYMENT_CURRENCIES),
    amount: decimalString,
    confirmations: z.int(),
    requiredConfirmations: z.int().meta({ description: 'After this many it counts as final.' }),
    state: z.enum(['seen', 'confirmed', 'dropped', 'frozen']),
  })
  .meta({ id: 'SandboxTransfer', description: 'A simulated incoming transfer, reported through the same path a chain watcher uses.' }) satisfies z.ZodType<SandboxTransferView>;

export const sandboxClockSchema = z
  .strictObject({
    now: isoInstant.meta({ description: "The merchant's test clock." }),
    offsetMinutes: z.number().meta({ description: 'How far it runs ahead of real time.' }),
  })
  .meta({ id: 'SandboxClock' });

export const sandboxClockAdvanceSchema = z
  .strictObject({
    now: isoInstant.meta({ description: "The merchant's test clock." }),
    offsetMinutes: z.number().meta({ description: 'How far it runs ahead of real time.' }),
    expired: z.int().meta({ description: 'Invoices the advance closed or settled.' }),
  })
  .meta({ id: 'SandboxClockAdvance' });

/** Confirmations after which a transfer in this asset counts as final (sandbox networks use the network's default). */
export const requiredConfirmations = (asset: string): number => (isPaymentCurrency(asset) ? PAYMENT_CURRENCY_INFO[asset].confirmations : 1);

export const presentSandboxTransfer = (t: ChainTransfer): SandboxTransferView => ({
  id: t.id,
  txHash: t.txHash,
  outputIndex: t.outputIndex,
  invoiceId: t.invoiceId,
  addressId: t.addressId,
  asset: t.asset,
  amount: formatPlain(t.amount),
  confirmations: t.confirmations,
  requiredConfirmations: requiredConfirmations(t.asset),
  state: t.state,
});

export async function createSandboxTransfer(deps: SandboxDeps, company: Company, input: z.output<typeof sandboxTransferSchema>): Promise<ChainTransfer> {
  requireSandbox(deps, company);
  // The lookup a chain's report takes, by the invoice or the merchant's address; its payee goes to the same entry.
  const key = input.invoiceId ? { invoiceId: input.invoiceId } : { companyId: company.id, to: input.address!, tag: input.tag ?? null };
  const [payee] = input.invoiceId && !INVOICE_ID_PATTERN.test(input.invoiceId) ? [null] : await deps.payments.findPayees('test', [key]);
  if (!payee || payee.companyId !== company.id) {
    if (input.invoiceId) {
      const invoice = await deps.db.invoice.findUnique({ where: { id: input.invoiceId }, select: { companyId: true } });
      if (invoice?.companyId === company.id) throw new ConflictError('CONFLICT', `Invoice ${input.invoiceId} has no payment address yet; proceed it first`);
    }
    throw new NotFoundError(input.invoiceId ? `No invoice with id ${input.invoiceId}` : `No payment address ${input.address} of this merchant`);
  }
  const expected = payee.asset as PaymentCurrency;
  const asset = input.asset ?? expected;
  const decimals = PAYMENT_CURRENCY_INFO[asset].decimals;
  if (input.amount.decimalPlaces() > decimals) {
    throw new ValidationError([{ path: 'amount', message: `${asset} has ${decimals} decimal places` }]);
  }
  const network = PAYMENT_CURRENCY_INFO[expected].network;
  const report = {
    // A payment in another asset still lands on this address's network (e.g. a token sent to an ETH address).
    network,
    asset,
    txHash: input.txHash ?? sandboxTxHash(network),
    outputIndex: input.outputIndex ?? 0,
    from: input.from ?? null,
    to: payee.address,
    tag: payee.tag,
    amount: input.amount,
    confirmations: input.confirmations ?? 0,
    blockNumber: null,
    dropped: false,
  };
  return deps.payments.report(report, 'test', payee);
}

async function ownTransfer(deps: SandboxDeps, company: Company, id: string): Promise<ChainTransfer> {
  const transfer = z.uuid().safeParse(id).success ? await deps.db.chainTransfer.findUnique({ where: { id } }) : null;
  if (!transfer || transfer.companyId !== company.id) throw new NotFoundError(`No sandbox transfer with id ${id}`);
  return transfer;
}

export async function confirmSandboxTransfer(
  deps: SandboxDeps,
  company: Company,
  id: string,
  input: z.output<typeof confirmSandboxSchema>,
): Promise<ChainTransfer> {
  requireSandbox(deps, company);
  const transfer = await ownTransfer(deps, company, id);
  if (transfer.state === 'dropped') throw new ConflictError('CONFLICT', `Transfer ${id} was dropped from the chain`);
  const required = isPaymentCurrency(transfer.asset) ? PAYMENT_CURRENCY_INFO[transfer.asset].confirmations : 1;
  const confirmations = input?.confirmations ?? Math.max(required, transfer.confirmations + 1);
  return deps.payments.report(reportOf(transfer, { confirmations }), 'test');
}

export async function dropSandboxTransfer(deps: SandboxDeps, company: Company, id: string): Promise<ChainTransfer> {
  requireSandbox(deps, company);
  const transfer = await ownTransfer(deps, company, id);
  return deps.payments.report(reportOf(transfer, { dropped: true }), 'test');
}

function reportOf(t: ChainTransfer, change: { confirmations?: number; dropped?: boolean }) {
  return {
    network: t.network as never,
    asset: t.asset as PaymentCurrency,
    txHash: t.txHash,
    outputIndex: t.outputIndex,
    from: t.fromAddress,
    to: t.toAddress,
    tag: t.tag,
    amount: toMoney(t.amount),
    confirmations: change.confirmations ?? t.confirmations,
    blockNumber: t.blockNumber,
    dropped: change.dropped ?? false,
  };
}

export interface ClockView {
  now: string;
  offsetMinutes: number;
  /** Invoices the advance closed or settled. */
  expired: number;
}

/**
 * Moves the merchant's test clock forward and runs the expiry sweep for that merchant at once, so tests need
 * not wait for the job. Other merchants' clocks and invoices are untouched.
 */
export async function advanceSandboxClock(deps: SandboxDeps, company: Company, { minutes }: z.output<typeof advanceClockSchema>): Promise<ClockView> {
  requireSandbox(deps, company);
  const offsetMs = await deps.clock.advance(company.id, minutes);
  const expired = await sweepExpired(deps, { companyId: company.id });
  return { ...clockView(offsetMs), expired };
}

const clockView = (offsetMs: number) => ({ now: new Date(Date.now() + offsetMs).toISOString(), offsetMinutes: offsetMs / 60_000 });

export async function readSandboxClock(deps: SandboxDeps, company: Company): Promise<Omit<ClockView, 'expired'>> {
  requireSandbox(deps, company);
  return clockView(await deps.clock.offsetMs(company.id));
}
