// Static addresses (one per user and asset, for deposits without an invoice) and the deposits to them, live
// through depositEvents.
import {
  DashboardCreateStaticAddressDocument,
  DashboardDepositEventsDocument,
  DashboardDepositsDocument,
  DashboardStaticAddressesDocument,
  type DashboardDepositRowFragment,
  type DashboardStaticAddressRowFragment,
  type PaymentCurrency,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { currencyName } from '../shared/i18n.ts';
import { apiMode, failure, field, language, money, needsScope, PAGE, report, section, statusNote, t, table, time, type ModeView } from './context.ts';
import { PAYMENT_CURRENCIES } from './invoices.ts';

export function staticAddressesSection(v: ModeView) {
  if (!v.may('DEPOSITS_READ')) return section('static-addresses', 'staticAddresses', needsScope('deposits:read'));
  const list = h('div', {});
  const rows = new Map<string, DashboardStaticAddressRowFragment>();
  const render = () =>
    replaceChildren(
      list,
      rows.size
        ? table(
            t('staticAddresses'),
            [t('user'), t('asset'), t('address'), t('tag'), t('created')],
            [...rows.values()]
              .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
              .map((a) => h('tr', { 'data-static-address': a.addressId }, h('td', {}, a.internalUserId), h('td', {}, a.asset), h('td', {}, h('code', {}, a.address)), h('td', {}, a.tag ? h('code', {}, a.tag) : ''), h('td', {}, time(a.createdAt)))),
          )
        : h('p', {}, `${t('staticAddresses')}: ${t('none')}`),
    );
  const load = () =>
    void v.gql(DashboardStaticAddressesDocument, { first: PAGE })
      .then(({ staticAddresses }) => {
        for (const a of staticAddresses.nodes) rows.set(a.addressId, a);
        render();
      })
      .catch(report);
  load();
  v.reloads.push(load);
  let form: HTMLElement | null = null;
  if (v.may('DEPOSITS_WRITE')) {
    const user = h('input', { name: 'internalUserId', required: true, maxlength: 255, autocomplete: 'off' });
    const asset = h('select', { name: 'asset' }, PAYMENT_CURRENCIES.map((c) => h('option', { value: c }, currencyName(language, c))));
    const email = h('input', { name: 'email', type: 'email', maxlength: 254, autocomplete: 'off' });
    const userField = field(t('user'), user, t('userHint'));
    const note = statusNote();
    form = h('form', { class: 'task' }, h('h3', {}, t('issueStaticAddress')), userField.wrapper, field(t('asset'), asset).wrapper, field(t('emailOptional'), email).wrapper, h('button', { type: 'submit' }, t('issueAddress')), note);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      userField.clear();
      void v.gql(DashboardCreateStaticAddressDocument, { input: { internalUserId: user.value.trim(), asset: asset.value as PaymentCurrency, email: email.value.trim() || null } })
        .then(({ createStaticAddress: r }) => {
          if (r.__typename !== 'CreateStaticAddressSuccess') return userField.error(failure(r as never));
          rows.set(r.staticAddress.addressId, r.staticAddress);
          render();
          note.textContent = t('addressIssued', { address: r.staticAddress.address });
        })
        .catch(report);
    });
  }
  return section('static-addresses', 'staticAddresses', h('p', {}, t('staticAddressesMean')), list, form);
}

export function depositsSection(v: ModeView) {
  if (!v.may('DEPOSITS_READ')) return null;
  const body = h('tbody', {});
  const rows = new Map<string, DashboardDepositRowFragment>();
  const render = () =>
    replaceChildren(
      body,
      [...rows.values()]
        .filter((d) => d.mode === apiMode(v.mode))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .map((d) =>
          h(
            'tr',
            { 'data-deposit': d.id, 'data-status': d.status },
            h('td', {}, time(d.createdAt)),
            h('td', {}, d.staticAddress.internalUserId),
            h('td', { class: 'num' }, money(d.amount, d.asset)),
            h('td', {}, d.status.toLowerCase()),
            h('td', { class: 'num' }, String(d.confirmations)),
            h('td', {}, h('code', {}, d.hash)),
          ),
        ),
    );
  const load = () =>
    void v.gql(DashboardDepositsDocument, { first: PAGE })
      .then(({ deposits }) => {
        for (const d of deposits.nodes) rows.set(d.id, d);
        render();
      })
      .catch(report);
  load();
  v.reloads.push(load);
  v.live(DashboardDepositEventsDocument, { after: null }, ({ depositEvents: d }) => {
    rows.set(d.id, d);
    render();
    v.moneyMoved();
  });
  return section(
    'deposits',
    'deposits',
    h('div', { class: 'scroll' }, table(t('deposits'), [t('created'), t('user'), t('amount'), t('status'), t('confirmationsShort'), t('hash')], [body], { class: 'deposits' })),
  );
}
