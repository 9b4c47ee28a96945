// Money out: balances; withdraw to one address or many, the quote of each (fee, total, minimum, what is available)
// shown before the confirmation; withdrawals live (withdrawalEvents), with the sandbox chain's confirmation in test
// mode; auto-withdrawal rules; the payout policy. Forms that move money show only to a session with payouts:write.
import {
  DashboardAutoWithdrawalsDocument,
  DashboardBalancesDocument,
  DashboardConfirmSandboxWithdrawalDocument,
  DashboardPayoutPolicyDocument,
  DashboardSetPayoutPolicyDocument,
  DashboardUpdateAutoWithdrawalsDocument,
  DashboardWithdrawalEventsDocument,
  DashboardWithdrawalQuoteDocument,
  DashboardWithdrawalsDocument,
  DashboardWithdrawDocument,
  type DashboardAutoWithdrawalRuleFragment,
  type DashboardPayoutPolicyFragment,
  type DashboardWithdrawalQuoteQuery,
  type DashboardWithdrawalRowFragment,
  type PaymentCurrency,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { currencyName, unitOf } from '../shared/i18n.ts';
import { apiMode, checkbox, failure, field, language, modeOf, money, needsScope, PAGE, report, section, statusNote, t, table, time, type ModeView } from './context.ts';
import { PAYMENT_CURRENCIES } from './invoices.ts';

type Withdrawal = DashboardWithdrawalRowFragment;
type AutoWithdrawalRule = DashboardAutoWithdrawalRuleFragment;
type Quote = DashboardWithdrawalQuoteQuery['withdrawalQuote'];
const MAX_PAYOUTS = 20;

export const assetName = (asset: string) => (unitOf(asset) === asset ? asset : `${unitOf(asset)} (${asset})`);

export function balancesSection(v: ModeView) {
  const body = h('div', {});
  const load = () =>
    void v.gql(DashboardBalancesDocument, {})
      .then(({ balances }) =>
        replaceChildren(
          body,
          balances.length
            ? table(
                t('balances'),
                [t('asset'), t('available'), t('held'), t('pending')],
                balances.map((b) => h('tr', { 'data-balance': b.asset }, h('td', {}, assetName(b.asset)), h('td', { class: 'num' }, b.available), h('td', { class: 'num' }, b.held), h('td', { class: 'num' }, b.pending))),
              )
            : h('p', {}, t('none')),
        ),
      )
      .catch(report);
  load();
  v.moneyListeners.push(v.merged(load));
  v.reloads.push(load);
  return section('balances', 'balances', body);
}

/** One payout line of the withdraw form. */
interface Payout {
  row: HTMLElement;
  asset: HTMLSelectElement;
  amount: HTMLInputElement;
  to: HTMLInputElement;
  tag: HTMLInputElement;
}

/** Withdraw: the lines, "Review" quotes each, then "Confirm" sends them all (one idempotency key per review). */
export function withdrawSection(v: ModeView) {
  if (!v.may('PAYOUTS_WRITE')) return section('withdraw', 'withdraw', needsScope('payouts:write'));
  const lines = h('div', { class: 'items' });
  const payouts: Payout[] = [];
  const addButton = h('button', { type: 'button' }, t('addPayout'));
  const review = h('div', { class: 'review', tabindex: -1 });
  const note = statusNote();
  const stale = () => replaceChildren(review);
  const renumber = () => {
    payouts.forEach((p, i) => {
      p.row.querySelector('legend')!.textContent = t('payoutNumber', { n: i + 1 });
      const remove = p.row.querySelector<HTMLButtonElement>('button.remove')!;
      remove.hidden = payouts.length === 1;
      remove.setAttribute('aria-label', t('removePayout', { n: i + 1 }));
    });
    addButton.hidden = payouts.length >= MAX_PAYOUTS;
  };
  const addPayout = () => {
    const asset = h('select', { name: 'asset' }, PAYMENT_CURRENCIES.map((c) => h('option', { value: c }, currencyName(language, c))));
    const amount = h('input', { name: 'amount', required: true, inputmode: 'decimal', maxlength: 40, autocomplete: 'off' });
    const to = h('input', { name: 'to', required: true, maxlength: 128, spellcheck: 'false', autocomplete: 'off' });
    const tag = h('input', { name: 'tag', maxlength: 120, autocomplete: 'off' });
    const row: HTMLElement = h('fieldset', { class: 'item' }, h('legend', {}), field(t('asset'), asset).wrapper, field(t('amount'), amount, t('amountNetHint')).wrapper, field(t('payoutTo'), to).wrapper, field(t('tagOptional'), tag).wrapper);
    const payout = { row, asset, amount, to, tag };
    row.append(
      h(
        'button',
        {
          type: 'button',
          class: 'remove',
          onclick: () => {
            payouts.splice(payouts.indexOf(payout), 1);
            row.remove();
            renumber();
            stale();
            addButton.focus();
          },
        },
        t('remove'),
      ),
    );
    // A change after the review makes its quote stale: the confirmation goes until reviewed again.
    row.addEventListener('input', stale);
    payouts.push(payout);
    lines.append(row);
    renumber();
    return payout;
  };
  addButton.addEventListener('click', () => {
    addPayout().amount.focus();
    stale();
  });
  addPayout();
  const form = h('form', { class: 'task', 'data-form': 'withdraw' }, lines, addButton, h('button', { type: 'submit', class: 'primary' }, t('reviewWithdrawal')), note);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    note.textContent = '';
    const items = payouts.map((p) => ({ asset: p.asset.value as PaymentCurrency, amount: p.amount.value.trim(), to: p.to.value.trim(), tag: p.tag.value.trim() || null }));
    Promise.all(items.map((item) => v.gql(DashboardWithdrawalQuoteDocument, { asset: item.asset, amount: item.amount }).then((r) => r.withdrawalQuote)))
      .then((quotes) => showReview(items, quotes))
      .catch((e: unknown) => (note.textContent = e instanceof Error ? e.message : String(e)));
  });
  const showReview = (items: { asset: PaymentCurrency; amount: string; to: string; tag: string | null }[], quotes: Quote[]) => {
    const idempotencyKey = crypto.randomUUID();
    const results = statusNote();
    const confirm = h('button', { type: 'button', class: 'primary' }, t('confirmWithdrawal'));
    confirm.addEventListener('click', () => {
      confirm.disabled = true;
      v.gql(DashboardWithdrawDocument, { input: { idempotencyKey, items } })
        .then(({ withdraw: r }) => {
          if (r.__typename !== 'WithdrawSuccess') return void (results.textContent = failure(r as never));
          replaceChildren(
            results,
            h(
              'ul',
              {},
              r.results.map((x, i) => h('li', { 'data-result': x.success ? 'ok' : 'refused' }, `${t('payoutNumber', { n: i + 1 })}: ${x.success ? t('withdrawalStarted', { uid: x.uid ?? '' }) : x.message}`)),
            ),
          );
          confirm.remove();
          v.moneyMoved();
        })
        .catch((e: unknown) => {
          confirm.disabled = false;
          results.textContent = e instanceof Error ? e.message : String(e);
        });
    });
    replaceChildren(
      review,
      table(
        t('quote'),
        ['#', t('asset'), t('amount'), t('fee'), t('total'), t('minimum'), t('available'), t('payoutTo')],
        quotes.map((q, i) =>
          h(
            'tr',
            { 'data-quote': String(i + 1), 'data-covered': String(q.covered) },
            h('td', {}, String(i + 1)),
            h('td', {}, assetName(q.asset)),
            h('td', { class: 'num' }, q.amount),
            h('td', { class: 'num' }, q.fee),
            h('td', { class: 'num' }, q.total),
            h('td', { class: 'num' }, q.minimum),
            h('td', { class: 'num' }, q.available),
            h('td', {}, h('code', {}, items[i]!.to)),
          ),
        ),
      ),
      quotes.map((q, i) => (q.covered ? null : h('p', { class: 'error' }, t('notCovered', { n: i + 1, total: money(q.total, q.asset), available: money(q.available, q.asset) })))),
      h('p', {}, t('confirmWithdrawalMeans')),
      confirm,
      results,
    );
    review.focus();
  };
  return section('withdraw', 'withdraw', form, review);
}

