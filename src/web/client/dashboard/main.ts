// The merchant dashboard: sign in with a public token, then the invoices live (invoiceEvents), an invoice's
// transactions, refund, webhook deliveries (redeliver) and e-mails, balances, the webhook URL and its test, the e-mail
// settings, withdrawals live
// (withdrawalEvents) and the auto-withdrawal rules. Only the public GraphQL API.
// Modes: a merchant has a test and a live side, each with its own token that sees only its mode's data. Signing in
// exchanges the token for a short-lived session of its mode held in an httpOnly cookie (docs/security.md): the page
// never keeps the token, and sends `Authorization: Session <mode>` to use that mode's cookie. It shows one mode at a
// time; the switch in the header ends everything the old mode runs (subscriptions, polls, timers, pending answers)
// before the other mode's data loads. Forms that move money show only to a session with payouts:write.
import {
  DashboardAuditLogDocument,
  DashboardAutoWithdrawalsDocument,
  DashboardUpdateAutoWithdrawalsDocument,
  DashboardBalancesDocument,
  DashboardInvoiceDetailDocument,
  DashboardInvoiceEventsDocument,
  DashboardInvoicesDocument,
  DashboardNotificationSettingsDocument,
  DashboardRedeliverDocument,
  DashboardSetNotificationSettingsDocument,
  DashboardSetWebhookUrlDocument,
  DashboardTestWebhookDocument,
  DashboardViewerDocument,
  DashboardWebhookSettingsDocument,
  DashboardWithdrawalEventsDocument,
  DashboardWithdrawalsDocument,
  type DashboardAutoWithdrawalRuleFragment,
  type DashboardInvoiceRowFragment,
  type DashboardNotificationSettingsFragment,
  type DashboardViewerQuery,
  type DashboardWithdrawalRowFragment,
  type InvoiceStatus,
  type Mode as ApiMode,
  type TypedDocumentString,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { closeLive, GraphqlError, live, request } from '../shared/graphql.ts';
import { isLanguage, statusName, text, unitOf, type TextKey } from '../shared/i18n.ts';

type Mode = 'test' | 'live';
const MODES: Mode[] = ['test', 'live'];
const MODE_KEY = 'payrail.mode';
/** The Authorization value that makes the API use this mode's session cookie. */
const sessionOf = (mode: Mode) => `Session ${mode}`;
const isMode = (value: string | null): value is Mode => value === 'test' || value === 'live';
const modeOf = (mode: ApiMode): Mode => (mode === 'LIVE' ? 'live' : 'test');
const apiMode = (mode: Mode): ApiMode => (mode === 'live' ? 'LIVE' : 'TEST');
const STATUSES: InvoiceStatus[] = ['CREATED', 'PENDING', 'PROCESSING', 'DONE', 'WRONG', 'CLOSED', 'REFUNDED'];
const PAGE = 50;
const POLL_MS = 10_000;

type Row = DashboardInvoiceRowFragment;
type Withdrawal = DashboardWithdrawalRowFragment;
type Viewer = DashboardViewerQuery['viewer'] & { scopes: DashboardViewerQuery['viewerScopes'] };
const viewerOf = (answer: DashboardViewerQuery): Viewer => ({ ...answer.viewer, scopes: answer.viewerScopes });

const root = document.getElementById('app')!;
const language = isLanguage(document.documentElement.lang) ? document.documentElement.lang : 'en';
const t = (key: TextKey, values?: Record<string, string | number>) => text(language, key, values);
const time = (iso: string) => new Date(iso).toLocaleString(language);
const money = (amount: string, currency: string) => `${amount} ${unitOf(currency)}`;
const modeName = (mode: Mode) => t(mode === 'test' ? 'modeTest' : 'modeLive');

/** An answer that arrived after its mode was left: dropped, never shown. */
class Superseded extends Error {}

/** Where failures of the dashboard's own requests are read out. */
const problems = h('p', { class: 'error', role: 'alert' });
const report = (e: unknown) => {
  if (e instanceof Superseded) return;
  problems.textContent = e instanceof Error ? e.message : t('errorGeneric');
};
const liveNotice = h('p', { class: 'muted', role: 'status' });
/** Says which mode is shown after a switch (the switch keeps the focus, so the change is read out here). */
const modeNotice = h('p', { class: 'visually-hidden', role: 'status' });

/**
 * What one mode's view runs, with that mode's token: requests, live subscriptions, the polling fallback and timers.
 * end() stops all of it; an answer that comes after is dropped (Superseded), so nothing of one mode shows in the other.
 */
class ModeView {
  /** Called when the view ends: subscriptions and timers. */
  readonly stops: (() => void)[] = [];
  /** Called every few seconds when no live connection gets through: the lists read themselves again. */
  readonly reloads: (() => void)[] = [];
  /** Money moves with invoices and withdrawals: their live events refresh the balances. */
  refreshBalances = () => {};
  private polling: number | undefined;
  private ended = false;

  constructor(
    readonly mode: Mode,
    readonly viewer: Viewer,
  ) {}

  /** What the session may do (the scopes of the token it was made with). */
  may(scope: Viewer['scopes'][number]): boolean {
    return this.viewer.scopes.includes(scope);
  }

  gql<R, V>(document: TypedDocumentString<R, V>, variables: V): Promise<R> {
    return request(document, variables, sessionOf(this.mode)).then(
      (answer) => (this.ended ? Promise.reject(new Superseded()) : answer),
      (e: unknown) => Promise.reject(this.ended ? new Superseded() : e),
    );
  }

  live<R, V extends { after?: string | null }>(document: TypedDocumentString<R, V>, variables: V, onData: (data: R) => void): void {
    this.stops.push(
      live(document, variables, {
        authorization: sessionOf(this.mode),
        onData: (data) => this.ended || onData(data),
        onUnavailable: () => this.unavailable(),
        onError: (e) => this.ended || report(e),
      }),
    );
  }

  private unavailable(): void {
    if (this.ended || this.polling !== undefined) return;
    liveNotice.textContent = t('liveUnavailableDashboard');
    this.polling = window.setInterval(() => this.reloads.forEach((reload) => reload()), POLL_MS);
  }

  end(): void {
    this.ended = true;
    for (const stop of this.stops.splice(0)) stop();
    window.clearInterval(this.polling);
    this.reloads.length = 0;
    this.refreshBalances = () => {};
  }
}

/** The page after sign-in: the header with the mode switch stays; the mode's banner and content change with it. */
interface Frame {
  signedInAs: HTMLElement;
  switches: Record<Mode, HTMLInputElement>;
  banner: HTMLElement;
  content: HTMLElement;
}

let frame: Frame | null = null;
let view: ModeView | null = null;
/** Counts mode changes: an answer to an older one (a slow sign-in check) is dropped. */
let generation = 0;

/** Exchanges a token for a session cookie of its mode; answers the mode, or throws when the token is refused. */
async function signInWith(token: string): Promise<Mode> {
  const res = await fetch(new URL('/dashboard/session', window.location.href), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => ({}))) as { mode?: string };
  if (!res.ok || !isMode(body.mode ?? null)) throw new GraphqlError(t('tokenInvalid'), 'UNAUTHENTICATED');
  return body.mode as Mode;
}

