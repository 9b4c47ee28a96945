// The checkout page: the client fills the invoice (e-mail, payment currency), gets the address, amount, tag and QR
// code, and watches the payment arrive live (invoiceStatusChanged; polling when no WebSocket gets through).
import {
  CheckoutInvoiceDocument,
  CheckoutInvoiceLiveDocument,
  CheckoutProceedDocument,
  type CheckoutInvoiceFragment,
  type PaymentCurrency,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { GraphqlError, live, request } from '../shared/graphql.ts';
import { currencyName, isLanguage, LANGUAGE_NAMES, LANGUAGES, text, unitOf, type TextKey } from '../shared/i18n.ts';

type Invoice = CheckoutInvoiceFragment;

const POLL_MS = 3_000;
const PAYMENT_REFRESH_MS = 5_000;
const REDIRECT_DELAY_MS = 3_000;

const root = document.getElementById('app')!;
const invoiceId = root.dataset['invoice']!;
const payPath = root.dataset['payPath']!;
const language = isLanguage(document.documentElement.lang) ? document.documentElement.lang : 'en';
const t = (key: TextKey, values?: Record<string, string | number>) => text(language, key, values);

let shown: Invoice | null = null;
let countdown: number | undefined;
let redirect: number | undefined;
let polling: number | undefined;
let pollingNotice: HTMLElement | null = null;

// One live region for short announcements (copied, errors) that screen readers read out.
const announcer = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
const money = (amount: string, currency: string) => `${amount} ${unitOf(currency)}`;
const minus = (a: string, b: string) => {
  // Decimal strings from the API, subtracted exactly (no float): scale both to the longer fraction.
  const places = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const scaled = (v: string) => BigInt(v.replace('.', '') + '0'.repeat(places - (v.split('.')[1]?.length ?? 0)));
  const diff = scaled(a) - scaled(b);
  const digits = (diff < 0n ? -diff : diff).toString().padStart(places + 1, '0');
  const whole = places ? `${digits.slice(0, -places)}.${digits.slice(-places)}` : digits;
  return `${diff < 0n ? '-' : ''}${whole}`;
};

async function copy(value: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(value);
    announcer.textContent = t('copied');
  } catch {
    announcer.textContent = t('copyFailed');
  }
}

const copyable = (label: TextKey, value: string, copyLabel: TextKey, extra: Record<string, string> = {}) => {
  const id = uid('value');
  return h(
    'div',
    { class: 'copyable' },
    h('span', { class: 'label', id: `${id}-label` }, t(label)),
    h('code', { id, class: 'value', 'aria-labelledby': `${id}-label`, ...extra }, value),
    h('button', { type: 'button', class: 'copy', onclick: () => void copy(value), 'aria-describedby': id, 'data-focus': copyLabel }, t(copyLabel)),
  );
};

function header(invoice: Invoice) {
  return h(
    'header',
    { class: 'merchant' },
    // The page's CSP loads images from https only (a logo over http would be mixed content anyway).
    invoice.company.logoUrl.startsWith('https://') ? h('img', { class: 'logo', src: invoice.company.logoUrl, alt: '', width: 48, height: 48 }) : null,
    h('div', {}, h('h1', {}, invoice.company.name), h('p', { class: 'muted' }, t('invoiceNumber', { id: invoice.id }))),
  );
}

function order(invoice: Invoice) {
  const currency = invoice.content.invoiceCurrency;
  return h(
    'table',
    { class: 'order' },
    h('caption', {}, t('order')),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, t('item')), h('th', { scope: 'col', class: 'num' }, t('price')))),
    h(
      'tbody',
      {},
      invoice.content.items.map((item) => h('tr', {}, h('td', {}, item.name), h('td', { class: 'num' }, money(item.price, currency)))),
    ),
    h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, t('total')), h('td', { class: 'num total' }, money(invoice.total.amount, invoice.total.currency)))),
  );
}