export function withdrawalsSection(v: ModeView) {
  const body = h('tbody', {});
  const rows = new Map<string, Withdrawal>();
  const note = statusNote();
  // The sandbox chain's confirmation: test mode only, once the sender put the withdrawal on the (simulated) chain.
  const confirmButton = (w: Withdrawal) =>
    v.mode === 'test' && w.status === 'PROCESSING' && w.txHash && v.may('PAYOUTS_WRITE')
      ? h(
          'button',
          {
            type: 'button',
            'aria-label': t('confirmOnTestChainOf', { uid: w.uid }),
            onclick: () =>
              void v.gql(DashboardConfirmSandboxWithdrawalDocument, { input: { uid: w.uid } })
                .then(({ confirmSandboxWithdrawal: r }) => {
                  if (r.__typename !== 'ConfirmSandboxWithdrawalSuccess') return void (note.textContent = r.message);
                  rows.set(r.withdrawal.uid, r.withdrawal);
                  render();
                })
                .catch(report),
          },
          t('confirmOnTestChain'),
        )
      : null;
  const render = () =>
    replaceChildren(
      body,
      [...rows.values()]
        .filter((w) => w.mode === apiMode(v.mode))
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .map((w) =>
          h(
            'tr',
            { 'data-withdrawal': w.uid, 'data-status': w.status, 'data-mode': modeOf(w.mode) },
            h('td', {}, time(w.createdAt)),
            h('td', {}, t(`withdrawal${w.status}` as 'withdrawalDONE')),
            h('td', { class: 'num' }, money(w.amount, w.asset)),
            h('td', {}, h('code', {}, w.to)),
            h('td', {}, w.txHash ? h('code', {}, w.txHash) : ''),
            h('td', {}, confirmButton(w)),
          ),
        ),
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
    v.moneyMoved();
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
    h(
      'div',
      { class: 'scroll' },
      h('table', {}, h('caption', { class: 'visually-hidden' }, t('withdrawals')), h('thead', {}, h('tr', {}, [t('created'), t('status'), t('amount'), t('to'), t('hash'), ''].map((x) => h('th', { scope: 'col' }, x)))), body),
    ),
    note,
    rules,
  );
}

