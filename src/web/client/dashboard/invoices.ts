// Invoices: create one (items, currency) and copy its checkout link; the list, live through invoiceEvents (a new
// invoice appears there from its event, not from the create answer); an invoice's detail with its transactions,
// webhook deliveries (redeliver) and e-mails; accept or refund a short or late payment, each said in a sentence.
import {
  DashboardAcceptInvoiceDocument,
  DashboardCreateInvoiceDocument,
  DashboardInvoiceDetailDocument,
  DashboardInvoiceEventsDocument,
  DashboardInvoicesDocument,
  DashboardRedeliverDocument,
  DashboardRefundInvoiceDocument,
  type DashboardInvoiceDetailQuery,
  type DashboardInvoiceRowFragment,
  type InvoiceCurrency,
  type InvoiceStatus,
  type PaymentCurrency,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { currencyName, statusName } from '../shared/i18n.ts';
import { apiMode, checkbox, copyButton, failure, field, language, modeOf, money, needsScope, PAGE, report, section, statusNote, t, table, time, type ModeView } from './context.ts';

export const STATUSES: InvoiceStatus[] = ['CREATED', 'PENDING', 'PROCESSING', 'DONE', 'WRONG', 'CLOSED', 'REFUNDED'];
export const INVOICE_CURRENCIES: InvoiceCurrency[] = ['USD', 'EUR', 'USDT', 'USDC', 'BTC', 'ETH', 'TON', 'SOL', 'BNB', 'BCH', 'LTC', 'TRX'];
export const PAYMENT_CURRENCIES: PaymentCurrency[] = ['BTC', 'ETH', 'TRC20USDT', 'USDTERC20', 'SOL', 'TON', 'USDC', 'BNB', 'LTC', 'TRX', 'BCH'];
const MAX_ITEMS = 20;

type Row = DashboardInvoiceRowFragment;

/** The lines of a new invoice or payment link: one or more items (add, remove), errors shown on their fields. */
export function itemsEditor() {
  const box = h('div', { class: 'items' });
  const items: { name: HTMLInputElement; price: HTMLInputElement; row: HTMLElement; nameField: ReturnType<typeof field>; priceField: ReturnType<typeof field> }[] = [];
  const addButton = h('button', { type: 'button' }, t('addItem'));
  const renumber = () => {
    items.forEach((item, i) => {
      item.row.querySelector('legend')!.textContent = t('itemNumber', { n: i + 1 });
      const remove = item.row.querySelector<HTMLButtonElement>('button.remove')!;
      remove.hidden = items.length === 1;
      remove.setAttribute('aria-label', t('removeItem', { n: i + 1 }));
    });
    addButton.hidden = items.length >= MAX_ITEMS;
  };
  const addItem = () => {
    const name = h('input', { name: 'itemName', required: true, maxlength: 255, autocomplete: 'off' });
    const price = h('input', { name: 'itemPrice', required: true, inputmode: 'decimal', maxlength: 40, autocomplete: 'off' });
    const nameField = field(t('itemName'), name);
    const priceField = field(t('itemPrice'), price);
    const row: HTMLElement = h('fieldset', { class: 'item' }, h('legend', {}), nameField.wrapper, priceField.wrapper);
    const item = { name, price, row, nameField, priceField };
    row.append(
      h(
        'button',
        {
          type: 'button',
          class: 'remove',
          onclick: () => {
            items.splice(items.indexOf(item), 1);
            row.remove();
            renumber();
            addButton.focus();
          },
        },
        t('remove'),
      ),
    );
    items.push(item);
    box.append(row);
    renumber();
    return item;
  };
  addButton.addEventListener('click', () => addItem().name.focus());
  addItem();
  return {
    elements: [box, addButton],
    values: () => items.map((i) => ({ name: i.name.value.trim(), price: i.price.value.trim() })),
    clear: () => items.forEach((i) => (i.nameField.clear(), i.priceField.clear())),
    /** `items.1.price` → the second item's price field. */
    mark: (details: readonly { path: string; message: string }[]) => {
      for (const d of details) {
        const [, index, key] = /^items\.(\d+)\.(name|price)/.exec(d.path) ?? [];
        const item = index !== undefined ? items[Number(index)] : undefined;
        if (item) (key === 'name' ? item.nameField : item.priceField).error(d.message);
      }
    },
    /** Back to one empty line (after the form's reset). */
    reset: () => {
      while (items.length > 1) items.pop()!.row.remove();
      renumber();
    },
  };
}

/** The currency of the prices and the payment currency (or the client's choice). */
export function currencyFields() {
  const currency = h('select', { name: 'invoiceCurrency' }, INVOICE_CURRENCIES.map((c) => h('option', { value: c }, c)));
  const payIn = h('select', { name: 'paymentCurrency' }, h('option', { value: '' }, t('clientChooses')), PAYMENT_CURRENCIES.map((c) => h('option', { value: c }, currencyName(language, c))));
  return {
    currency: field(t('invoiceCurrency'), currency).wrapper,
    payIn: field(t('fixedPaymentCurrency'), payIn).wrapper,
    values: () => ({ invoiceCurrency: currency.value as InvoiceCurrency, paymentCurrency: (payIn.value || null) as PaymentCurrency | null }),
  };
}

/** The create form: a currency, one or more items, optionally a fixed payment currency; then the checkout link. */
export function createInvoiceSection(v: ModeView) {
  if (!v.may('INVOICES_WRITE')) return section('new-invoice', 'newInvoice', needsScope('invoices:write'));
  const currencies = currencyFields();
  const items = itemsEditor();
  const merchantPays = checkbox(t('merchantPaysFee'));
  const note = statusNote();
  const result = h('div', { class: 'created', tabindex: -1 });
  const form = h(
    'form',
    { class: 'task', 'data-form': 'create-invoice' },
    currencies.currency,
    items.elements,
    currencies.payIn,
    merchantPays.wrapper,
    h('button', { type: 'submit', class: 'primary' }, t('createInvoice')),
    note,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    note.textContent = '';
    replaceChildren(result);
    items.clear();
    const input = { ...currencies.values(), items: items.values(), isMerchantPaysFee: merchantPays.input.checked };
    v.gql(DashboardCreateInvoiceDocument, { input })
      .then(({ createInvoice: r }) => {
        if (r.__typename !== 'CreateInvoiceSuccess') {
          items.mark('details' in r ? (r.details ?? []) : []);
          note.textContent = failure(r as never);
          return;
        }
        const { invoice } = r;
        const copied = statusNote();
        replaceChildren(
          result,
          h('p', {}, t('invoiceCreated', { id: invoice.id, total: money(invoice.total.amount, invoice.total.currency) })),
          h('p', { class: 'link' }, h('a', { href: invoice.payUrl, 'data-pay-url': '' }, invoice.payUrl)),
          copyButton(t('copyCheckoutLink'), () => invoice.payUrl, copied),
          copied,
        );
        result.focus();
        form.reset();
        items.reset();
      })
      .catch((e: unknown) => (note.textContent = e instanceof Error ? e.message : String(e)));
  });
  return section('new-invoice', 'newInvoice', form, result);
}

