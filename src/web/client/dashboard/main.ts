// The merchant dashboard: sign in with a public token, then one view at a time, chosen in the navigation (links to
// #overview, #invoices, …; docs/dashboard.md): the overview (chart, numbers, balances), invoices (create, the live list,
// detail, accept and refund), payment links (with their QR codes), payouts (withdraw with the quote, withdrawals live, auto-withdrawals, payout policy),
// deposits (static addresses), webhooks (URL, test, delivery log), exports (CSV of a range), API keys and settings
// (the store, e-mails, audit log). Every view's data loads when the mode opens, so lists stay live while another view shows.
// Only the public GraphQL API.
// Modes: a merchant has a test and a live side, each with its own token that sees only its mode's data. Signing in
// exchanges the token for a short-lived session of its mode held in an httpOnly cookie (docs/security.md): the page
// never keeps the token, and sends `Authorization: Session <mode>` to use that mode's cookie. It shows one mode at a
// time; the switch in the header ends everything the old mode runs (subscriptions, polls, timers, pending answers)
// before the other mode's data loads. Forms that move money show only to a session with payouts:write.
import { DashboardViewerDocument } from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { closeLive, GraphqlError, request } from '../shared/graphql.ts';
import { isMode, liveNotice, MODES, ModeView, modeName, problems, sessionOf, t, viewerOf, type Key, type Mode, type Viewer } from './context.ts';
import { deliveriesSection, webhooksSection } from './webhooks.ts';
import { depositsSection, staticAddressesSection } from './deposits.ts';
import { exportsSection } from './exports.ts';
import { createInvoiceSection, invoicesSection } from './invoices.ts';
import { apiKeysSection } from './keys.ts';
import { overviewSection } from './overview.ts';
import { balancesSection, payoutPolicySection, withdrawalsSection, withdrawSection } from './payouts.ts';
import { auditSection, emailsSection, storeSection } from './settings.ts';
import { paymentLinksSection } from './links.ts';

const MODE_KEY = 'payrail.mode';
const root = document.getElementById('app')!;

interface ViewDefinition {
  id: string;
  title: Key;
  build(v: ModeView): (Node | null)[];
}

/** The views in the order of the navigation; a view shows what the session's scopes let it read. */
const VIEWS: ViewDefinition[] = [
  { id: 'overview', title: 'overview', build: (v) => [v.may('INVOICES_READ') ? overviewSection(v) : null, v.may('PAYOUTS_READ') ? balancesSection(v) : null] },
  { id: 'invoices', title: 'invoices', build: (v) => [createInvoiceSection(v), v.may('INVOICES_READ') ? invoicesSection(v) : null] },
  { id: 'links', title: 'paymentLinks', build: (v) => [paymentLinksSection(v)] },
  { id: 'payouts', title: 'payouts', build: (v) => (v.may('PAYOUTS_READ') ? [withdrawSection(v), withdrawalsSection(v), payoutPolicySection(v)] : []) },
  { id: 'deposits', title: 'deposits', build: (v) => [staticAddressesSection(v), depositsSection(v)] },
  { id: 'webhooks', title: 'webhooks', build: (v) => [webhooksSection(v), deliveriesSection(v)] },
  { id: 'exports', title: 'exports', build: (v) => [exportsSection(v)] },
  { id: 'keys', title: 'apiKeys', build: (v) => [apiKeysSection(v)] },
  { id: 'settings', title: 'settings', build: (v) => [storeSection(v), emailsSection(v), v.may('SETTINGS_READ') ? auditSection(v) : null] },
];

/** The view the address names (#invoices), else the overview. */
const viewInAddress = () => VIEWS.find((x) => `#${x.id}` === window.location.hash)?.id ?? 'overview';

/** The open mode's views and navigation links, by view id. */
let views = new Map<string, { box: HTMLElement; link: HTMLElement }>();

/** Shows one view; after a choice in the navigation its first heading takes the focus (read out, and Tab goes on from there). */
function showView(id: string, focus: boolean): void {
  for (const [viewId, { box, link }] of views) {
    box.hidden = viewId !== id;
    if (viewId === id) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (focus) views.get(id)?.box.querySelector<HTMLElement>('h2')?.focus();
}

window.addEventListener('hashchange', () => views.size && showView(viewInAddress(), true));

/** Says which mode is shown after a switch (the switch keeps the focus, so the change is read out here). */
const modeNotice = h('p', { class: 'visually-hidden', role: 'status' });

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
  views = new Map();
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
  views = new Map(
    VIEWS.map((d) => [
      d.id,
      { box: h('div', { class: 'view', id: `view-${d.id}`, 'data-view': d.id }, d.build(v)), link: h('a', { href: `#${d.id}`, 'data-view-link': d.id }, t(d.title)) },
    ]),
  );
  const nav = h('nav', { class: 'views', 'aria-label': t('views') }, h('ul', {}, [...views.values()].map(({ link }) => h('li', {}, link))));
  replaceChildren(frame!.content, nav, [...views.values()].map(({ box }) => box));
  showView(viewInAddress(), false);
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
