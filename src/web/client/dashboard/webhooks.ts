// Webhooks: the URL and its test, and the delivery log with every attempt (status code, time, error) and redeliver.
import {
  DashboardRedeliverDocument,
  DashboardSetWebhookUrlDocument,
  DashboardTestWebhookDocument,
  DashboardWebhookDeliveriesDocument,
  DashboardWebhookSettingsDocument,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren, uid } from '../shared/dom.ts';
import { report, section, statusNote, t, table, time, type ModeView } from './context.ts';

export function webhooksSection(v: ModeView) {
  if (!v.may('SETTINGS_READ')) return null;
  const id = uid('webhook');
  const input = h('input', { id, type: 'url', name: 'url', maxlength: 2048, 'aria-describedby': `${id}-hint ${id}-error`, readonly: !v.may('SETTINGS_WRITE') });
  const error = h('p', { class: 'field-error', id: `${id}-error` });
  const note = statusNote();
  void v.gql(DashboardWebhookSettingsDocument, {})
    .then(({ webhookSettings }) => (input.value = webhookSettings.url ?? ''))
    .catch(report);
  const form = h(
    'form',
    {},
    h('div', { class: 'field' }, h('label', { for: id }, t('webhookUrl')), input, h('p', { class: 'hint', id: `${id}-hint` }, t('webhookUrlHint')), error),
    v.may('SETTINGS_WRITE') ? [h('button', { type: 'submit' }, t('save')), ' '] : null,
    v.may('SETTINGS_WRITE')
      ? h(
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
        )
      : null,
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

/** The latest deliveries of every event; each row's attempts in a disclosure (a native <details>, keyboard-ready). */
export function deliveriesSection(v: ModeView) {
  if (!v.may('SETTINGS_READ')) return null;
  const body = h('div', {});
  const note = statusNote();
  const load = () =>
    void v.gql(DashboardWebhookDeliveriesDocument, { first: 30 })
      .then(({ webhookDeliveries }) =>
        replaceChildren(
          body,
          webhookDeliveries.nodes.length
            ? h(
                'div',
                { class: 'scroll' },
                table(
                  t('deliveryLog'),
                  [t('created'), t('event'), t('status'), t('attempts'), t('lastAnswer'), ''],
                  webhookDeliveries.nodes.map((d) =>
                    h(
                      'tr',
                      { 'data-log-delivery': d.id, 'data-status': d.status },
                      h('td', {}, time(d.createdAt)),
                      h('td', {}, d.eventType.toLowerCase()),
                      h('td', {}, d.status.toLowerCase()),
                      h(
                        'td',
                        {},
                        h(
                          'details',
                          {},
                          h('summary', {}, t('attemptCount', { n: d.attempts })),
                          d.attemptLog.length
                            ? h(
                                'ol',
                                {},
                                d.attemptLog.map((a) => h('li', { 'data-attempt': String(a.attempt) }, t('attemptLine', { at: time(a.startedAt), answer: a.statusCode ? String(a.statusCode) : (a.error ?? '—'), ms: a.durationMs }))),
                              )
                            : h('p', {}, t('none')),
                        ),
                      ),
                      h('td', {}, d.lastStatusCode ? String(d.lastStatusCode) : (d.lastError ?? '')),
                      h(
                        'td',
                        {},
                        v.may('SETTINGS_WRITE')
                          ? h(
                              'button',
                              {
                                type: 'button',
                                'aria-label': `${t('redeliver')} ${d.eventType.toLowerCase()} ${time(d.createdAt)}`,
                                onclick: () =>
                                  void v.gql(DashboardRedeliverDocument, { input: { eventId: d.eventId } })
                                    .then(({ redeliverWebhook: r }) => {
                                      note.textContent = r.__typename === 'RedeliverWebhookSuccess' ? t('redelivered') : r.message;
                                      load();
                                    })
                                    .catch(report),
                              },
                              t('redeliver'),
                            )
                          : null,
                      ),
                    ),
                  ),
                ),
              )
            : h('p', {}, `${t('deliveryLog')}: ${t('none')}`),
        ),
      )
      .catch(report);
  load();
  v.reloads.push(load);
  const refresh = h('button', { type: 'button', onclick: load }, t('refresh'));
  return section('delivery-log', 'deliveryLog', refresh, body, note);
}
