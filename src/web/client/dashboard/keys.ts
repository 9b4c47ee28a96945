// API keys of this mode (docs/security.md): the list, a new key with the scopes picked (its token shown once), revoke.
import { DashboardApiKeysDocument, DashboardCreateApiKeyDocument, DashboardRevokeApiKeyDocument, type ApiScope, type DashboardApiKeyFragment } from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { checkbox, copyButton, failure, field, needsScope, report, section, statusNote, t, table, time, type ModeView } from './context.ts';

const SCOPES: ApiScope[] = ['INVOICES_READ', 'INVOICES_WRITE', 'PAYOUTS_READ', 'PAYOUTS_WRITE', 'DEPOSITS_READ', 'DEPOSITS_WRITE', 'EXPORTS_READ', 'SETTINGS_READ', 'SETTINGS_WRITE', 'KEYS_WRITE'];
/** The REST spelling, as keys are documented: invoices:read. */
const scopeName = (s: ApiScope) => s.toLowerCase().replace('_', ':');

export function apiKeysSection(v: ModeView) {
  if (!v.may('SETTINGS_READ')) return section('api-keys', 'apiKeys', needsScope('settings:read'));
  const list = h('div', {});
  const note = statusNote();
  const render = (keys: DashboardApiKeyFragment[]) =>
    replaceChildren(
      list,
      keys.length
        ? h(
            'div',
            { class: 'scroll' },
            table(
              t('apiKeys'),
              [t('keyName'), t('scopes'), t('created'), t('expires'), t('lastUsed'), ''],
              keys.map((k) =>
                h(
                  'tr',
                  { 'data-api-key': k.id },
                  h('td', {}, k.name),
                  h('td', {}, k.scopes.map(scopeName).join(', ')),
                  h('td', {}, time(k.createdAt)),
                  h('td', {}, k.expiresAt ? time(k.expiresAt) : t('never')),
                  h('td', {}, k.lastUsedAt ? time(k.lastUsedAt) : t('never')),
                  h(
                    'td',
                    {},
                    v.may('KEYS_WRITE')
                      ? h(
                          'button',
                          {
                            type: 'button',
                            'aria-label': t('revokeKey', { name: k.name }),
                            onclick: () => {
                              if (!window.confirm(t('revokeConfirm', { name: k.name }))) return;
                              void v.gql(DashboardRevokeApiKeyDocument, { input: { id: k.id } })
                                .then(({ revokeApiKey: r }) => {
                                  note.textContent = r.__typename === 'RevokeApiKeySuccess' ? t('keyRevoked', { name: k.name }) : r.message;
                                  load();
                                })
                                .catch(report);
                            },
                          },
                          t('revoke'),
                        )
                      : null,
                  ),
                ),
              ),
            ),
          )
        : h('p', {}, `${t('apiKeys')}: ${t('none')}`),
    );
  const load = () =>
    void v.gql(DashboardApiKeysDocument, {})
      .then(({ apiKeys }) => render(apiKeys))
      .catch(report);
  load();
  v.reloads.push(load);
  let form: HTMLElement | null = null;
  const created = h('div', { class: 'created', tabindex: -1 });
  if (v.may('KEYS_WRITE')) {
    const name = h('input', { name: 'keyName', required: true, maxlength: 100, autocomplete: 'off' });
    const nameField = field(t('keyName'), name);
    const expires = h('input', { type: 'date', name: 'expires' });
    // A key never gets a scope its maker lacks: only the session's own are offered.
    const boxes = SCOPES.filter((s) => v.may(s)).map((s) => ({ scope: s, ...checkbox(scopeName(s)) }));
    const formNote = statusNote();
    form = h(
      'form',
      { class: 'task' },
      h('h3', {}, t('newKey')),
      nameField.wrapper,
      h('fieldset', {}, h('legend', {}, t('scopes')), boxes.map((b) => b.wrapper)),
      field(t('expiresOptional'), expires).wrapper,
      h('button', { type: 'submit' }, t('createKey')),
      formNote,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      nameField.clear();
      replaceChildren(created);
      const input = { name: name.value.trim(), scopes: boxes.filter((b) => b.input.checked).map((b) => b.scope), expiresAt: expires.value ? `${expires.value}T00:00:00.000Z` : null };
      void v.gql(DashboardCreateApiKeyDocument, { input })
        .then(({ createApiKey: r }) => {
          if (r.__typename !== 'CreateApiKeySuccess') return nameField.error(failure(r as never));
          const copied = statusNote();
          replaceChildren(created, h('p', {}, t('keyCreated', { name: r.created.apiKey.name })), h('p', {}, h('code', { 'data-new-token': '' }, r.created.token)), copyButton(t('copyToken'), () => r.created.token, copied), copied);
          created.focus();
          (form as HTMLFormElement).reset();
          load();
        })
        .catch(report);
    });
  } else if (v.may('SETTINGS_READ')) {
    form = needsScope('keys:write');
  }
  return section('api-keys', 'apiKeys', list, note, form, created);
}
