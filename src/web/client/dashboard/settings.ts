// Settings: the store (what the checkout page shows), which e-mails go out and to whom, and the audit log (who
// changed what, from where).
import {
  DashboardAuditLogDocument,
  DashboardNotificationSettingsDocument,
  DashboardSetNotificationSettingsDocument,
  DashboardStoreSettingsDocument,
  DashboardUpdateStoreSettingsDocument,
  type DashboardStoreSettingsFragment,
  type DashboardNotificationSettingsFragment,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { checkbox, field, needsScope, report, section, statusNote, t, table, time, type Key, type ModeView } from './context.ts';

type Settings = DashboardNotificationSettingsFragment;
const CLIENT_MAILS: [Exclude<keyof Settings['client'], '__typename'>, Key][] = [
  ['pending', 'mailPending'],
  ['done', 'mailDone'],
  ['wrong', 'mailWrong'],
  ['refunded', 'mailRefunded'],
  ['closed', 'mailClosed'],
];
const MERCHANT_MAILS: [Exclude<keyof Settings['merchant'], 'emails' | '__typename'>, Key][] = [
  ['done', 'mailMerchantDone'],
  ['wrong', 'mailMerchantWrong'],
  ['withdrawalDone', 'mailWithdrawalDone'],
  ['withdrawalRejected', 'mailWithdrawalRejected'],
  ['depositFrozen', 'mailDepositFrozen'],
  ['webhookFailing', 'mailWebhookFailing'],
];

/** Which e-mails go out (docs/emails.md): one checkbox per kind, the merchant's addresses. */
export function emailsSection(v: ModeView) {
  const id = uid('mail');
  const box = (name: string, label: Key) => {
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

/** The latest audit entries (docs/security.md): who changed what, from where; for sessions with settings:read. */
export function auditSection(v: ModeView) {
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


/** The store as the checkout page shows it (the account's, both modes): name, logo, default redirect, currencies, fees. */
export function storeSection(v: ModeView) {
  if (!v.may('SETTINGS_READ')) return null;
  const body = h('div', {});
  const show = (s: DashboardStoreSettingsFragment) => {
    const name = h('input', { name: 'storeName', required: true, maxlength: 200, value: s.name, autocomplete: 'organization' });
    const logo = h('input', { name: 'logoUrl', type: 'url', maxlength: 2048, value: s.logoUrl, autocomplete: 'off' });
    const redirect = h('input', { name: 'redirectURL', type: 'url', maxlength: 2048, value: s.redirectURL ?? '', autocomplete: 'off' });
    const fields = { name: field(t('storeName'), name), logoUrl: field(t('logoUrl'), logo, t('logoUrlHint')), redirectURL: field(t('defaultRedirect'), redirect, t('defaultRedirectHint')) };
    const assets = s.assets.map((a) => ({ asset: a.asset, ...checkbox(a.asset.toUpperCase(), s.acceptedAssets.includes(a.asset)) }));
    const assetsError = h('p', { class: 'field-error', role: 'alert' });
    const fee = checkbox(t('merchantPaysFeeDefault'), s.isMerchantPaysFee);
    const note = statusNote();
    const editable = v.may('SETTINGS_WRITE');
    const form = h(
      'form',
      { class: 'task', 'data-form': 'store' },
      fields.name.wrapper,
      fields.logoUrl.wrapper,
      fields.redirectURL.wrapper,
      h('fieldset', { class: 'assets' }, h('legend', {}, t('acceptedCurrencies')), assets.map((a) => a.wrapper), assetsError),
      fee.wrapper,
      editable ? h('button', { type: 'submit' }, t('save')) : needsScope('settings:write'),
      note,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      Object.values(fields).forEach((f) => f.clear());
      assetsError.textContent = note.textContent = '';
      const input = {
        name: name.value.trim(),
        logoUrl: logo.value.trim(),
        redirectURL: redirect.value.trim() || null,
        acceptedAssets: assets.filter((a) => a.input.checked).map((a) => a.asset),
        isMerchantPaysFee: fee.input.checked,
      };
      void v.gql(DashboardUpdateStoreSettingsDocument, { input })
        .then(({ updateStoreSettings: r }) => {
          if (r.__typename === 'UpdateStoreSettingsSuccess') {
            show(r.storeSettings);
            body.querySelector('[role="status"]')!.textContent = t('saved');
            return;
          }
          const details = 'details' in r ? (r.details ?? []) : [];
          for (const d of details) {
            const key = d.path.split('.')[0] as keyof typeof fields | 'acceptedAssets';
            if (key === 'acceptedAssets') assetsError.textContent = d.message;
            else fields[key]?.error(d.message);
          }
          if (!details.length) note.textContent = r.message;
        })
        .catch(report);
    });
    replaceChildren(body, h('p', {}, t('storeMeans')), form);
  };
  void v.gql(DashboardStoreSettingsDocument, {})
    .then(({ storeSettings }) => show(storeSettings))
    .catch(report);
  return section('store', 'store', body);
}
