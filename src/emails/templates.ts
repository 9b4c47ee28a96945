// The e-mails' text and HTML (pure): one function per kind, in English and German. Every value from an invoice or
// an event is escaped in the HTML part and kept to one line in the subject; the only link is PAY_URL/<invoice id>.
// docs/emails.md shows each template; change the texts here (and their tests in test/emails/).
import { DecimalLiteral } from '../core/json.ts';
import type { Language } from '../domain/languages.ts';
import type { EmailKind } from './kinds.ts';

export interface InvoiceView {
  id: string;
  merchantName: string;
  testMode: boolean;
  items: { name: string; price: string }[];
  invoiceCurrency: string;
  total: string;
  /** What the client pays with, e.g. `USDT (tron)`; null before proceed. */
  currencyLabel: string | null;
  paymentAmount: string | null;
  address: string | null;
  /** The TON memo the client must send with the payment. */
  tag: string | null;
  expiredAt: Date | null;
  paidAmount: string;
  settledAt: Date | null;
  /** Confirmed payments, oldest first. */
  transactions: { txHash: string; amount: string }[];
  refund: { amount: string; address: string; tag: string | null; txHash: string | null } | null;
  /** The late payment the event is about (closed kind). */
  late: { amount: string; txHash: string } | null;
  /** PAY_URL/<id>. */
  link: string;
}

export interface EventView {
  merchantName: string;
  testMode: boolean;
  /** The event's payload as recorded (withdrawal, deposit, webhook.failing). */
  payload: Record<string, unknown>;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** HTML text and attribute escaping. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** One line: control characters (CR, LF, tabs, ...) become spaces, so no value can start a header of its own. */
export const oneLine = (s: string): string => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim();

const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '-');
const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : v instanceof DecimalLiteral ? v.text : '');

/** A paragraph (text) and its HTML, or a labelled value (`label: value`), or a link. */
type Block = { p: string } | { label: string; value: string; code?: boolean } | { link: string; text: string } | { items: InvoiceView };

const T = {
  en: {
    hello: 'Hello,',
    test: 'Test mode: no real money was moved.',
    merchant: 'Merchant',
    order: 'Order',
    total: 'Total',
    open: 'Open the invoice',
    amount: 'Amount to send',
    currency: 'Currency',
    address: 'Address',
    tag: 'Tag (required: send it with the payment or the payment cannot be matched)',
    until: 'Pay before',
    paid: 'Paid',
    paidAt: 'Paid at',
    tx: 'Transaction',
    arrived: 'Arrived',
    expected: 'Expected',
    refunded: 'Amount sent back',
    to: 'To address',
    refundTag: 'Tag',
    refundTx: 'Transaction',
    refundTxLater: 'the transaction hash follows once it is sent',
    invoice: 'Invoice',
    withdrawal: 'Withdrawal',
    deposit: 'Deposit',
    network: 'Network',
    fee: 'Fee',
    reason: 'Status',
    endpoint: 'Endpoint',
    since: 'Failing since',
    client: {
      pending: (m: string) => ({
        subject: `Your payment to ${m}`,
        intro: `Thank you for your order at ${m}. To pay, send exactly the amount below to this address before the time shown.`,
      }),
      done: (m: string) => ({ subject: `Receipt: your payment to ${m}`, intro: `${m} received your payment. Thank you.` }),
      wrong: (m: string) => ({
        subject: `Your payment to ${m} is short`,
        intro: `Less arrived than the invoice asks for. ${m} will now either accept the payment as it is or send it back to you; you will get an e-mail either way.`,
      }),
      refunded: (m: string) => ({ subject: `Your payment to ${m} is being sent back`, intro: `${m} is sending your payment back to you.` }),
      closed: (m: string) => ({
        subject: `Your payment to ${m} arrived after the invoice expired`,
        intro: `Your payment arrived after the invoice had expired. ${m} will decide whether to accept it or send it back to you; you will get an e-mail either way.`,
      }),
    },
  },
  de: {
    hello: 'Guten Tag,',
    test: 'Testmodus: Es wurde kein echtes Geld bewegt.',
    merchant: 'Händler',
    order: 'Bestellung',
    total: 'Summe',
    open: 'Rechnung öffnen',
    amount: 'Zu sendender Betrag',
    currency: 'Währung',
    address: 'Adresse',
    tag: 'Tag (erforderlich: mit der Zahlung senden, sonst kann sie nicht zugeordnet werden)',
    until: 'Zahlen bis',
    paid: 'Bezahlt',
    paidAt: 'Bezahlt am',
    tx: 'Transaktion',
    arrived: 'Eingegangen',
    expected: 'Erwartet',
    refunded: 'Zurückgesendeter Betrag',
    to: 'An Adresse',
    refundTag: 'Tag',
    refundTx: 'Transaktion',
    refundTxLater: 'der Transaktions-Hash folgt, sobald sie gesendet ist',
    invoice: 'Rechnung',
    withdrawal: 'Auszahlung',
    deposit: 'Einzahlung',
    network: 'Netzwerk',
    fee: 'Gebühr',
    reason: 'Status',
    endpoint: 'Endpunkt',
    since: 'Fehlerhaft seit',
    client: {
      pending: (m: string) => ({
        subject: `Ihre Zahlung an ${m}`,
        intro: `Vielen Dank für Ihre Bestellung bei ${m}. Senden Sie zum Bezahlen genau den unten genannten Betrag vor dem angegebenen Zeitpunkt an diese Adresse.`,
      }),
      done: (m: string) => ({ subject: `Beleg: Ihre Zahlung an ${m}`, intro: `${m} hat Ihre Zahlung erhalten. Vielen Dank.` }),
      wrong: (m: string) => ({
        subject: `Ihre Zahlung an ${m} ist zu niedrig`,
        intro: `Es ist weniger eingegangen, als die Rechnung verlangt. ${m} nimmt die Zahlung nun entweder so an oder sendet sie an Sie zurück; Sie erhalten in jedem Fall eine E-Mail.`,
      }),
      refunded: (m: string) => ({ subject: `Ihre Zahlung an ${m} wird zurückgesendet`, intro: `${m} sendet Ihre Zahlung an Sie zurück.` }),
      closed: (m: string) => ({
        subject: `Ihre Zahlung an ${m} kam nach Ablauf der Rechnung an`,
        intro: `Ihre Zahlung ist nach Ablauf der Rechnung eingegangen. ${m} entscheidet, ob die Zahlung angenommen oder an Sie zurückgesendet wird; Sie erhalten in jedem Fall eine E-Mail.`,
      }),
    },
  },
} as const;

