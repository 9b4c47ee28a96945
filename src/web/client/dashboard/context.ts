// What every view of the dashboard shares: the mode's view (its requests, subscriptions, timers, scopes), the texts,
// formatting and the small builders of sections, tables and fields.
import type { DashboardViewerQuery, Mode as ApiMode, TypedDocumentString } from '../../../../generated/gql-web/graphql.ts';
import { h, uid } from '../shared/dom.ts';
import { live, request } from '../shared/graphql.ts';
import { isLanguage, text, unitOf, type TextKey } from '../shared/i18n.ts';
import { dashboardText, type DashboardTextKey } from './texts.ts';

export type Mode = 'test' | 'live';
export const MODES: Mode[] = ['test', 'live'];
export const PAGE = 50;
const POLL_MS = 10_000;

/** The Authorization value that makes the API use this mode's session cookie. */
export const sessionOf = (mode: Mode) => `Session ${mode}`;
export const isMode = (value: string | null): value is Mode => value === 'test' || value === 'live';
export const modeOf = (mode: ApiMode): Mode => (mode === 'LIVE' ? 'live' : 'test');
export const apiMode = (mode: Mode): ApiMode => (mode === 'live' ? 'LIVE' : 'TEST');

export type Viewer = DashboardViewerQuery['viewer'] & { scopes: DashboardViewerQuery['viewerScopes'] };
export const viewerOf = (answer: DashboardViewerQuery): Viewer => ({ ...answer.viewer, scopes: answer.viewerScopes });

export const language = isLanguage(document.documentElement.lang) ? document.documentElement.lang : 'en';
export type Key = TextKey | DashboardTextKey;
export const t = (key: Key, values?: Record<string, string | number>) => dashboardText(language, key as DashboardTextKey, values) ?? text(language, key as TextKey, values);
export const time = (iso: string) => new Date(iso).toLocaleString(language);
export const money = (amount: string, currency: string) => `${amount} ${unitOf(currency)}`;
export const modeName = (mode: Mode) => t(mode === 'test' ? 'modeTest' : 'modeLive');

/** An answer that arrived after its mode was left: dropped, never shown. */
export class Superseded extends Error {}

/** Where failures of the dashboard's own requests are read out. */
export const problems = h('p', { class: 'error', role: 'alert' });
export const report = (e: unknown) => {
  if (e instanceof Superseded) return;
  problems.textContent = e instanceof Error ? e.message : t('errorGeneric');
};
export const liveNotice = h('p', { class: 'muted', role: 'status' });

/**
 * What one mode's view runs, with that mode's token: requests, live subscriptions, the polling fallback and timers.
 * end() stops all of it; an answer that comes after is dropped (Superseded), so nothing of one mode shows in the other.
 */
export class ModeView {
  /** Called when the view ends: subscriptions and timers. */
  readonly stops: (() => void)[] = [];
  /** Called every few seconds when no live connection gets through: the lists read themselves again. */
  readonly reloads: (() => void)[] = [];
  /** Called when money moved (an invoice or withdrawal changed): balances and the overview read again. */
  readonly moneyListeners: (() => void)[] = [];
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

  moneyMoved(): void {
    for (const listener of this.moneyListeners) listener();
  }

  /** `load` after the changes of the next half second (a burst of events reads once). */
  merged(load: () => void): () => void {
    let timer: number | undefined;
    this.stops.push(() => window.clearTimeout(timer));
    return () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(load, 500);
    };
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
    this.moneyListeners.length = 0;
  }
}

export const table = (caption: string, headings: string[], rows: Node[], attributes: Record<string, string> = {}) =>
  h('table', attributes, h('caption', {}, caption), h('thead', {}, h('tr', {}, headings.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, rows));

export const section = (id: string, title: Key, ...content: (Node | null)[]) =>
  h('section', { id, 'aria-labelledby': `${id}-heading` }, h('h2', { id: `${id}-heading`, tabindex: -1 }, t(title)), ...content);

/** A labelled control with its hint and its error, wired for screen readers. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement, hint?: string) {
  const id = control.id || uid('field');
  control.id = id;
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  control.setAttribute('aria-describedby', `${hint ? `${id}-hint ` : ''}${id}-error`);
  const wrapper = h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('p', { class: 'hint', id: `${id}-hint` }, hint) : null, error);
  return {
    wrapper,
    error: (message: string) => {
      control.setAttribute('aria-invalid', 'true');
      error.textContent = message;
    },
    clear: () => {
      control.removeAttribute('aria-invalid');
      error.textContent = '';
    },
  };
}

/** A checkbox with its label after it. */
export function checkbox(label: string, checked = false) {
  const input = h('input', { type: 'checkbox', id: uid('check'), checked });
  return { input, wrapper: h('div', { class: 'check' }, input, ' ', h('label', { for: input.id }, label)) };
}

/** The message of a typed error result: the first detail with its field, else the message. */
export const failure = (r: { message: string; details?: { path: string; message: string }[] }) =>
  r.details?.length ? r.details.map((d) => `${d.path}: ${d.message}`).join('; ') : r.message;

/** Copies `value` and says so in `note`. */
export function copyButton(label: string, value: () => string, note: HTMLElement) {
  return h(
    'button',
    {
      type: 'button',
      onclick: () =>
        void navigator.clipboard.writeText(value()).then(
          () => (note.textContent = t('copied')),
          () => (note.textContent = t('copyFailed')),
        ),
    },
    label,
  );
}

/** A note read out when it changes. */
export const statusNote = () => h('p', { role: 'status', class: 'muted' });

/** The sentence shown instead of a form the session may not use. */
export const needsScope = (scope: string) => h('p', { class: 'muted', 'data-needs-scope': scope }, t('needsScope', { scope }));