function fillForm(invoice: Invoice) {
  const emailId = uid('email');
  const currencyId = uid('currency');
  const fixed = invoice.content.paymentCurrency;
  const problem = h('p', { class: 'error', role: 'alert' });
  const emailError = h('p', { class: 'field-error', id: `${emailId}-error` });
  const currencyError = h('p', { class: 'field-error', id: `${currencyId}-error` });
  const email = h('input', {
    id: emailId,
    name: 'clientEmail',
    type: 'email',
    required: true,
    autocomplete: 'email',
    maxlength: 254,
    'aria-describedby': `${emailId}-hint ${emailId}-error`,
  });
  const select = h(
    'select',
    { id: currencyId, name: 'paymentCurrency', required: true, disabled: fixed !== null, 'aria-describedby': `${currencyId}-hint ${currencyId}-error` },
    fixed ? null : h('option', { value: '' }, '—'),
    (fixed ? [fixed] : invoice.paymentCurrencies).map((c) => h('option', { value: c, selected: c === fixed }, currencyName(language, c))),
  );
  const button = h('button', { type: 'submit', class: 'primary' }, t('proceed'));
  const form = h(
    'form',
    { class: 'fill', novalidate: true },
    h('h2', {}, t('payHeading')),
    h('div', { class: 'field' }, h('label', { for: emailId }, t('email')), email, h('p', { class: 'hint', id: `${emailId}-hint` }, t('emailHint')), emailError),
    h(
      'div',
      { class: 'field' },
      h('label', { for: currencyId }, t('currency')),
      select,
      h('p', { class: 'hint', id: `${currencyId}-hint` }, fixed ? t('currencyLocked') : ''),
      currencyError,
    ),
    problem,
    button,
  );
  // No good rate for this currency now: say so on the field and offer the others (docs/rates.md).
  const rateUnavailable = (currency: PaymentCurrency) => {
    const name = currencyName(language, currency);
    select.setAttribute('aria-invalid', 'true');
    currencyError.textContent = t(fixed ? 'currencyUnavailableFixed' : 'currencyUnavailable', { currency: name });
    const option = [...select.options].find((o) => o.value === currency);
    if (option && !fixed) {
      option.disabled = true;
      option.textContent = t('unavailableOption', { currency: name });
      select.value = '';
    }
    select.focus();
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    for (const [input, error] of [
      [email, emailError],
      [select, currencyError],
    ] as const) {
      input.removeAttribute('aria-invalid');
      error.textContent = '';
    }
    problem.textContent = '';
    button.disabled = true;
    button.textContent = t('proceeding');
    const paymentCurrency = (fixed ?? select.value) || null;
    request(CheckoutProceedDocument, {
      // The page's language becomes the language of the client's e-mails (docs/emails.md).
      input: { invoiceId, clientEmail: email.value.trim(), paymentCurrency: paymentCurrency as PaymentCurrency | null, lang: language === 'de' ? 'DE' : 'EN' },
    })
      .then(({ proceedInvoice: result }) => {
        if (result.__typename === 'ProceedInvoiceSuccess') return show(result.invoice);
        if (result.__typename === 'ConflictError') return refresh();
        if (result.__typename === 'RateUnavailableError' && paymentCurrency) return rateUnavailable(paymentCurrency as PaymentCurrency);
        const fields: Record<string, [HTMLElement, HTMLElement]> = { clientEmail: [email, emailError], paymentCurrency: [select, currencyError] };
        const details = 'details' in result ? result.details : [];
        for (const detail of details) {
          const target = fields[detail.path.split('.').pop() ?? ''];
          if (!target) continue;
          target[0].setAttribute('aria-invalid', 'true');
          target[1].textContent = detail.message;
        }
        if (!details.some((d) => fields[d.path.split('.').pop() ?? ''])) problem.textContent = result.message;
        (form.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus();
      })
      .catch(() => (problem.textContent = t('errorGeneric')))
      .finally(() => {
        button.disabled = false;
        button.textContent = t('proceed');
      });
  });
  return form;
}

