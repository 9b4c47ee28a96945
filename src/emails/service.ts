// Notification settings and the e-mail log: the one service REST and GraphQL both call.
import { z } from 'zod';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Company } from '../core/auth.ts';
import { pageArgs, pageOf } from '../core/pages.ts';
import { email } from '../core/validation.ts';
import { transactionWithRetry, type Db } from '../db/client.ts';
import { CLIENT_KINDS, DEFAULT_SETTINGS, MERCHANT_KINDS, type ClientKind, type MerchantKind } from './kinds.ts';

export interface EmailDeps {
  db: Db;
  /** SMTP_URL is set: e-mails are sent. */
  sending: boolean;
}

/** At most this many merchant addresses. */
export const MAX_MERCHANT_EMAILS = 5;

const MERCHANT_FIELDS = {
  done: 'done',
  wrong: 'wrong',
  withdrawalDone: 'withdrawal_done',
  withdrawalRejected: 'withdrawal_rejected',
  depositFrozen: 'deposit_frozen',
  webhookFailing: 'webhook_failing',
} as const satisfies Record<string, MerchantKind>;

type MerchantField = keyof typeof MERCHANT_FIELDS;

const onOff = z.boolean({ error: 'must be true or false' }).optional();

export const notificationSettingsSchema = z.object({
  client: z.object(Object.fromEntries(CLIENT_KINDS.map((k) => [k, onOff])) as Record<ClientKind, typeof onOff>).optional(),
  merchant: z
    .object({
      emails: z.array(email).max(MAX_MERCHANT_EMAILS, `must list at most ${MAX_MERCHANT_EMAILS} addresses`).optional(),
      ...(Object.fromEntries(Object.keys(MERCHANT_FIELDS).map((k) => [k, onOff])) as Record<MerchantField, typeof onOff>),
    })
    .optional(),
});

export type NotificationSettingsInput = z.output<typeof notificationSettingsSchema>;

export interface NotificationSettingsAnswer {
  client: Record<ClientKind, boolean>;
  merchant: { emails: string[] } & Record<MerchantField, boolean>;
}

function answer(s: { clientOff: readonly string[]; merchantEmails: readonly string[]; merchantOff: readonly string[] }): NotificationSettingsAnswer {
  return {
    client: Object.fromEntries(CLIENT_KINDS.map((k) => [k, !s.clientOff.includes(k)])) as Record<ClientKind, boolean>,
    merchant: {
      emails: [...s.merchantEmails],
      ...(Object.fromEntries(Object.entries(MERCHANT_FIELDS).map(([field, kind]) => [field, !s.merchantOff.includes(kind)])) as Record<MerchantField, boolean>),
    },
  };
}

export async function getNotificationSettings(deps: EmailDeps, company: Company): Promise<NotificationSettingsAnswer> {
  const row = await deps.db.notificationSettings.findUnique({ where: { companyId: company.id } });
  return answer(row ?? DEFAULT_SETTINGS);
}

/** Changes what the input names; what it leaves out stays as it is. */
export async function setNotificationSettings(deps: EmailDeps, company: Company, input: NotificationSettingsInput): Promise<NotificationSettingsAnswer> {
  return transactionWithRetry(deps.db, async (tx) => {
    const [current] = await tx.$queryRaw<{ clientOff: string[]; merchantEmails: string[]; merchantOff: string[] }[]>`
      SELECT "clientOff", "merchantEmails", "merchantOff" FROM "NotificationSettings" WHERE "companyId" = ${company.id}::uuid FOR UPDATE`;
    const s = current ?? { ...DEFAULT_SETTINGS, clientOff: [], merchantEmails: [], merchantOff: [] };
    const clientOff = CLIENT_KINDS.filter((k) => (input.client?.[k] === undefined ? s.clientOff.includes(k) : !input.client[k]));
    const merchantOff = (Object.entries(MERCHANT_FIELDS) as [MerchantField, MerchantKind][])
      .filter(([field, kind]) => (input.merchant?.[field] === undefined ? s.merchantOff.includes(kind) : !input.merchant[field]))
      .map(([, kind]) => kind);
    const merchantEmails = input.merchant?.emails ? [...new Set(input.merchant.emails.map((e) => e.toLowerCase()))] : s.merchantEmails;
    const data = { clientOff, merchantOff, merchantEmails, updatedAt: new Date() };
    await tx.notificationSettings.upsert({ where: { companyId: company.id }, create: { companyId: company.id, ...data }, update: data });
    return answer(data);
  });
}

export const EMAIL_STATUSES = ['pending', 'sent', 'failed', 'suppressed'] as const;

export const emailListSchema = z.object({
  invoiceId: z.string().min(1).max(64).optional(),
  status: z.enum(EMAIL_STATUSES).optional(),
  after: z.uuid({ message: 'must be an e-mail id from a previous page' }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

export type EmailListInput = z.output<typeof emailListSchema>;

export interface EmailFilter {
  invoiceId?: string | null | undefined;
  status?: string[] | null | undefined;
}

export const emailListWhere = (company: Company, filter: EmailFilter = {}): Prisma.EmailDeliveryWhereInput => ({
  companyId: company.id,
  ...(filter.invoiceId ? { invoiceId: filter.invoiceId } : {}),
  ...(filter.status?.length ? { status: { in: filter.status } } : {}),
});

export const emailListOrder = [{ createdAt: 'desc' }, { id: 'desc' }] satisfies Prisma.EmailDeliveryOrderByWithRelationInput[];

const emailSelect = {
  id: true,
  eventId: true,
  invoiceId: true,
  kind: true,
  recipient: true,
  lang: true,
  status: true,
  attempts: true,
  nextAttemptAt: true,
  lastResponseCode: true,
  lastError: true,
  sentAt: true,
  createdAt: true,
} satisfies Prisma.EmailDeliverySelect;

export type EmailRecord = Prisma.EmailDeliveryGetPayload<{ select: typeof emailSelect }>;

/** Newest first; `after` is the last id of the previous page. */
export async function listEmails(deps: EmailDeps, company: Company, q: EmailListInput): Promise<{ emails: EmailRecord[]; nextCursor: string | null }> {
  const rows = await deps.db.emailDelivery.findMany({
    where: emailListWhere(company, { invoiceId: q.invoiceId, status: q.status ? [q.status] : undefined }),
    select: emailSelect,
    orderBy: emailListOrder,
    ...pageArgs('id', q.limit, q.after),
  });
  const { page, nextCursor } = pageOf(rows, q.limit, (d) => d.id);
  return { emails: page, nextCursor };
}

/** The REST shape of one record. */
export const presentEmail = (e: EmailRecord) => ({
  id: e.id,
  eventId: e.eventId,
  invoiceId: e.invoiceId,
  kind: e.kind,
  recipient: e.recipient,
  lang: e.lang,
  status: e.status,
  attempts: e.attempts,
  nextAttemptAt: e.status === 'pending' ? e.nextAttemptAt.toISOString() : null,
  lastResponseCode: e.lastResponseCode,
  lastError: e.lastError,
  sentAt: e.sentAt?.toISOString() ?? null,
  createdAt: e.createdAt.toISOString(),
});

/** Deletes finished e-mail records last changed before `olderThan`; pending ones are kept. */
export async function pruneEmails(db: Db, olderThan: Date): Promise<number> {
  const { count } = await db.emailDelivery.deleteMany({ where: { status: { in: ['sent', 'failed', 'suppressed'] }, updatedAt: { lt: olderThan } } });
  return count;
}
