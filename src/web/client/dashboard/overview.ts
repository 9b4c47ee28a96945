// The overview: money received per day over the last 30 days per invoice currency (a bar chart by Chart.js, bundled
// by esbuild like the rest of the page: docs/dashboard.md), the same numbers as a table for screen readers and anyone
// who would rather read, and the invoices of the period by status. The figures come from the API's SQL aggregates
// (invoiceOverview); the page only draws them.
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { DashboardOverviewDocument, type DashboardOverviewQuery } from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { statusName } from '../shared/i18n.ts';
import { language, report, section, t, table, type ModeView } from './context.ts';
import { INVOICE_CURRENCIES } from './invoices.ts';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const DAYS = 30;
const DAY_MS = 86_400_000;
/**
 * A colour per invoice currency, the same on every day and every visit (USD blue, EUR rust, …), each with a contrast of
 * 3:1 or more against white (WCAG 1.4.11 for graphics); the legend names them.
 */
const COLOURS = ['#0b5cad', '#a8431a', '#1f7a3a', '#6b3fa0', '#8a6d00', '#b0136b', '#00708a', '#5c5c5c', '#7a3e00', '#2c2f7a', '#14532d', '#a40e26'];
const colourOf = (currency: string) => COLOURS[Math.max(0, INVOICE_CURRENCIES.indexOf(currency as (typeof INVOICE_CURRENCIES)[number])) % COLOURS.length];

type Overview = DashboardOverviewQuery['invoiceOverview'];

/** Every day of the window, oldest first (YYYY-MM-DD, UTC). */
const daysOf = (o: Overview) => Array.from({ length: o.days }, (_, i) => new Date(Date.parse(o.from) + i * DAY_MS).toISOString().slice(0, 10));

export function overviewSection(v: ModeView) {
  const canvas = h('canvas', { role: 'img', 'data-chart': 'received' });
  const figure = h('figure', { class: 'chart' }, h('div', { class: 'chart-box' }, canvas), h('figcaption', {}, t('receivedCaption', { days: DAYS })));
  const numbers = h('div', {});
  const statuses = h('div', {});
  let chart: Chart<'bar', number[], string> | null = null;
  v.stops.push(() => chart?.destroy());
  const draw = (o: Overview) => {
    const days = daysOf(o);
    const currencies = [...new Set(o.received.map((r) => r.currency))].sort();
    const datasets = currencies.map((currency) => {
      const byDay = new Map(o.received.filter((r) => r.currency === currency).map((r) => [r.day, r.amount]));
      // Drawing only: bar heights are numbers; every figure shown as text is the API's exact decimal string.
      return { label: currency, data: days.map((d) => Number(byDay.get(d) ?? 0)), backgroundColor: colourOf(currency) };
    });
    const totals = currencies.map((c) => `${o.received.filter((r) => r.currency === c).reduce((n, r) => n + r.invoices, 0)} × ${c}`);
    canvas.setAttribute('aria-label', currencies.length ? t('chartLabel', { days: o.days, currencies: currencies.join(', '), invoices: totals.join(', ') }) : t('chartEmpty', { days: o.days }));
    canvas.dataset['currencies'] = currencies.join(',');
    const labels = days.map((d) => d.slice(5));
    if (chart) {
      chart.data.labels = labels;
      chart.data.datasets = datasets;
      chart.update();
      return;
    }
    chart = new Chart(canvas, {
      type: 'bar',
      data: { labels, datasets },
      options: {
        // No motion: the numbers are there at once (and for people who asked their system for less motion).
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        locale: language,
        scales: { x: { stacked: false, ticks: { maxRotation: 0, autoSkip: true } }, y: { beginAtZero: true } },
        plugins: { legend: { position: 'bottom' } },
      },
    });
  };
  const show = (o: Overview) => {
    draw(o);
    replaceChildren(
      numbers,
      o.received.length
        ? table(
            t('receivedTable', { days: o.days }),
            [t('day'), t('currencyColumn'), t('amount'), t('invoices')],
            o.received.map((r) => h('tr', { 'data-received': `${r.day} ${r.currency}` }, h('td', {}, r.day), h('td', {}, r.currency), h('td', { class: 'num' }, r.amount), h('td', { class: 'num' }, String(r.invoices)))),
            { class: 'received' },
          )
        : h('p', {}, t('nothingReceived', { days: o.days })),
    );
    replaceChildren(
      statuses,
      table(
        t('invoicesByStatus', { days: o.days }),
        [t('status'), t('invoices')],
        o.invoicesByStatus.map((s) => h('tr', { 'data-status-count': s.status }, h('td', {}, statusName(language, s.status)), h('td', { class: 'num' }, String(s.count)))),
      ),
    );
  };
  const load = () =>
    void v.gql(DashboardOverviewDocument, { days: DAYS })
      .then(({ invoiceOverview }) => show(invoiceOverview))
      .catch(report);
  load();
  v.moneyListeners.push(v.merged(load));
  v.reloads.push(load);
  return section('overview', 'overview', h('p', { class: 'muted' }, t('utcNote')), figure, h('details', { class: 'numbers', open: true }, h('summary', {}, t('showNumbers')), numbers), statuses);
}