function paymentPanel(invoice: Invoice, amount: string) {
  const currency = invoice.address!.asset;
  const details = invoice.paymentDetails!;
  const tag = invoice.address!.tag;
  const feeNote = invoice.content.isMerchantPaysFee ? t('feeByMerchant') : t('feeIncluded', { fee: money(details.invoiceFee, currency) });
  return h(
    'section',
    { class: 'payment', 'aria-labelledby': 'payment-heading' },
    h('h2', { id: 'payment-heading', tabindex: -1 }, t('payHeading')),
    h('p', { class: 'currency' }, currencyName(language, currency)),
    copyable('sendExactly', money(amount, currency), 'copyAmount', { 'data-amount': amount }),
    h('p', { class: 'hint' }, feeNote),
    copyable('toAddress', invoice.address!.address, 'copyAddress', { 'data-address': '' }),
    tag
      ? h(
          'div',
          { class: 'tag-required', role: 'note' },
          copyable('tag', tag, 'copyTag', { 'data-tag': '' }),
          h('p', { class: 'warning' }, h('strong', {}, t('tagRequired'))),
        )
      : null,
    h(
      'figure',
      { class: 'qr' },
      // The amount in the URL: a new amount due (a short payment's rest) is a new image, never a cached one.
      h('img', { src: `${payPath}/${encodeURIComponent(invoice.id)}/qr.svg?due=${encodeURIComponent(amount)}`, alt: t('qrAlt'), width: 220, height: 220, 'data-qr': '' }),
      invoice.paymentUri ? null : h('figcaption', { class: 'hint' }, t('qrNoUri')),
    ),
    invoice.paymentUri ? h('p', {}, h('a', { class: 'wallet-link', href: invoice.paymentUri, 'data-uri': '', 'data-focus': 'wallet' }, t('openWallet'))) : null,
    // Only while the first payment is awaited: a short payment's rest is taken after expiry too.
    invoice.status === 'PENDING' ? h('p', { class: 'countdown', role: 'timer', 'aria-live': 'off', 'data-expires': invoice.expiredAt ?? '' }) : null,
  );
}

function tickCountdown(): void {
  const node = content.querySelector<HTMLElement>('.countdown');
  if (!node?.dataset['expires']) return;
  const left = Math.max(0, Date.parse(node.dataset['expires']) - Date.now());
  const minutes = Math.floor(left / 60_000);
  const seconds = Math.floor((left % 60_000) / 1000);
  node.textContent = left > 0 ? t('timeLeft', { time: `${minutes}:${String(seconds).padStart(2, '0')}` }) : t('timeUp');
}

function statusView(invoice: Invoice) {
  const details = invoice.paymentDetails;
  const currency = invoice.address?.asset ?? '';
  switch (invoice.status) {
    case 'CREATED':
      return [banner('statusCreated', 'info'), fillForm(invoice)];
    case 'PENDING':
      return [banner('statusPending', 'info'), paymentPanel(invoice, details!.amount)];
    case 'PROCESSING': {
      const confirmations = Math.min(...invoice.transactions.filter((x) => x.kind === 'PAYMENT' && x.status !== 'CONFIRMED').map((x) => x.confirmations), Infinity);
      return [
        banner('statusProcessing', 'progress'),
        Number.isFinite(confirmations) ? h('p', { class: 'muted' }, t('confirmations', { confirmations })) : null,
      ];
    }
    case 'DONE':
      return [
        banner('statusDone', 'success'),
        invoice.redirectURL
          ? h('p', {}, t('redirecting'), ' ', h('a', { href: invoice.redirectURL, class: 'back' }, t('backToShop')))
          : null,
      ];
    case 'WRONG': {
      const missing = minus(details!.amount, details!.paidAmount);
      return [
        banner('statusWrong', 'warning', { paid: money(details!.paidAmount, currency), amount: money(details!.amount, currency) }),
        h('p', {}, t('wrongNext', { missing: money(missing, currency) })),
        paymentPanel(invoice, missing),
      ];
    }
    case 'CLOSED':
      return [banner('statusClosed', 'neutral'), h('p', {}, t('closedNext'))];
    case 'REFUNDED': {
      const refund = invoice.refund;
      return [
        banner('statusRefunded', 'neutral'),
        refund
          ? [
              h('p', {}, t('refundedNext', { amount: money(refund.amount, currency), address: refund.address })),
              h('p', { class: 'muted' }, refund.txHash ? t('refundSent', { txHash: refund.txHash }) : t('refundQueued')),
            ]
          : null,
      ];
    }
  }
}

function banner(key: TextKey, tone: string, values?: Record<string, string>) {
  return h('p', { class: `banner ${tone}`, 'data-status-text': '', 'data-focus': 'status', tabindex: -1 }, t(key, values));
}

function languageSwitch() {
  return h(
    'nav',
    { class: 'languages', 'aria-label': t('language') },
    LANGUAGES.map((code) =>
      h('a', { href: `?lang=${code}`, lang: code, hreflang: code, 'aria-current': code === language ? 'true' : null, 'data-focus': `lang-${code}` }, LANGUAGE_NAMES[code]),
    ),
  );
}

