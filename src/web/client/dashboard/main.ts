// The merchant dashboard: sign in with the public token (kept in this tab's sessionStorage only), then the invoices
// live (invoiceEvents), an invoice's transactions, refund and webhook deliveries (redeliver), balances, the webhook
// URL and its test, withdrawals live (withdrawalEvents) and the auto-withdrawal rules. Only the public GraphQL API.
import {
  DashboardAutoWithdrawalsDocument,
  DashboardUpdateAutoWithdrawalsDocument,
  DashboardBalancesDocument,
  DashboardInvoiceDetailDocument,
  DashboardInvoiceEventsDocument,
  DashboardInvoicesDocument,
  DashboardRedeliverDocument,
  DashboardSetWebhookUrlDocument,
  DashboardTestWebhookDocument,
  DashboardViewerDocument,
  DashboardWebhookSettingsDocument,
  DashboardWithdrawalEventsDocument,
  DashboardWithdrawalsDocument,
  type DashboardAutoWithdrawalRuleFragment,
  type DashboardInvoiceRowFragment,
  type DashboardWithdrawalRowFragment,
  type InvoiceStatus,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { closeLive, GraphqlError, live, request } from '../shared/graphql.ts';
import { isLanguage, statusName, text, unitOf, type TextKey } from '../shared/i18n.ts';

const TOKEN_KEY = 'payrail.publicToken';
const STATUSES: InvoiceStatus[] = ['CREATED', 'PENDING', 'PROCESSING', 'DONE', 'WRONG', 'CLOSED', 'REFUNDED'];
const PAGE = 50;
const POLL_MS = 10_000;

type Row = DashboardInvoiceRowFragment;
type Withdrawal = DashboardWithdrawalRowFragment;

const root = document.getElementById('app')!;
const language = isLanguage(document.documentElement.lang) ? document.documentElement.lang : 'en';
const t = (key: TextKey, values?: Record<string, string | number>) => text(language, key, values);
const time = (iso: string) => new Date(iso).toLocaleString(language);
const money = (amount: string, currency: string) => `${amount} ${unitOf(currency)}`;

const stops: (() => void)[] = [];
/** Where failures of the dashboard's own requests are read out. */
const problems = h('p', { class: 'error', role: 'alert' });
const report = (e: unknown) => void (problems.textContent = e instanceof Error ? e.message : t('errorGeneric'));
/** Called every few seconds when no live connection gets through: the lists read themselves again. */
const reloads: (() => void)[] = [];
let polling: number | undefined;
const liveNotice = h('p', { class: 'muted', role: 'status' });
const unavailable = () => {
  if (polling !== undefined) return;
  liveNotice.textContent = t('liveUnavailableDashboard');
  polling = window.setInterval(() => reloads.forEach((reload) => reload()), POLL_MS);
};
const token = () => sessionStorage.getItem(TOKEN_KEY);
const gql = <R, V>(document: Parameters<typeof request<R, V>>[0], variables: V) => request(document, variables, token());

function signInView(problem = ''): void {
  const id = uid('token');
  const input = h('input', { id, type: 'password', name: 'token', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint ${id}-error` });
  const error = h('p', { class: 'field-error', id: `${id}-error`, role: 'alert' }, problem);
  const form = h(
    'form',
    { class: 'sign-in' },
    h('h1', {}, t('dashboardTitle')),
    h('div', { class: 'field' }, h('label', { for: id }, t('token')), input, h('p', { class: 'hint', id: `${id}-hint` }, t('tokenHint')), error),
    h('button', { type: 'submit', class: 'primary' }, t('signIn')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    request(DashboardViewerDocument, {}, value)
      .then(({ viewer }) => {
        sessionStorage.setItem(TOKEN_KEY, value);
        mainView(viewer.name);
      })
      .catch(() => {
        input.setAttribute('aria-invalid', 'true');
        error.textContent = t('tokenInvalid');
        input.focus();
      });
  });
  replaceChildren(root, form);
  input.focus();
}

function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  for (const stop of stops.splice(0)) stop();
  closeLive();
  window.clearInterval(polling);
  polling = undefined;
  reloads.length = 0;
  problems.textContent = liveNotice.textContent = '';
  signInView();
}

const table = (caption: string, headings: string[], rows: Node[]) =>
  h('table', {}, h('caption', {}, caption), h('thead', {}, h('tr', {}, headings.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, rows));

const section = (id: string, title: TextKey, ...content: (Node | null)[]) =>
  h('section', { id, 'aria-labelledby': `${id}-heading` }, h('h2', { id: `${id}-heading` }, t(title)), ...content);

// ---- Invoices: a page, then live changes through invoiceEvents.

function invoicesSection() {
  const filterId = uid('filter');
  const filter = h(
    'select',
    { id: filterId },
    h('option', { value: '' }, t('allStatuses')),
    STATUSES.map((s) => h('option', { value: s }, statusName(language, s))),
  );
  const body = h('tbody', {});
  const rows = new Map<string, Row>();
  const detail = h('div', { class: 'detail' });
  const selected = () => (filter.value ? (filter.value as InvoiceStatus) : null);
  const render = () => {
    const list = [...rows.values()].filter((r) => !selected() || r.status === selected()).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    replaceChildren(
      body,
      list.map((r) =>
        h(
          'tr',
          { 'data-invoice': r.id, 'data-status': r.status },
          h('td', {}, h('code', {}, r.id)),
          h('td', {}, time(r.createdAt)),
          h('td', {}, statusName(language, r.status)),
          h('td', { class: 'num' }, money(r.total.amount, r.total.currency)),
          h('td', {}, r.clientEmail ?? ''),
          h('td', {}, h('button', { type: 'button', onclick: () => void showInvoice(r.id, detail), 'aria-label': `${t('show')} ${r.id}` }, t('show'))),
        ),
      ),
    );
  };
  let next: string | null = null;
  const more = h('button', { type: 'button', hidden: true }, t('more'));
  const load = async (after: string | null = null) => {
    const status = selected();
    const { invoices } = await gql(DashboardInvoicesDocument, { first: PAGE, after, filter: status ? { status: [status] } : null });
    if (!after) rows.clear();
    for (const r of invoices.nodes) rows.set(r.id, r);
    next = invoices.pageInfo.hasNextPage ? (invoices.pageInfo.endCursor ?? null) : null;
    more.hidden = next === null;
    render();
  };
  more.addEventListener('click', () => void load(next).catch(report));
  filter.addEventListener('change', () => void load().catch(report));
  reloads.push(() => void load().catch(report));
  stops.push(
    live(DashboardInvoiceEventsDocument, { after: null }, {
      token: token(),
      onData: ({ invoiceEvents: r }) => {
        rows.set(r.id, r);
        render();
        refreshBalances();
      },
      onUnavailable: unavailable,
      onError: report,
    }),
  );
  void load().catch(report);
  return section(
    'invoices',
    'invoices',
    h('div', { class: 'field inline' }, h('label', { for: filterId }, t('statusFilter')), filter),
    h(
      'table',
      { class: 'invoices' },
      h('caption', { class: 'visually-hidden' }, t('invoices')),
      h('thead', {}, h('tr', {}, ['Id', t('created'), t('status'), t('total'), t('client'), t('details')].map((x) => h('th', { scope: 'col' }, x)))),
      body,
    ),
    more,
    detail,
  );
}

async function showInvoice(id: string, into: HTMLElement): Promise<void> {
  const { invoice } = await gql(DashboardInvoiceDetailDocument, { id });
  if (!invoice) return;
  const note = h('p', { role: 'status', class: 'muted' });
  const deliveries = invoice.webhookDeliveries ?? [];
  const heading = h('h3', { tabindex: -1 }, t('invoiceDetail', { id }));
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
        h('dd', {}, statusName(language, invoice.status)),
        h('dt', {}, t('address')),
        h('dd', {}, invoice.address ? h('code', {}, invoice.address.address) : '—'),
        h('dt', {}, t('amountDue')),
        h('dd', {}, invoice.paymentDetails && invoice.address ? money(invoice.paymentDetails.amount, invoice.address.asset) : '—'),
        h('dt', {}, t('paid')),
        h('dd', {}, invoice.paymentDetails && invoice.address ? money(invoice.paymentDetails.paidAmount, invoice.address.asset) : '—'),
      ),
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
              h(
                'button',
                {
                  type: 'button',
                  onclick: () =>
                    void gql(DashboardRedeliverDocument, { input: { eventId: d.eventId } })
                      .then(async ({ redeliverWebhook: r }) => {
                        if (r.__typename !== 'RedeliverWebhookSuccess') return void (note.textContent = r.message);
                        // The new delivery shows in the list.
                        await showInvoice(id, into);
                        into.querySelector('[role="status"]')!.textContent = t('redelivered');
                      })
                      .catch(report),
                },
                t('redeliver'),
              ),
            ),
          ),
        ),
      ),
      note,
    ),
  );
  heading.focus();
}

// ---- Balances, webhooks, withdrawals, auto-withdrawals.

/** Money moves with invoices and withdrawals: their live events refresh the balances (merged within half a second). */
let refreshBalances = () => {};

function balancesSection() {
  const body = h('div', {});
  let timer: number | undefined;
  refreshBalances = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(load, 500);
  };
  const load = () =>
    void gql(DashboardBalancesDocument, {})
      .then(({ balances }) =>
    replaceChildren(
      body,
      balances.length
        ? table(
            t('balances'),
            [t('asset'), t('available'), t('held'), t('pending')],
            balances.map((b) => h('tr', {}, h('td', {}, unitOf(b.asset) === b.asset ? b.asset : `${unitOf(b.asset)} (${b.asset})`), h('td', { class: 'num' }, b.available), h('td', { class: 'num' }, b.held), h('td', { class: 'num' }, b.pending))),
          )
        : h('p', {}, t('none')),
    ),
      )
      .catch(report);
  load();
  reloads.push(load);
  return section('balances', 'balances', body);
}

function webhooksSection() {
  const id = uid('webhook');
  const input = h('input', { id, type: 'url', name: 'url', maxlength: 2048, 'aria-describedby': `${id}-hint ${id}-error` });
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  const note = h('p', { role: 'status', class: 'muted' });
  void gql(DashboardWebhookSettingsDocument, {})
    .then(({ webhookSettings }) => (input.value = webhookSettings.url ?? ''))
    .catch(report);
  const form = h(
    'form',
    {},
    h('div', { class: 'field' }, h('label', { for: id }, t('webhookUrl')), input, h('p', { class: 'hint', id: `${id}-hint` }, t('webhookUrlHint')), error),
    h('button', { type: 'submit' }, t('save')),
    ' ',
    h(
      'button',
      {
        type: 'button',
        onclick: () =>
          void gql(DashboardTestWebhookDocument, {})
            .then(({ sendTestWebhook: r }) => {
              if (r.__typename !== 'SendTestWebhookSuccess') return void (note.textContent = r.message);
              const { result } = r;
              note.textContent = result.ok ? t('testOk', { status: result.statusCode ?? '', ms: result.durationMs }) : t('testFailed', { error: result.error ?? String(result.statusCode) });
            })
            .catch(report),
      },
      t('sendTest'),
    ),
    note,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    input.removeAttribute('aria-invalid');
    error.textContent = '';
    void gql(DashboardSetWebhookUrlDocument, { input: { url: input.value.trim() || null } })
      .then(({ setWebhookUrl: r }) => {
        if (r.__typename === 'SetWebhookUrlSuccess') return void (note.textContent = t('saved'));
        input.setAttribute('aria-invalid', 'true');
        error.textContent = ('details' in r && r.details[0]?.message) || r.message;
      })
      .catch(report);
  });
  return section('webhooks', 'webhooks', form);
}

function withdrawalsSection() {
  const body = h('tbody', {});
  const rows = new Map<string, Withdrawal>();
  const render = () =>
    replaceChildren(
      body,
      [...rows.values()]
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .map((w) => h('tr', { 'data-withdrawal': w.uid }, h('td', {}, time(w.createdAt)), h('td', {}, w.status.toLowerCase()), h('td', { class: 'num' }, money(w.amount, w.asset)), h('td', {}, h('code', {}, w.to)), h('td', {}, w.txHash ? h('code', {}, w.txHash) : ''))),
    );
  const load = () =>
    void gql(DashboardWithdrawalsDocument, { first: PAGE })
      .then(({ withdrawals }) => {
        for (const w of withdrawals.nodes) rows.set(w.uid, w);
        render();
      })
      .catch(report);
  load();
  reloads.push(load);
  stops.push(
    live(DashboardWithdrawalEventsDocument, { after: null }, {
      token: token(),
      onData: ({ withdrawalEvents: w }) => {
        rows.set(w.uid, w);
        render();
        refreshBalances();
      },
      onUnavailable: unavailable,
      onError: report,
    }),
  );
  const rules = h('div', {});
  const showRules = (all: AutoWithdrawalRule[], selected?: string) => {
    // Every currency has a rule; the ones never set up say nothing.
    const set = all.filter((r) => r.isEnabled || r.withdrawalAddress);
    replaceChildren(
      rules,
      set.length
        ? table(
            t('autoWithdrawals'),
            [t('asset'), t('enabled'), t('threshold'), t('to')],
            set.map((r) => h('tr', { 'data-rule': r.asset }, h('td', {}, r.asset), h('td', {}, r.isEnabled ? t('yes') : t('no')), h('td', { class: 'num' }, r.threshold), h('td', {}, h('code', {}, r.withdrawalAddress)))),
          )
        : h('p', {}, `${t('autoWithdrawals')}: ${t('none')}`),
      ruleForm(all, showRules, selected),
    );
  };
  void gql(DashboardAutoWithdrawalsDocument, {})
    .then(({ autoWithdrawals }) => showRules(autoWithdrawals))
    .catch(report);
  return section(
    'withdrawals',
    'withdrawals',
    h('table', {}, h('caption', { class: 'visually-hidden' }, t('withdrawals')), h('thead', {}, h('tr', {}, [t('created'), t('status'), t('amount'), t('to'), t('hash')].map((x) => h('th', { scope: 'col' }, x)))), body),
    rules,
  );
}

type AutoWithdrawalRule = DashboardAutoWithdrawalRuleFragment;

/** Sets one currency's auto-withdrawal rule (the API takes the rules it is given and keeps the others). */
function ruleForm(current: AutoWithdrawalRule[], show: (rules: AutoWithdrawalRule[], selected?: string) => void, selected?: string) {
  const ids = { asset: uid('rule-asset'), threshold: uid('rule-threshold'), address: uid('rule-address'), tag: uid('rule-tag'), enabled: uid('rule-enabled') };
  const asset = h('select', { id: ids.asset }, current.map((r) => h('option', { value: r.asset, selected: r.asset === selected }, r.asset)));
  const threshold = h('input', { id: ids.threshold, inputmode: 'decimal', required: true, maxlength: 40 });
  const address = h('input', { id: ids.address, required: true, maxlength: 128, spellcheck: 'false' });
  const tag = h('input', { id: ids.tag, maxlength: 120 });
  const enabled = h('input', { id: ids.enabled, type: 'checkbox', checked: true });
  const note = h('p', { role: 'status', class: 'muted' });
  const fill = () => {
    const rule = current.find((r) => r.asset === asset.value);
    threshold.value = rule && rule.withdrawalAddress ? rule.threshold : '';
    address.value = rule?.withdrawalAddress ?? '';
    tag.value = rule?.withdrawalTag ?? '';
    enabled.checked = rule?.isEnabled ?? true;
  };
  asset.addEventListener('change', fill);
  fill();
  const form = h(
    'form',
    { class: 'rule' },
    h('h3', {}, t('setRule')),
    h('div', { class: 'field' }, h('label', { for: ids.asset }, t('asset')), asset),
    h('div', { class: 'field' }, h('label', { for: ids.threshold }, t('threshold')), threshold),
    h('div', { class: 'field' }, h('label', { for: ids.address }, t('to')), address),
    h('div', { class: 'field' }, h('label', { for: ids.tag }, t('tagOptional')), tag),
    h('div', { class: 'field inline' }, enabled, h('label', { for: ids.enabled }, t('enabled'))),
    h('button', { type: 'submit' }, t('save')),
    note,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const rule = {
      asset: asset.value as AutoWithdrawalRule['asset'],
      isEnabled: enabled.checked,
      threshold: threshold.value.trim(),
      withdrawalAddress: address.value.trim(),
      withdrawalTag: tag.value.trim() || null,
    };
    gql(DashboardUpdateAutoWithdrawalsDocument, { input: { rules: [rule] } })
      .then(({ updateAutoWithdrawals: r }) => {
        if (r.__typename === 'UpdateAutoWithdrawalsSuccess') return show(r.autoWithdrawals, rule.asset);
        note.textContent = ('details' in r && r.details.map((d) => `${d.path}: ${d.message}`).join('; ')) || r.message;
      })
      // A value the API cannot even read (a threshold that is no number): its message.
      .catch((e: unknown) => (note.textContent = e instanceof Error ? e.message : String(e)));
  });
  return form;
}

function mainView(name: string): void {
  replaceChildren(
    root,
    h(
      'header',
      { class: 'top' },
      h('h1', {}, t('dashboardTitle')),
      h('p', { class: 'muted' }, t('signedInAs', { name })),
      h('button', { type: 'button', onclick: signOut }, t('signOut')),
    ),
    problems,
    liveNotice,
    invoicesSection(),
    balancesSection(),
    webhooksSection(),
    withdrawalsSection(),
  );
}

async function start(): Promise<void> {
  const saved = token();
  if (!saved) return signInView();
  try {
    const { viewer } = await request(DashboardViewerDocument, {}, saved);
    mainView(viewer.name);
  } catch (e) {
    // Only a refused token is forgotten; a network failure keeps it for the next attempt (reload).
    if (e instanceof GraphqlError && e.code === 'UNAUTHENTICATED') {
      sessionStorage.removeItem(TOKEN_KEY);
      return signInView(t('tokenInvalid'));
    }
    replaceChildren(root, h('p', { class: 'error', role: 'alert' }, t('errorGeneric')));
  }
}

void start();
