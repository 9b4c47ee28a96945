// The pure parts of the e-mails: which event makes which e-mail, the retry delays, escaping and one-line subjects,
// the rendering of both modes, and SMTP_URL's credentials kept out of what is shown.
import { describe, expect, it } from 'vitest';
import { LANGUAGES } from '../../src/domain/languages.ts';
import { emailConfig } from '../../src/emails/config.ts';
import { DEFAULT_SETTINGS, planFor } from '../../src/emails/kinds.ts';
import { retryDelays } from '../../src/emails/sender.ts';
import { describeSmtpUrl } from '../../src/emails/smtp.ts';
import { parseJsonExact } from '../../src/core/json.ts';
import { escapeHtml, oneLine, renderEventEmail, renderInvoiceEmail, type InvoiceView } from '../../src/emails/templates.ts';
import { LANGUAGES as PAGE_LANGUAGES } from '../../src/web/client/shared/i18n.ts';

const invoice = { clientEmail: 'client@example.com', lang: 'de' };

const view = (over: Partial<InvoiceView> = {}): InvoiceView => ({
  id: 'inv1',
  merchantName: 'Shop',
  testMode: false,
  items: [{ name: 'A', price: '1' }],
  invoiceCurrency: 'USD',
  total: '1',
  currencyLabel: 'BTC (bitcoin)',
  paymentAmount: '0.00001',
  address: 'bc1qaddress',
  tag: null,
  expiredAt: new Date('2026-11-26T18:30:00Z'),
  paidAmount: '0',
  settledAt: null,
  transactions: [],
  refund: null,
  late: null,
  link: 'https://pay.example/pay/inv1',
  ...over,
});

describe('e-mail planning', () => {
  it('maps events to client and merchant kinds, honouring the settings', () => {
    expect(planFor({ type: 'invoice.pending', payload: {} }, invoice, DEFAULT_SETTINGS)).toEqual([
      { kind: 'client.pending', recipient: 'client@example.com', lang: 'de', client: true },
    ]);
    const settings = { clientOff: ['done'], merchantEmails: ['Ops@x.example', 'ops@x.example'], merchantOff: [] };
    expect(planFor({ type: 'invoice.done', payload: {} }, invoice, settings)).toEqual([
      { kind: 'merchant.done', recipient: 'ops@x.example', lang: 'en', client: false },
    ]);
    expect(planFor({ type: 'invoice.created', payload: {} }, invoice, settings)).toEqual([]);
    expect(planFor({ type: 'invoice.processing', payload: {} }, invoice, settings)).toEqual([]);
    expect(planFor({ type: 'invoice.closed', payload: {} }, invoice, settings)).toEqual([]);
    // Late money: to a closed invoice the client hears of it; to a refunded one not.
    expect(planFor({ type: 'invoice.late_payment', payload: { status: 'closed' } }, invoice, DEFAULT_SETTINGS).map((p) => p.kind)).toEqual(['client.closed']);
    expect(planFor({ type: 'invoice.late_payment', payload: { status: 'refunded' } }, invoice, DEFAULT_SETTINGS)).toEqual([]);
    // No client e-mail: nothing for the client.
    expect(planFor({ type: 'invoice.pending', payload: {} }, { clientEmail: null, lang: null }, DEFAULT_SETTINGS)).toEqual([]);
    expect(planFor({ type: 'withdrawal.rejected', payload: {} }, null, { ...settings, merchantOff: ['withdrawal_rejected'] })).toEqual([]);
    expect(planFor({ type: 'webhook.failing', payload: {} }, null, settings).map((p) => p.kind)).toEqual(['merchant.webhook_failing']);
  });

  it('e-mails and the checkout page share one list of languages', () => {
    expect(PAGE_LANGUAGES).toBe(LANGUAGES);
  });
});

describe('e-mail retries', () => {
  it('waits the minimum, then 4 times longer each time up to the maximum; attempts - 1 delays', () => {
    expect(retryDelays(10_000, 3_600_000, 6)).toEqual([10_000, 40_000, 160_000, 640_000, 2_560_000]);
    expect(retryDelays(10_000, 100_000, 5)).toEqual([10_000, 40_000, 100_000, 100_000]);
    expect(retryDelays(10_000, 100_000, 1)).toEqual([]);
  });
});

describe('e-mail templates', () => {
  it('escapes HTML and keeps subjects on one line', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
    expect(oneLine('a\r\nBcc: b\u2028c\u0000d')).toBe('a Bcc: b c d');
    const hostile = renderInvoiceEmail('client.pending', 'en', view({ merchantName: 'X\r\nBcc: v@x', items: [{ name: '<b>bold</b>', price: '1' }] }));
    expect(hostile.subject).toBe('Your payment to X Bcc: v@x');
    expect(hostile.html).toContain('&#60;b&#62;bold&#60;/b&#62;');
    expect(hostile.html).not.toContain('<b>bold');
  });

  it('marks test mode and only test mode', () => {
    const live = renderInvoiceEmail('client.done', 'en', view());
    const test = renderInvoiceEmail('client.done', 'de', view({ testMode: true }));
    expect(live.subject).toBe('Receipt: your payment to Shop');
    expect(live.text).not.toContain('Test mode');
    expect(test.subject).toBe('[TEST] Beleg: Ihre Zahlung an Shop');
    expect(test.text).toContain('Testmodus');
  });

  it('shows a withdrawal amount with every digit (a JSON number in the payload, never a float)', () => {
    const payload = parseJsonExact('{"uid":"u1","amount":12.123456789012345678,"dchain":"eth","fee":"0.0005","to":"0xabc","txHash":"0xdef"}') as Record<string, unknown>;
    const mail = renderEventEmail('merchant.withdrawal_done', { merchantName: 'Shop', testMode: false, payload });
    expect(mail.subject).toBe('Withdrawal done: 12.123456789012345678 eth');
    expect(mail.text).toContain('Amount: 12.123456789012345678 eth');
  });

  it('a refund without its hash yet says it follows', () => {
    const r = renderInvoiceEmail('client.refunded', 'en', view({ refund: { amount: '1', address: 'addr', tag: '7', txHash: null } }));
    expect(r.text).toContain('Transaction: the transaction hash follows once it is sent');
    expect(r.text).toContain('Tag: 7');
  });
});

describe('e-mail configuration', () => {
  it('shows SMTP_URL without its credentials, and refuses a bad one without echoing it', () => {
    expect(describeSmtpUrl('smtps://user:secret@mail.example:465')).toBe('smtps://mail.example:465');
    const bad = emailConfig.read({ SMTP_URL: 'http://user:hunter2@mail.example' });
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).not.toContain('hunter2');
    expect(emailConfig.read({ MAIL_FROM: 'A <a@b.example>\r\nBcc: x@y.example' }).ok).toBe(false);
    const ok = emailConfig.read({ SMTP_URL: 'smtp://u:p@127.0.0.1:2525' });
    expect(ok.ok && ok.value.smtpUrl).toBe('smtp://u:p@127.0.0.1:2525');
  });
});