/** A page of invoices, then live changes through invoiceEvents. */
export function invoicesSection(v: ModeView) {
  const filterId = uid('filter');
  const filter = h('select', { id: filterId }, h('option', { value: '' }, t('allStatuses')), STATUSES.map((s) => h('option', { value: s }, statusName(language, s))));
  const body = h('tbody', {});
  const rows = new Map<string, Row>();
  const detail = h('div', { class: 'detail' });
  const selected = () => (filter.value ? (filter.value as InvoiceStatus) : null);
  const render = () => {
    // The token sees its own mode only; the check keeps it so on this page whatever a message brings.
    const list = [...rows.values()].filter((r) => r.mode === apiMode(v.mode) && (!selected() || r.status === selected())).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    replaceChildren(
      body,
      list.map((r) =>
        h(
          'tr',
          { 'data-invoice': r.id, 'data-status': r.status, 'data-mode': modeOf(r.mode) },
          h('td', {}, h('code', {}, r.id)),
          h('td', {}, time(r.createdAt)),
          h('td', {}, statusName(language, r.status)),
          h('td', { class: 'num' }, money(r.total.amount, r.total.currency)),
          h('td', {}, r.clientEmail ?? ''),
          h('td', {}, h('button', { type: 'button', onclick: () => void showInvoice(v, r.id, detail).catch(report), 'aria-label': `${t('show')} ${r.id}` }, t('show'))),
        ),
      ),
    );
  };
  let next: string | null = null;
  const more = h('button', { type: 'button', hidden: true }, t('more'));
  const load = async (after: string | null = null) => {
    const status = selected();
    const { invoices } = await v.gql(DashboardInvoicesDocument, { first: PAGE, after, filter: status ? { status: [status] } : null });
    if (!after) rows.clear();
    for (const r of invoices.nodes) rows.set(r.id, r);
    next = invoices.pageInfo.hasNextPage ? (invoices.pageInfo.endCursor ?? null) : null;
    more.hidden = next === null;
    render();
  };
  more.addEventListener('click', () => void load(next).catch(report));
  filter.addEventListener('change', () => void load().catch(report));
  v.reloads.push(() => void load().catch(report));
  v.live(DashboardInvoiceEventsDocument, { after: null }, ({ invoiceEvents: r }) => {
    rows.set(r.id, r);
    render();
    v.moneyMoved();
  });
  void load().catch(report);
  return section(
    'invoices',
    'invoices',
    h('div', { class: 'field inline' }, h('label', { for: filterId }, t('statusFilter')), filter),
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'invoices' },
        h('caption', { class: 'visually-hidden' }, t('invoices')),
        h('thead', {}, h('tr', {}, ['Id', t('created'), t('status'), t('total'), t('client'), t('details')].map((x) => h('th', { scope: 'col' }, x)))),
        body,
      ),
    ),
    more,
    detail,
  );
}

