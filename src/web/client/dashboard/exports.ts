// Exports (docs/exports.md): pick a range of UTC days, then download the ledger or the invoices CSV through a
// short-lived link the API makes (the browser downloads it; the session cookie never goes into a URL).
import { DashboardCreateExportLinkDocument, type ExportKind } from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { failure, field, needsScope, report, section, statusNote, t, type ModeView } from './context.ts';

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function exportsSection(v: ModeView) {
  if (!v.may('EXPORTS_READ')) return section('exports', 'exports', needsScope('exports:read'));
  const from = h('input', { type: 'date', name: 'from', required: true, value: isoDay(Date.now() - 29 * DAY_MS) });
  const to = h('input', { type: 'date', name: 'to', required: true, value: isoDay(Date.now()) });
  const fromField = field(t('exportFrom'), from);
  const toField = field(t('exportTo'), to, t('exportRangeHint'));
  const links = h('div', { class: 'links' });
  const note = statusNote();
  const download = (kind: ExportKind) => {
    fromField.clear();
    toField.clear();
    note.textContent = '';
    if (!from.value || !to.value) return (from.value ? toField : fromField).error(t('required'));
    // The last day is included: the range ends at the next day's midnight (UTC).
    const input = { kind, from: `${from.value}T00:00:00.000Z`, to: new Date(Date.parse(`${to.value}T00:00:00.000Z`) + DAY_MS).toISOString() };
    v.gql(DashboardCreateExportLinkDocument, { input })
      .then(({ createExportLink: r }) => {
        if (r.__typename !== 'CreateExportLinkSuccess') return toField.error(failure(r as never));
        // The link's path on this server (which serves the dashboard and the download alike): a same-origin link is
        // one the browser downloads under its file name, whatever host PUBLIC_BASE_URL names.
        const made = new URL(r.link.url);
        const link = h('a', { href: new URL(`${made.pathname}${made.search}`, window.location.href).href, download: r.link.fileName, 'data-export': r.link.kind }, t('downloadFile', { file: r.link.fileName }));
        replaceChildren(links, h('p', {}, link));
        link.click();
        note.textContent = t('exportReady', { file: r.link.fileName });
      })
      .catch(report);
  };
  const form = h(
    'form',
    { class: 'task' },
    h('div', { class: 'range' }, fromField.wrapper, toField.wrapper),
    h('button', { type: 'button', onclick: () => download('LEDGER') }, t('downloadLedger')),
    ' ',
    h('button', { type: 'button', onclick: () => download('INVOICES') }, t('downloadInvoices')),
    note,
  );
  form.addEventListener('submit', (event) => event.preventDefault());
  return section('exports', 'exports', h('p', {}, t('exportsMean')), form, links);
}