type Texts = (typeof T)[Language];

function invoiceBlocks(kind: EmailKind, t: Texts, v: InvoiceView): Block[] {
  const amount = (a: string | null) => `${a ?? '-'} ${v.currencyLabel ?? ''}`.trim();
  switch (kind) {
    case 'client.pending':
      return [
        { label: t.amount, value: amount(v.paymentAmount) },
        { label: t.address, value: v.address ?? '-', code: true },
        ...(v.tag ? [{ label: t.tag, value: v.tag, code: true }] : []),
        { label: t.until, value: when(v.expiredAt) },
      ];
    case 'client.done':
    case 'merchant.done':
      return [
        { label: t.paid, value: amount(v.paidAmount) },
        { label: t.paidAt, value: when(v.settledAt) },
        ...v.transactions.map((x) => ({ label: t.tx, value: x.txHash, code: true })),
      ];
    case 'client.wrong':
    case 'merchant.wrong':
      return [
        { label: t.arrived, value: amount(v.paidAmount) },
        { label: t.expected, value: amount(v.paymentAmount) },
      ];
    case 'client.refunded':
      return v.refund
        ? [
            { label: t.refunded, value: amount(v.refund.amount) },
            { label: t.to, value: v.refund.address, code: true },
            ...(v.refund.tag ? [{ label: t.refundTag, value: v.refund.tag, code: true }] : []),
            { label: t.refundTx, value: v.refund.txHash ?? t.refundTxLater, code: v.refund.txHash !== null },
          ]
        : [];
    case 'client.closed':
      return v.late
        ? [
            { label: t.arrived, value: amount(v.late.amount) },
            { label: t.tx, value: v.late.txHash, code: true },
          ]
        : [];
    default:
      return [];
  }
}

const MERCHANT_SUBJECTS: Partial<Record<EmailKind, (v: { id: string; payload: Record<string, unknown> }) => string>> = {
  'merchant.done': (v) => `Payment received: invoice ${v.id}`,
  'merchant.wrong': (v) => `Short payment waiting for your decision: invoice ${v.id}`,
  'merchant.withdrawal_done': (v) => `Withdrawal done: ${str(v.payload['amount'])} ${str(v.payload['dchain'])}`,
  'merchant.withdrawal_rejected': (v) => `Withdrawal rejected: ${str(v.payload['amount'])} ${str(v.payload['dchain'])}`,
  'merchant.deposit_frozen': (v) => `Deposit frozen: ${str(v.payload['amount'])} ${str(v.payload['asset'])}`,
  'merchant.webhook_failing': () => 'Your webhook endpoint has been failing for over an hour',
};

const MERCHANT_INTROS: Partial<Record<EmailKind, string>> = {
  'merchant.done': 'An invoice is paid; the money is in your balance.',
  'merchant.wrong': 'A payment is short of the invoice amount. Accept it as paid or refund it to the client (API or dashboard).',
  'merchant.withdrawal_done': 'A withdrawal is complete on chain.',
  'merchant.withdrawal_rejected': 'A withdrawal was blocked or failed; its money is available again.',
  'merchant.deposit_frozen': 'The risk checks hold a deposit to one of your static addresses; it is recorded and not credited.',
  'merchant.webhook_failing':
    'Webhook deliveries to your endpoint have been failing for more than an hour. They are retried for about three days; fix the endpoint or its URL and they go out.',
};