type Detail = NonNullable<DashboardInvoiceDetailQuery['invoice']>;

/** Accept or refund: what each does, in a sentence, beside its button (a short payment, or money after expiry). */
function decision(v: ModeView, invoice: Detail, reload: () => Promise<void>) {
  const paid = invoice.paymentDetails && invoice.address ? money(invoice.paymentDetails.paidAmount, invoice.address.asset) : null;
  const open = (invoice.status === 'WRONG' || invoice.status === 'CLOSED') && paid !== null && invoice.paymentDetails!.paidAmount !== '0';
  if (!open) return null;
  const note = statusNote();
  const accept = v.may('INVOICES_WRITE')
    ? h(
        'div',
        { class: 'choice' },
        h('p', {}, t('acceptMeans', { paid })),
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              void v.gql(DashboardAcceptInvoiceDocument, { input: { invoiceId: invoice.id } })
                .then(({ acceptInvoice: r }) => (r.__typename === 'AcceptInvoiceSuccess' ? reload() : void (note.textContent = r.message)))
                .catch(report),
          },
          t('acceptAsPaid'),
        ),
      )
    : null;
  let refund: HTMLElement | null = null;
  if (v.may('PAYOUTS_WRITE')) {
    const address = h('input', { name: 'refundAddress', required: true, maxlength: 128, spellcheck: 'false', autocomplete: 'off' });
    const tag = h('input', { name: 'refundTag', maxlength: 120, autocomplete: 'off' });
    const addressField = field(t('refundAddress'), address);
    const form = h('form', { class: 'choice' }, h('p', {}, t('refundMeans', { paid })), addressField.wrapper, field(t('tagOptional'), tag).wrapper, h('button', { type: 'submit' }, t('refundToClient')));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      addressField.clear();
      void v.gql(DashboardRefundInvoiceDocument, { input: { invoiceId: invoice.id, address: address.value.trim(), tag: tag.value.trim() || null } })
        .then(({ refundInvoice: r }) => {
          if (r.__typename === 'RefundInvoiceSuccess') return reload();
          addressField.error(failure(r as never));
        })
        .catch(report);
    });
    refund = form;
  }
  return h('div', { class: 'decision' }, h('h4', {}, t(invoice.status === 'WRONG' ? 'shortPayment' : 'latePayment')), accept, refund, note);
}