/** Sets one currency's auto-withdrawal rule (the API takes the rules it is given and keeps the others). */
function ruleForm(v: ModeView, current: AutoWithdrawalRule[], show: (rules: AutoWithdrawalRule[], selected?: string) => void, selected?: string) {
  const ids = { asset: uid('rule-asset'), threshold: uid('rule-threshold'), address: uid('rule-address'), tag: uid('rule-tag'), enabled: uid('rule-enabled') };
  const asset = h('select', { id: ids.asset }, current.map((r) => h('option', { value: r.asset, selected: r.asset === selected }, r.asset)));
  const threshold = h('input', { id: ids.threshold, inputmode: 'decimal', required: true, maxlength: 40 });
  const address = h('input', { id: ids.address, required: true, maxlength: 128, spellcheck: 'false' });
  const tag = h('input', { id: ids.tag, maxlength: 120 });
  const enabled = h('input', { id: ids.enabled, type: 'checkbox', checked: true });
  const note = statusNote();
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

/** The payout policy (docs/withdrawals.md): allow-list only and the cool-down; a weakening waits before it holds. */
export function payoutPolicySection(v: ModeView) {
  const body = h('div', {});
  const show = (p: DashboardPayoutPolicyFragment) => {
    const current = h(
      'dl',
      { 'data-policy': '' },
      h('dt', {}, t('allowListOnly')),
      h('dd', {}, p.allowListOnly ? t('yes') : t('no')),
      h('dt', {}, t('cooldownHours')),
      h('dd', {}, String(p.cooldownHours)),
      p.pending ? [h('dt', {}, t('pendingPolicy')), h('dd', {}, t('pendingPolicyText', { allowList: p.pending.allowListOnly ? t('yes') : t('no'), hours: p.pending.cooldownHours, at: time(p.pending.effectiveAt) }))] : null,
    );
    if (!v.may('PAYOUTS_WRITE')) return replaceChildren(body, h('p', {}, t('payoutPolicyMeans')), current);
    const allowList = checkbox(t('allowListOnly'), p.allowListOnly);
    const hours = h('input', { type: 'number', min: 0, max: 720, step: 1, required: true, value: String(p.cooldownHours) });
    const hoursField = field(t('cooldownHours'), hours);
    const note = statusNote();
    const form = h('form', { class: 'task' }, allowList.wrapper, hoursField.wrapper, h('button', { type: 'submit' }, t('save')), note);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      hoursField.clear();
      void v.gql(DashboardSetPayoutPolicyDocument, { input: { allowListOnly: allowList.input.checked, cooldownHours: Number(hours.value) } })
        .then(({ setPayoutPolicy: r }) => {
          if (r.__typename !== 'SetPayoutPolicySuccess') return hoursField.error(failure(r as never));
          show(r.payoutPolicy);
          body.querySelector('[role="status"]')!.textContent = t('saved');
        })
        .catch(report);
    });
    replaceChildren(body, h('p', {}, t('payoutPolicyMeans')), current, form);
  };
  void v.gql(DashboardPayoutPolicyDocument, {})
    .then(({ payoutPolicy }) => show(payoutPolicy))
    .catch(report);
  return section('payout-policy', 'payoutPolicy', body);
}
