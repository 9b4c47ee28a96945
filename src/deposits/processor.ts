// What chains report for static addresses: each report is one transaction that records the deposit (once per
// network + txHash + output), moves its state, books the ledger on confirmation and writes the spec's webhook.
import { randomUUID } from 'node:crypto';
import type { Decimal } from 'decimal.js';
import type { ChainTransfer, PaymentAddress, Prisma, StaticAddress, TransferRole } from '../../generated/prisma/client.ts';
import type { TransferReport } from '../chains/adapter.ts';
import { commitWithEvents, recordEvent, type EventDeps, type NewEvent } from '../core/events.ts';
import type { EventType } from '../domain/event-types.ts';
import { PAYMENT_CURRENCY_INFO, type PaymentCurrency } from '../domain/assets.ts';
import type { Mode } from '../domain/modes.ts';
import { formatPlain, Money, roundUpToUnit, toMoney } from '../domain/money.ts';
import { ConflictError, LimitExceededError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { ACCOUNTS, postJournal } from '../ledger/ledger.ts';
import type { FeeTable } from '../pricing/fees.ts';
import type { Logger } from '../logger.ts';
import { DEPOSIT_STATUS, type DepositDeps, type DepositStatus } from './service.ts';

type Tx = Prisma.TransactionClient;

/** Who pays the deposit fee: always the merchant (it is taken from the credited amount; docs/deposits.md). */
export const DEPOSIT_FEE_PAYER = 'merchant';

/** The gateway fee of a deposit: the payment currency's fee rule on the amount, rounded up to the chain unit, at most the amount. */
export function depositFee(fees: FeeTable, asset: PaymentCurrency, amount: Decimal): Decimal {
  const rule = fees[asset];
  return Money.min(amount, roundUpToUnit(amount.times(rule.percent).div(100).plus(rule.fixed), PAYMENT_CURRENCY_INFO[asset].decimals));
}

/** The webhook body exactly as the spec's table (`email` only when the address has one). */
export function depositEvent(t: ChainTransfer, address: PaymentAddress & { staticAddress: StaticAddress }, status: DepositStatus): NewEvent {
  const info = PAYMENT_CURRENCY_INFO[t.asset as PaymentCurrency];
  const s = address.staticAddress;
  return {
    type: `deposit.${status}` satisfies EventType,
    companyId: t.companyId,
    subject: { type: 'deposit', id: t.id },
    payload: {
      amount: formatPlain(toMoney(t.amount)),
      asset: info.asset,
      network: info.network,
      depositAddress: address.address,
      status,
      id: s.id,
      internal_user_id: s.internalUserId,
      hash: t.txHash,
      ...(s.email ? { email: s.email } : {}),
      feePayer: DEPOSIT_FEE_PAYER,
    },
  };
}

/** Credits a confirmed deposit, less its fee, and lets credit hooks (auto-withdrawals) act in the same transaction. */
async function creditDeposit(tx: Tx, deps: DepositDeps, t: ChainTransfer): Promise<void> {
  const amount = toMoney(t.amount);
  const base = { companyId: t.companyId, asset: t.asset, transferId: t.id };
  await postJournal(tx, {
    ...base,
    kind: 'deposit',
    postings: [
      { account: ACCOUNTS.chainExternal, amount: amount.neg() },
      { account: ACCOUNTS.merchantAvailable, amount },
    ],
  });
  const fee = depositFee(deps.fees, t.asset as PaymentCurrency, amount);
  await postJournal(tx, {
    ...base,
    kind: 'deposit_fee',
    postings: [
      { account: ACCOUNTS.merchantAvailable, amount: fee.neg() },
      { account: ACCOUNTS.platformFees, amount: fee },
    ],
  });
  await deps.credits.credited(tx, { companyId: t.companyId, asset: t.asset, amount: amount.minus(fee), transferId: t.id, addressId: t.addressId });
}

/**
 * Applies a report for a static address. New outputs are recorded `seen` (webhook `processing`), or `frozen` when
 * the risk hook holds them; enough confirmations make them `confirmed` (credit, fee, webhook `done`); a drop before
 * that makes them `dropped` (webhook `failed`); a credit the balance limit refuses makes them `frozen` (webhook
 * `frozen`, freezeOverLimit) and the report is refused. Repeats change nothing.
 */
export async function applyDepositReport(
  deps: DepositDeps,
  report: TransferReport,
  address: PaymentAddress & { staticAddress: StaticAddress; now: Date },
  mode: Mode,
): Promise<ChainTransfer> {
  const asset = address.asset as PaymentCurrency;
  if (report.asset !== asset) {
    throw new ValidationError([{ path: 'asset', message: `static address ${address.id} takes ${asset} only; ${report.asset} sent to it is not credited` }]);
  }
  const verdict = report.dropped ? { allow: true as const } : await deps.risk.review({ kind: 'deposit', companyId: address.companyId, asset, address: report.from, txHash: report.txHash });
  const now = address.now;
  try {
    return await bookDepositReport(deps, report, mode, address, verdict.allow);
  } catch (e) {
    if (!(e instanceof LimitExceededError)) throw e;
    await freezeOverLimit(deps, report, mode, e, {
      companyId: address.companyId,
      addressId: address.id,
      invoiceId: null,
      role: 'deposit',
      now,
      then: (tx, frozen) => recordEvent(tx, depositEvent(frozen, address, 'frozen')),
    });
    throw e;
  }
}

/** applyDepositReport's transaction. */
async function bookDepositReport(
  deps: DepositDeps,
  report: TransferReport,
  mode: Mode,
  address: PaymentAddress & { staticAddress: StaticAddress; now: Date },
  allowed: boolean,
): Promise<ChainTransfer> {
  const info = PAYMENT_CURRENCY_INFO[address.asset as PaymentCurrency];
  const asset = address.asset as PaymentCurrency;
  const now = address.now;
  return commitWithEvents(deps, async (tx) => {
    // The network's configured depth (CHAINS_FILE), as for invoices: a real node may ask more or fewer than the default.
    const confirmed = report.confirmations >= deps.chains.requiredConfirmations(report.asset, mode);
    let transfer: ChainTransfer | undefined;
    if (!report.dropped) {
      if (toMoney(report.amount).lt(info.depositDust)) {
        throw new ValidationError([{ path: 'amount', message: `below the deposit dust minimum of ${info.depositDust} ${asset}` }]);
      }
      const state = !allowed ? 'frozen' : confirmed ? 'confirmed' : 'seen';
      [transfer] = await tx.$queryRaw<ChainTransfer[]>`
        INSERT INTO "ChainTransfer" ("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
          "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
        VALUES (${randomUUID()}::uuid, ${mode}::"Mode", ${report.network}, ${report.asset}, ${report.txHash}, ${report.outputIndex}::int, ${report.from}::text,
          ${report.to}, ${report.tag}::text, ${report.amount.toFixed()}::numeric, ${report.confirmations}::int, ${report.blockNumber}::bigint,
          ${state}::"TransferState", 'deposit'::"TransferRole", ${address.companyId}::uuid, NULL, ${address.id},
          ${now}::timestamptz, ${state === 'confirmed' ? now : null}::timestamptz)
        ON CONFLICT ("mode", "network", "txHash", "outputIndex") DO NOTHING
        RETURNING *`;
      if (transfer) {
        // The spec's first webhook (processing or frozen), then done when it is final at once.
        await recordEvent(tx, depositEvent(transfer, address, state === 'frozen' ? 'frozen' : 'processing'));
        if (state === 'confirmed') {
          await creditDeposit(tx, deps, transfer);
          await recordEvent(tx, depositEvent(transfer, address, 'done'));
        }
        return transfer;
      }
    }
    const [existing] = await tx.$queryRaw<ChainTransfer[]>`
      SELECT * FROM "ChainTransfer" WHERE "mode" = ${mode}::"Mode" AND "network" = ${report.network} AND "txHash" = ${report.txHash} AND "outputIndex" = ${report.outputIndex}::int
      FOR UPDATE`;
    if (!existing) throw new NotFoundError(`No deposit ${report.txHash}:${report.outputIndex} to drop`);
    // One output pays one address: a report naming another address, asset or amount is not a repeat.
    if (existing.addressId !== address.id || existing.asset !== report.asset || !toMoney(existing.amount).eq(report.amount)) {
      throw new ConflictError('CONFLICT', `Transaction output ${report.txHash}:${report.outputIndex} was already reported with another address, asset or amount`);
    }
    if (existing.state === 'dropped' || existing.state === 'frozen') return existing;
    if (report.dropped) {
      if (existing.state === 'confirmed') throw new ConflictError('CONFLICT', `Deposit ${existing.id} is already final and cannot drop`);
      const dropped = await tx.chainTransfer.update({ where: { id: existing.id }, data: { state: 'dropped', droppedAt: now } });
      await recordEvent(tx, depositEvent(dropped, address, DEPOSIT_STATUS.dropped));
      return dropped;
    }
    if (report.confirmations <= existing.confirmations) return existing;
    const becameConfirmed = existing.state === 'seen' && confirmed;
    const updated = await tx.chainTransfer.update({
      where: { id: existing.id },
      data: { confirmations: report.confirmations, blockNumber: report.blockNumber ?? existing.blockNumber, ...(becameConfirmed ? { state: 'confirmed', confirmedAt: now } : {}) },
    });
    if (becameConfirmed) {
      await creditDeposit(tx, deps, updated);
      await recordEvent(tx, depositEvent(updated, address, 'done'));
    }
    return updated;
  });
}

export interface FreezeTarget {
  companyId: string;
  addressId: string;
  invoiceId: string | null;
  role: TransferRole;
  now: Date;
  /** Runs in the freeze's transaction when it froze the transfer (not when it was frozen or final already). */
  then?: (tx: Tx, frozen: ChainTransfer) => Promise<unknown>;
}

/**
 * A transfer whose credit was refused for the balance limit (LimitExceededError): real money we cannot send back by
 * refusing a report. It is recorded `frozen` (new, or a `seen` one), not credited and not counted for its invoice, and
 * logged at error level for the operator, who decides what becomes of it (docs/money.md, "Limits"). The report is then
 * refused (4xx): a watcher passes over it, so the network's scans go on.
 */
export async function freezeOverLimit(
  deps: EventDeps & { logger?: Logger },
  report: TransferReport,
  mode: Mode,
  reason: LimitExceededError,
  target: FreezeTarget,
): Promise<void> {
  const frozen = await commitWithEvents(deps, async (tx) => {
    const [row] = await tx.$queryRaw<ChainTransfer[]>`
      INSERT INTO "ChainTransfer" AS c ("id", "mode", "network", "asset", "txHash", "outputIndex", "fromAddress", "toAddress", "tag", "amount",
        "confirmations", "blockNumber", "state", "role", "companyId", "invoiceId", "addressId", "seenAt", "confirmedAt")
      VALUES (${randomUUID()}::uuid, ${mode}::"Mode", ${report.network}, ${report.asset}, ${report.txHash}, ${report.outputIndex}::int, ${report.from}::text,
        ${report.to}, ${report.tag}::text, ${report.amount.toFixed()}::numeric, ${report.confirmations}::int, ${report.blockNumber}::bigint,
        'frozen'::"TransferState", ${target.role}::"TransferRole", ${target.companyId}::uuid, ${target.invoiceId}, ${target.addressId},
        ${target.now}::timestamptz, NULL)
      ON CONFLICT ("mode", "network", "txHash", "outputIndex") DO UPDATE SET "state" = 'frozen', "confirmations" = GREATEST(c."confirmations", EXCLUDED."confirmations")
        WHERE c."state" = 'seen'
      RETURNING *`;
    if (row && target.then) await target.then(tx, row);
    return row ?? null;
  });
  deps.logger?.error(
    { network: report.network, txHash: report.txHash, outputIndex: report.outputIndex, asset: report.asset, amount: report.amount.toFixed(), transferId: frozen?.id, reason: reason.message },
    'a transfer too large to credit was frozen for the operator',
  );
}