/** JSON of `value` with every object's keys sorted: equal for equal data, whatever order the fields came in. */
const sameValues = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );

/** What the page shows last, so that a poll or a message bringing nothing new changes nothing on the page. */
let shownAs = '';
const content = h('div', {});
const sandboxNotice = root.dataset['mode'] === 'test' ? h('p', { class: 'banner warning', role: 'note' }, t('sandboxNotice')) : null;

/**
 * Renders the invoice. Nothing happens when nothing changed, and the form is never rebuilt under the client's
 * fingers while the invoice waits for it. A status change is read out (the persistent live region) and moves the
 * focus to the new status.
 */
function show(invoice: Invoice): void {
  const changed = shown?.status !== invoice.status;
  // Key order differs between a query's answer and a subscription's message: only the values count.
  const signature = sameValues(invoice);
  if (signature === shownAs || (!changed && invoice.status === 'CREATED')) return;
  shown = invoice;
  shownAs = signature;
  root.setAttribute('data-status', invoice.status);
  // Keyboard users keep their place when the same view is drawn again with new figures.
  const focused = content.contains(document.activeElement) ? document.activeElement?.getAttribute('data-focus') : null;
  replaceChildren(content, languageSwitch(), sandboxNotice, header(invoice), order(invoice), h('div', { class: 'status' }, statusView(invoice)), pollingNotice);
  if (!changed && focused) content.querySelector<HTMLElement>(`[data-focus="${focused}"]`)?.focus();
  window.clearInterval(countdown);
  if (content.querySelector('.countdown')) {
    tickCountdown();
    countdown = window.setInterval(tickCountdown, 1000);
  }
  if (changed) {
    const status = content.querySelector<HTMLElement>('[data-status-text]');
    announcer.textContent = status?.textContent ?? '';
    status?.focus();
  }
  if (invoice.status === 'DONE' && invoice.redirectURL && redirect === undefined) {
    const target = invoice.redirectURL;
    redirect = window.setTimeout(() => window.location.assign(target), REDIRECT_DELAY_MS);
  }
}

function notFound(): void {
  root.setAttribute('data-status', 'NOT_FOUND');
  replaceChildren(content, languageSwitch(), h('h1', {}, t('notFoundTitle')), h('p', {}, t('notFoundText')));
}

/** No more changes come to an invoice in these statuses (a refund of a closed one is the merchant's, and announced live). */
const FINAL = new Set(['DONE', 'REFUNDED']);
let refreshing: Promise<void> | null = null;

/** Reads the invoice again (one read at a time: an older answer never overwrites a newer one). */
function refresh(): Promise<void> {
  refreshing ??= request(CheckoutInvoiceDocument, { id: invoiceId })
    .then(({ invoice }) => (invoice ? show(invoice) : notFound()))
    .finally(() => (refreshing = null));
  return refreshing;
}

function poll(): void {
  if (polling !== undefined) return;
  pollingNotice = h('p', { class: 'muted', 'data-polling': '' }, t('liveUnavailable'));
  content.append(pollingNotice);
  polling = window.setInterval(() => {
    if (shown && FINAL.has(shown.status)) return window.clearInterval(polling);
    void refresh().catch(() => undefined);
  }, POLL_MS);
}

/**
 * While a payment is being confirmed or a short one awaits its rest, what was paid and the confirmations change
 * without a status change (no message comes for them): read them again every few seconds.
 */
function followPayments(): void {
  window.setInterval(() => {
    if (polling === undefined && (shown?.status === 'PROCESSING' || shown?.status === 'WRONG')) void refresh().catch(() => undefined);
  }, PAYMENT_REFRESH_MS);
}

async function start(): Promise<void> {
  replaceChildren(root, content, announcer);
  try {
    await refresh();
  } catch (e) {
    replaceChildren(content, h('p', { class: 'error', role: 'alert' }, e instanceof GraphqlError ? e.message : t('errorGeneric')));
    return;
  }
  if (!shown) return;
  live(CheckoutInvoiceLiveDocument, { id: invoiceId, after: null }, { onData: (data) => show(data.invoiceStatusChanged), onUnavailable: poll, onError: poll });
  followPayments();
}

void start();