function eventBlocks(kind: EmailKind, t: Texts, p: Record<string, unknown>): Block[] {
  switch (kind) {
    case 'merchant.withdrawal_done':
    case 'merchant.withdrawal_rejected':
      return [
        { label: t.withdrawal, value: str(p['uid']), code: true },
        { label: 'Amount', value: `${str(p['amount'])} ${str(p['dchain'])}` },
        { label: t.fee, value: str(p['fee']) },
        { label: t.to, value: str(p['to']), code: true },
        ...(str(p['txHash']) ? [{ label: t.tx, value: str(p['txHash']), code: true }] : []),
      ];
    case 'merchant.deposit_frozen':
      return [
        { label: t.deposit, value: str(p['id']), code: true },
        { label: 'Amount', value: `${str(p['amount'])} ${str(p['asset'])}` },
        { label: t.network, value: str(p['network']) },
        { label: t.address, value: str(p['depositAddress']), code: true },
        { label: t.tx, value: str(p['hash']), code: true },
      ];
    case 'merchant.webhook_failing':
      return [
        { label: t.endpoint, value: str(p['url']), code: true },
        { label: t.since, value: str(p['since']) },
      ];
    default:
      return [];
  }
}

function lay(lang: Language, subject: string, testMode: boolean, blocks: Block[]): RenderedEmail {
  const t = T[lang];
  const text: string[] = [t.hello, ''];
  const html: string[] = [`<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body style="font-family:sans-serif">`];
  if (testMode) {
    text.push(t.test, '');
    html.push(`<p style="background:#fff3cd;padding:4px"><strong>${escapeHtml(t.test)}</strong></p>`);
  }
  html.push(`<p>${escapeHtml(t.hello)}</p>`);
  let rows: string[] = [];
  const flushRows = () => {
    if (rows.length) html.push(`<table>${rows.join('')}</table>`);
    rows = [];
  };
  for (const b of blocks) {
    if ('p' in b) {
      flushRows();
      text.push(b.p, '');
      html.push(`<p>${escapeHtml(b.p)}</p>`);
    } else if ('label' in b) {
      text.push(`${b.label}: ${b.value}`);
      const value = escapeHtml(b.value);
      rows.push(`<tr><th align="left">${escapeHtml(b.label)}</th><td>${b.code ? `<code>${value}</code>` : value}</td></tr>`);
    } else if ('link' in b) {
      flushRows();
      text.push('', `${b.text}: ${b.link}`);
      html.push(`<p><a href="${escapeHtml(b.link)}">${escapeHtml(b.text)}</a></p>`);
    } else {
      flushRows();
      const v = b.items;
      text.push('', `${t.order}:`);
      const lines = v.items.map((i) => `<tr><td>${escapeHtml(i.name)}</td><td align="right">${escapeHtml(i.price)} ${escapeHtml(v.invoiceCurrency)}</td></tr>`);
      for (const i of v.items) text.push(`  ${oneLine(i.name)}  ${i.price} ${v.invoiceCurrency}`);
      text.push(`  ${t.total}: ${v.total} ${v.invoiceCurrency}`);
      html.push(
        `<h2>${escapeHtml(t.order)}</h2><table>${lines.join('')}<tr><th align="left">${escapeHtml(t.total)}</th><th align="right">${escapeHtml(v.total)} ${escapeHtml(v.invoiceCurrency)}</th></tr></table>`,
      );
    }
  }
  flushRows();
  html.push('</body></html>');
  return { subject: oneLine(`${testMode ? '[TEST] ' : ''}${subject}`).slice(0, 250), text: `${text.join('\n').trim()}\n`, html: html.join('') };
}

/** An e-mail about an invoice (the client's kinds, and the merchant's done and wrong). */
export function renderInvoiceEmail(kind: EmailKind, lang: Language, v: InvoiceView): RenderedEmail {
  const t = T[lang];
  const merchant = oneLine(v.merchantName);
  let subject: string;
  let intro: string;
  if (kind.startsWith('client.')) {
    const texts = t.client[kind.slice('client.'.length) as keyof Texts['client']](merchant);
    subject = texts.subject;
    intro = texts.intro;
  } else {
    // Merchant e-mails are in English.
    subject = MERCHANT_SUBJECTS[kind]!({ id: v.id, payload: {} });
    intro = MERCHANT_INTROS[kind]!;
  }
  const blocks: Block[] = [
    { p: intro },
    { label: t.merchant, value: merchant },
    { label: t.invoice, value: v.id, code: true },
    ...invoiceBlocks(kind, t, v),
    { items: v },
    { link: v.link, text: t.open },
  ];
  return lay(lang, subject, v.testMode, blocks);
}

/** A merchant e-mail about a withdrawal, a deposit or the webhook endpoint (English). */
export function renderEventEmail(kind: EmailKind, v: EventView): RenderedEmail {
  const t = T.en;
  const subject = MERCHANT_SUBJECTS[kind]?.({ id: '', payload: v.payload }) ?? 'Payrail notification';
  const blocks: Block[] = [{ p: MERCHANT_INTROS[kind] ?? '' }, { label: t.merchant, value: oneLine(v.merchantName) }, ...eventBlocks(kind, t, v.payload)];
  return lay('en', subject, v.testMode, blocks);
}