/** The modes this browser has a session of (asked without a 401 for the ones it has none of). */
async function signedInModes(): Promise<Mode[]> {
  const res = await fetch(new URL('/dashboard/session', window.location.href), { credentials: 'same-origin' });
  const body = (await res.json().catch(() => ({}))) as { modes?: string[] };
  return (body.modes ?? []).filter(isMode);
}

/** The signed-in merchant of `mode`'s session; throws UNAUTHENTICATED when there is none. */
const viewerIn = async (mode: Mode): Promise<Viewer> => viewerOf(await request(DashboardViewerDocument, {}, sessionOf(mode)));

/** The first sign-in: a token of either mode; its mode comes from the API (viewer.mode). */
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
  const my = generation;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    input.value = '';
    signInWith(value)
      .then(async (mode) => {
        const viewer = await viewerIn(mode);
        if (my !== generation) return;
        buildFrame();
        openMode(mode, viewer);
        frame!.switches[mode].focus();
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

/** Asks for the token of `mode` (the switch went to a mode whose token this tab does not know); refuses the other mode's. */
function modeSignIn(mode: Mode, problem = ''): void {
  const id = uid(`token-${mode}`);
  const headingId = uid('sign-in-heading');
  const input = h('input', { id, type: 'password', name: 'token', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${id}-hint ${id}-error` });
  const error = h('p', { class: 'field-error', id: `${id}-error`, role: 'alert' }, problem);
  if (problem) input.setAttribute('aria-invalid', 'true');
  const form = h(
    'form',
    { class: 'sign-in mode-sign-in', 'aria-labelledby': headingId, 'data-sign-in': mode },
    h('h2', { id: headingId }, t(mode === 'test' ? 'signInTest' : 'signInLive')),
    h('div', { class: 'field' }, h('label', { for: id }, t(mode === 'test' ? 'tokenTest' : 'tokenLive')), input, h('p', { class: 'hint', id: `${id}-hint` }, t(mode === 'test' ? 'tokenHintTest' : 'tokenHintLive')), error),
    h('button', { type: 'submit', class: 'primary' }, t('signIn')),
  );
  const my = generation;
  const refuse = (message: string) => {
    input.setAttribute('aria-invalid', 'true');
    error.textContent = message;
    input.focus();
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = input.value.trim();
    input.value = '';
    signInWith(value)
      .then(async (signedIn) => {
        if (my !== generation) return;
        // A token of the other mode would show that mode's data under this mode's name: refused, and said why.
        if (signedIn !== mode) return refuse(t(mode === 'test' ? 'tokenNotTest' : 'tokenNotLive'));
        const viewer = await viewerIn(mode);
        if (my !== generation) return;
        openMode(mode, viewer);
        frame!.switches[mode].focus();
      })
      .catch(() => my === generation && refuse(t('tokenInvalid')));
  });
  replaceChildren(frame!.content, form);
  modeNotice.textContent = t('modeNeedsToken', { mode: modeName(mode) });
}

/** Ends the shown mode's view: its subscriptions, polls and timers stop, its answers still on the way are dropped. */
function endView(): void {
  generation++;
  view?.end();
  view = null;
  closeLive();
  problems.textContent = liveNotice.textContent = '';
}

function signOut(): void {
  endView();
  // Both modes' sessions end on the server, and their cookies go.
  void fetch(new URL('/dashboard/session', window.location.href), { method: 'DELETE', credentials: 'same-origin' }).catch(() => undefined);
  sessionStorage.removeItem(MODE_KEY);
  frame = null;
  delete root.dataset['mode'];
  document.title = t('dashboardTitle');
  signInView();
}

/** Marks the page for `mode`: the switch, the test banner (test mode only), the colour band and the title. */
function markMode(mode: Mode): void {
  const f = frame!;
  f.switches[mode].checked = true;
  root.dataset['mode'] = mode;
  f.banner.hidden = mode !== 'test';
  document.title = `${modeName(mode)} · ${t('dashboardTitle')}`;
  sessionStorage.setItem(MODE_KEY, mode);
}

/** Shows `mode`: its data with its known token (checked first), else the form asking for that token. */
async function showMode(mode: Mode, problem = ''): Promise<void> {
  endView();
  const my = generation;
  markMode(mode);
  frame!.signedInAs.textContent = '';
  // Nothing of the old mode stays on the page while the new one loads.
  replaceChildren(frame!.content);
  let viewer: Viewer;
  try {
    const modes = await signedInModes();
    if (my !== generation) return;
    if (!modes.includes(mode)) return modeSignIn(mode, problem);
    viewer = await viewerIn(mode);
  } catch (e) {
    if (my !== generation) return;
    // No session of this mode (never signed in, expired, or its token rotated or revoked): ask for its token.
    if (e instanceof GraphqlError && e.code === 'UNAUTHENTICATED') return modeSignIn(mode, problem);
    problems.textContent = t('errorGeneric');
    return;
  }
  if (my !== generation) return;
  openMode(mode, viewer);
}

/** The data of `mode`, read with its session. */
function openMode(mode: Mode, viewer: Viewer): void {
  endView();
  markMode(mode);
  const v = (view = new ModeView(mode, viewer));
  frame!.signedInAs.textContent = t('signedInAs', { name: viewer.name });
  replaceChildren(frame!.content, invoicesSection(v), balancesSection(v), webhooksSection(v), emailsSection(v), withdrawalsSection(v), v.may('SETTINGS_READ') ? auditSection(v) : null);
  modeNotice.textContent = t('modeShown', { mode: modeName(mode) });
}

/** The header (title, who is signed in, the mode switch, sign-out), the test banner and the place for a mode's content. */
function buildFrame(): void {
  const switches = {} as Record<Mode, HTMLInputElement>;
  const options = MODES.map((mode) => {
    const id = uid(`mode-${mode}`);
    const input = h('input', { type: 'radio', name: 'mode', value: mode, id, class: 'visually-hidden' });
    // Arrow keys move the choice within the group (native radio buttons), Space picks the focused one.
    input.addEventListener('change', () => input.checked && void showMode(mode));
    switches[mode] = input;
    return [input, h('label', { for: id, 'data-mode': mode }, modeName(mode))];
  });
  const signedInAs = h('p', { class: 'muted' });
  const banner = h('p', { class: 'test-banner', 'data-test-banner': '' }, t('testModeBanner'));
  const content = h('div', { class: 'mode-content' });
  frame = { signedInAs, switches, banner, content };
  replaceChildren(
    root,
    h(
      'header',
      { class: 'top' },
      h('h1', {}, t('dashboardTitle')),
      signedInAs,
      h('fieldset', { class: 'mode-switch' }, h('legend', { class: 'visually-hidden' }, t('mode')), options),
      h('button', { type: 'button', onclick: signOut }, t('signOut')),
    ),
    banner,
    modeNotice,
    problems,
    liveNotice,
    content,
  );
}

const table = (caption: string, headings: string[], rows: Node[]) =>
  h('table', {}, h('caption', {}, caption), h('thead', {}, h('tr', {}, headings.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, rows));

const section = (id: string, title: TextKey, ...content: (Node | null)[]) =>
  h('section', { id, 'aria-labelledby': `${id}-heading` }, h('h2', { id: `${id}-heading` }, t(title)), ...content);

// ---- Invoices: a page, then live changes through invoiceEvents.

function invoicesSection(v: ModeView) {
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
    v.refreshBalances();
  });
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

async function showInvoice(v: ModeView, id: string, into: HTMLElement): Promise<void> {
  const { invoice, emailDeliveries } = await v.gql(DashboardInvoiceDetailDocument, { id });
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
                    void v.gql(DashboardRedeliverDocument, { input: { eventId: d.eventId } })
                      .then(async ({ redeliverWebhook: r }) => {
                        if (r.__typename !== 'RedeliverWebhookSuccess') return void (note.textContent = r.message);
                        // The new delivery shows in the list.
                        await showInvoice(v, id, into);
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

// ---- Balances, webhooks, withdrawals, auto-withdrawals.

function balancesSection(v: ModeView) {
  const body = h('div', {});
  let timer: number | undefined;
  // Merged within half a second.
  v.refreshBalances = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(load, 500);
  };
  v.stops.push(() => window.clearTimeout(timer));
  const load = () =>
    void v.gql(DashboardBalancesDocument, {})
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
  v.reloads.push(load);
  return section('balances', 'balances', body);
}

function webhooksSection(v: ModeView) {
  const id = uid('webhook');
  const input = h('input', { id, type: 'url', name: 'url', maxlength: 2048, 'aria-describedby': `${id}-hint ${id}-error` });
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  const note = h('p', { role: 'status', class: 'muted' });
  void v.gql(DashboardWebhookSettingsDocument, {})
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
          void v.gql(DashboardTestWebhookDocument, {})
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
    void v.gql(DashboardSetWebhookUrlDocument, { input: { url: input.value.trim() || null } })
      .then(({ setWebhookUrl: r }) => {
        if (r.__typename === 'SetWebhookUrlSuccess') return void (note.textContent = t('saved'));
        input.setAttribute('aria-invalid', 'true');
        error.textContent = ('details' in r && r.details[0]?.message) || r.message;
      })
      .catch(report);
  });
  return section('webhooks', 'webhooks', form);
}

type Settings = DashboardNotificationSettingsFragment;
const CLIENT_MAILS: [Exclude<keyof Settings['client'], '__typename'>, TextKey][] = [
  ['pending', 'mailPending'],
  ['done', 'mailDone'],
  ['wrong', 'mailWrong'],
  ['refunded', 'mailRefunded'],
  ['closed', 'mailClosed'],
];
const MERCHANT_MAILS: [Exclude<keyof Settings['merchant'], 'emails' | '__typename'>, TextKey][] = [
  ['done', 'mailMerchantDone'],
  ['wrong', 'mailMerchantWrong'],
  ['withdrawalDone', 'mailWithdrawalDone'],
  ['withdrawalRejected', 'mailWithdrawalRejected'],
  ['depositFrozen', 'mailDepositFrozen'],
  ['webhookFailing', 'mailWebhookFailing'],
];

/** Which e-mails go out (docs/emails.md): one checkbox per kind, the merchant's addresses. */
function emailsSection(v: ModeView) {
  const id = uid('mail');
  const box = (name: string, label: TextKey) => {
    const input = h('input', { type: 'checkbox', id: `${id}-${name}`, name });
    return { input, field: h('div', { class: 'check' }, input, ' ', h('label', { for: `${id}-${name}` }, t(label))) };
  };
  const client = CLIENT_MAILS.map(([key, label]) => ({ key, ...box(`client-${key}`, label) }));
  const merchant = MERCHANT_MAILS.map(([key, label]) => ({ key, ...box(`merchant-${key}`, label) }));
  const addresses = h('input', { id: `${id}-addresses`, type: 'text', name: 'addresses', maxlength: 2000, autocomplete: 'off', 'aria-describedby': `${id}-error` });
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  const note = h('p', { role: 'status', class: 'muted' });
  const fill = (s: Settings) => {
    for (const c of client) c.input.checked = s.client[c.key];
    for (const m of merchant) m.input.checked = s.merchant[m.key];
    addresses.value = s.merchant.emails.join(', ');
  };
  void v.gql(DashboardNotificationSettingsDocument, {})
    .then(({ notificationSettings }) => fill(notificationSettings))
    .catch(report);
  const form = h(
    'form',
    {},
    h('fieldset', {}, h('legend', {}, t('clientEmails')), client.map((c) => c.field)),
    h(
      'fieldset',
      {},
      h('legend', {}, t('merchantEmails')),
      h('div', { class: 'field' }, h('label', { for: `${id}-addresses` }, t('merchantAddresses')), addresses, error),
      merchant.map((m) => m.field),
    ),
    h('button', { type: 'submit' }, t('save')),
    note,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    addresses.removeAttribute('aria-invalid');
    error.textContent = '';
    note.textContent = '';
    const input = {
      client: Object.fromEntries(client.map((c) => [c.key, c.input.checked])),
      merchant: {
        emails: addresses.value.split(',').map((a) => a.trim()).filter(Boolean),
        ...Object.fromEntries(merchant.map((m) => [m.key, m.input.checked])),
      },
    };
    void v.gql(DashboardSetNotificationSettingsDocument, { input })
      .then(({ setNotificationSettings: r }) => {
        if (r.__typename === 'SetNotificationSettingsSuccess') {
          fill(r.notificationSettings);
          return void (note.textContent = t('saved'));
        }
        addresses.setAttribute('aria-invalid', 'true');
        error.textContent = ('details' in r && r.details[0]?.message) || r.message;
      })
      .catch(report);
  });
  return section('emails', 'emails', form);
}

function withdrawalsSection(v: ModeView) {
  const body = h('tbody', {});
  const rows = new Map<string, Withdrawal>();
  const render = () =>
    replaceChildren(
      body,
      [...rows.values()]
        .filter((w) => w.mode === apiMode(v.mode))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .map((w) => h('tr', { 'data-withdrawal': w.uid, 'data-mode': modeOf(w.mode) }, h('td', {}, time(w.createdAt)), h('td', {}, w.status.toLowerCase()), h('td', { class: 'num' }, money(w.amount, w.asset)), h('td', {}, h('code', {}, w.to)), h('td', {}, w.txHash ? h('code', {}, w.txHash) : ''))),
    );
  const load = () =>
    void v.gql(DashboardWithdrawalsDocument, { first: PAGE })
      .then(({ withdrawals }) => {
        for (const w of withdrawals.nodes) rows.set(w.uid, w);
        render();
      })
      .catch(report);
  load();
  v.reloads.push(load);
  v.live(DashboardWithdrawalEventsDocument, { after: null }, ({ withdrawalEvents: w }) => {
    rows.set(w.uid, w);
    render();
    v.refreshBalances();
  });
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
      // Setting a rule moves money: only a session with payouts:write gets the form.
      v.may('PAYOUTS_WRITE') ? ruleForm(v, all, showRules, selected) : h('p', { class: 'muted', 'data-needs-scope': 'payouts:write' }, t('needsPayoutsWrite')),
    );
  };
  void v.gql(DashboardAutoWithdrawalsDocument, {})
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

/** The latest audit entries (docs/security.md): who changed what, from where; for sessions with settings:read. */
function auditSection(v: ModeView) {
  const body = h('div', {});
  const load = () =>
    void v.gql(DashboardAuditLogDocument, { first: 20 })
      .then(({ auditLog }) =>
        replaceChildren(
          body,
          auditLog.nodes.length
            ? table(
                t('auditLog'),
                [t('created'), t('auditAction'), t('auditBy'), t('auditFrom')],
                auditLog.nodes.map((e) =>
                  h('tr', { 'data-audit': e.action.toLowerCase() }, h('td', {}, time(e.createdAt)), h('td', {}, h('code', {}, e.action.toLowerCase())), h('td', {}, e.apiKeyName ?? e.credential.toLowerCase()), h('td', {}, e.clientAddress ?? '')),
                ),
              )
            : h('p', {}, t('none')),
        ),
      )
      .catch(report);
  load();
  v.reloads.push(load);
  return section('audit', 'auditLog', body);
}

/** Sets one currency's auto-withdrawal rule (the API takes the rules it is given and keeps the others). */
function ruleForm(v: ModeView, current: AutoWithdrawalRule[], show: (rules: AutoWithdrawalRule[], selected?: string) => void, selected?: string) {
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
    v.gql(DashboardUpdateAutoWithdrawalsDocument, { input: { rules: [rule] } })
      .then(({ updateAutoWithdrawals: r }) => {
        if (r.__typename === 'UpdateAutoWithdrawalsSuccess') return show(r.autoWithdrawals, rule.asset);
        note.textContent = ('details' in r && r.details.map((d) => `${d.path}: ${d.message}`).join('; ')) || r.message;
      })
      // A value the API cannot even read (a threshold that is no number): its message.
      .catch((e: unknown) => (note.textContent = e instanceof Error ? e.message : String(e)));
  });
  return form;
}

async function start(): Promise<void> {
  // The mode shown last in this tab, else one that has a session (the cookies outlive a reload, the token never
  // reached the page's storage).
  const last = sessionStorage.getItem(MODE_KEY);
  const modes = await signedInModes().catch(() => [] as Mode[]);
  const mode = isMode(last) && modes.includes(last) ? last : modes[0];
  if (!mode) return signInView();
  buildFrame();
  await showMode(mode);
}

void start();
