// Which e-mails an event makes (pure): the kinds, the events they come from, and the settings that turn them off.
import { WEBHOOK_FAILING } from './declarations.ts';
import type { Language } from '../domain/languages.ts';

/** What the paying client gets (each can be turned off per merchant). */
export const CLIENT_KINDS = ['pending', 'done', 'wrong', 'refunded', 'closed'] as const;
export type ClientKind = (typeof CLIENT_KINDS)[number];

/** What the merchant gets at the addresses of its settings. */
export const MERCHANT_KINDS = ['done', 'wrong', 'withdrawal_done', 'withdrawal_rejected', 'deposit_frozen', 'webhook_failing'] as const;
export type MerchantKind = (typeof MERCHANT_KINDS)[number];

/** A delivery's kind as recorded: `client.<kind>` or `merchant.<kind>`. */
export type EmailKind = `client.${ClientKind}` | `merchant.${MerchantKind}`;


/** The client kind an event makes, if any. A late payment is what a `closed` e-mail is about. */
const CLIENT_EVENTS: Record<string, ClientKind> = {
  'invoice.pending': 'pending',
  'invoice.done': 'done',
  'invoice.wrong': 'wrong',
  'invoice.refunded': 'refunded',
  'invoice.late_payment': 'closed',
};

const MERCHANT_EVENTS: Record<string, MerchantKind> = {
  'invoice.done': 'done',
  'invoice.wrong': 'wrong',
  'withdrawal.done': 'withdrawal_done',
  'withdrawal.rejected': 'withdrawal_rejected',
  'deposit.frozen': 'deposit_frozen',
  [WEBHOOK_FAILING]: 'webhook_failing',
};

/** The event types that can make an e-mail (the planner reads only these). */
export const EMAIL_EVENT_TYPES: readonly string[] = [...new Set([...Object.keys(CLIENT_EVENTS), ...Object.keys(MERCHANT_EVENTS)])];

export interface NotificationSettings {
  /** Client kinds turned off. */
  clientOff: readonly string[];
  /** The merchant's addresses (none: no merchant e-mails). */
  merchantEmails: readonly string[];
  merchantOff: readonly string[];
}

export const DEFAULT_SETTINGS: NotificationSettings = { clientOff: [], merchantEmails: [], merchantOff: [] };

export interface PlannedEmail {
  kind: EmailKind;
  recipient: string;
  lang: Language;
  /** A client e-mail (the caps against mail-bombing count these). */
  client: boolean;
}

/**
 * The e-mails one event makes: the client's (when the invoice has an e-mail and the kind is on) and the merchant's (to
 * each of its addresses, when the kind is on). Merchant e-mails are in English (the dashboard's language is the
 * browser's, not stored).
 */
export function planFor(
  event: { type: string; payload: unknown },
  invoice: { clientEmail: string | null; lang: string | null } | null,
  settings: NotificationSettings,
): PlannedEmail[] {
  const eventType = event.type;
  const planned: PlannedEmail[] = [];
  // Money that came after a refund is the merchant's matter; the client hears of late money to a closed invoice only.
  const lateToRefunded = eventType === 'invoice.late_payment' && (event.payload as { status?: unknown } | null)?.status !== 'closed';
  const clientKind = lateToRefunded ? undefined : CLIENT_EVENTS[eventType];
  if (clientKind && invoice?.clientEmail && !settings.clientOff.includes(clientKind)) {
    planned.push({ kind: `client.${clientKind}`, recipient: invoice.clientEmail, lang: invoice.lang === 'de' ? 'de' : 'en', client: true });
  }
  const merchantKind = MERCHANT_EVENTS[eventType];
  if (merchantKind && !settings.merchantOff.includes(merchantKind)) {
    for (const recipient of new Set(settings.merchantEmails.map((e) => e.toLowerCase()))) {
      planned.push({ kind: `merchant.${merchantKind}`, recipient, lang: 'en', client: false });
    }
  }
  return planned;
}