export async function showInvoice(v: ModeView, id: string, into: HTMLElement): Promise<void> {
  const { invoice, emailDeliveries } = await v.gql(DashboardInvoiceDetailDocument, { id });
  if (!invoice) return;
  const note = statusNote();
  const deliveries = invoice.webhookDeliveries ?? [];
  const heading = h('h3', { tabindex: -1 }, t('invoiceDetail', { id }));
  const reload = () => showInvoice(v, id, into);
  replaceChildren(
    into,
    h(
      'article',
      { 'aria-label': t('invoiceDetail', { id }) },
      heading,
      h('button', { type: 'button', class: 'close', onclick: () => replaceChildren(into) }, t('close')),
      h(
        'dl',
        {},
        h('dt', {}, t('status')),
        h('dd', { 'data-detail-status': invoice.status }, statusName(language, invoice.status)),
        h('dt', {}, t('checkoutLink')),
        h('dd', {}, h('a', { href: invoice.payUrl }, invoice.payUrl)),
        h('dt', {}, t('orderId')),
        h('dd', {}, invoice.orderId ? h('code', {}, invoice.orderId) : '—'),
        h('dt', {}, t('metadata')),
        h('dd', {}, invoice.metadata ? Object.entries(invoice.metadata).map(([key, value]) => `${key}: ${value}`).join('; ') : '—'),
        h('dt', {}, t('address')),
        h('dd', {}, invoice.address ? h('code', {}, invoice.address.address) : '—'),
        h('dt', {}, t('amountDue')),
        h('dd', {}, invoice.paymentDetails && invoice.address ? money(invoice.paymentDetails.amount, invoice.address.asset) : '—'),
        h('dt', {}, t('paid')),
        h('dd', {}, invoice.paymentDetails && invoice.address ? money(invoice.paymentDetails.paidAmount, invoice.address.asset) : '—'),
      ),
      decision(v, invoice, reload),
      invoice.transactions.length
        ? table(
            t('transactions'),
            [t('hash'), t('amount'), t('status'), t('confirmationsShort')],
            invoice.transactions.map((x) => h('tr', {}, h('td', {}, h('code', {}, x.txHash)), h('td', { class: 'num' }, money(x.amount, x.from)), h('td', {}, x.status.toLowerCase()), h('td', { class: 'num' }, String(x.confirmations)))),
          )
        : h('p', {}, `${t('transactions')}: ${t('none')}`),
      invoice.refund ? h('p', {}, `${t('refund')}: ${invoice.refund.amount} → ${invoice.refund.address} (${invoice.refund.status.toLowerCase()})`) : null,
      table(
        t('deliveries'),
        [t('event'), t('status'), t('attempts'), t('lastAnswer'), ''],
        deliveries.map((d) =>
          h(
            'tr',
            { 'data-delivery': d.id },
            h('td', {}, d.eventType.toLowerCase()),
            h('td', {}, d.status.toLowerCase()),
            h('td', { class: 'num' }, String(d.attempts)),
            h('td', {}, d.lastStatusCode ? String(d.lastStatusCode) : (d.lastError ?? '')),
            h(
              'td',
              {},
              v.may('SETTINGS_WRITE')
                ? h(
                    'button',
                    {
                      type: 'button',
                      onclick: () =>
                        void v.gql(DashboardRedeliverDocument, { input: { eventId: d.eventId } })
                          .then(async ({ redeliverWebhook: r }) => {
                            if (r.__typename !== 'RedeliverWebhookSuccess') return void (note.textContent = r.message);
                            // The new delivery shows in the list.
                            await reload();
                            into.querySelector('article > [role="status"]')!.textContent = t('redelivered');
                          })
                          .catch(report),
                    },
                    t('redeliver'),
                  )
                : null,
            ),
          ),
        ),
      ),
      table(
        t('invoiceEmails'),
        [t('kind'), t('recipient'), t('status'), t('attempts'), t('lastAnswer')],
        emailDeliveries.nodes.map((e) =>
          h(
            'tr',
            { 'data-email': e.id },
            h('td', {}, e.kind),
            h('td', {}, e.recipient),
            h('td', {}, e.status.toLowerCase()),
            h('td', { class: 'num' }, String(e.attempts)),
            h('td', {}, e.lastError ?? (e.lastResponseCode ? String(e.lastResponseCode) : '')),
          ),
        ),
      ),
      note,
    ),
  );
  heading.focus();
}
