// Payment links: a URL (and its QR code) a merchant shares without writing code; each opening makes a new invoice
// with the link's items and sends the client to its checkout page. Create, list, deactivate.
import QRCode from 'qrcode';
import {
  DashboardCreatePaymentLinkDocument,
  DashboardDeactivatePaymentLinkDocument,
  DashboardPaymentLinksDocument,
  type DashboardPaymentLinkFragment,
} from '../../../../generated/gql-web/graphql.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { copyButton, failure, field, money, needsScope, PAGE, report, section, statusNote, t, time, type ModeView } from './context.ts';
import { currencyFields, itemsEditor } from './invoices.ts';

type Link = DashboardPaymentLinkFragment;

/** The link's QR code, drawn on a canvas (the page's CSP allows no data: images, and a canvas needs none). */
function qrCode(link: Link): HTMLCanvasElement {
  const canvas = h('canvas', { role: 'img', 'aria-label': t('linkQr', { name: link.name }), 'data-link-qr': link.linkId });
  void QRCode.toCanvas(canvas, link.url, { errorCorrectionLevel: 'M', margin: 4, width: 184 }).catch(report);
  return canvas;
}

export function paymentLinksSection(v: ModeView) {
  if (!v.may('INVOICES_READ')) return section('payment-links', 'paymentLinks', needsScope('invoices:read'));
  const list = h('div', { class: 'link-list' });
  const links = new Map<string, Link>();
  const note = statusNote();
  const render = () =>
    replaceChildren(
      list,
      links.size
        ? [...links.values()]
            .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
            .map((link) => {
              const copied = statusNote();
              return h(
                'article',
                { class: 'payment-link', 'data-link': link.linkId, 'data-active': String(link.active), 'aria-labelledby': `link-${link.linkId}` },
                h('h3', { id: `link-${link.linkId}` }, link.name),
                h('p', {}, `${money(link.total.amount, link.total.currency)} · ${link.items.map((i) => i.name).join(', ')} · ${link.active ? t('linkActive') : t('linkInactive')}`),
                h('p', { class: 'link' }, h('a', { href: link.url, 'data-link-url': '' }, link.url)),
                link.active ? qrCode(link) : null,
                h(
                  'div',
                  { class: 'actions' },
                  copyButton(t('copyLink'), () => link.url, copied),
                  link.active && v.may('INVOICES_WRITE')
                    ? h(
                        'button',
                        {
                          type: 'button',
                          'aria-label': t('deactivateLink', { name: link.name }),
                          onclick: () =>
                            void v.gql(DashboardDeactivatePaymentLinkDocument, { input: { id: link.linkId } })
                              .then(({ deactivatePaymentLink: r }) => {
                                if (r.__typename !== 'DeactivatePaymentLinkSuccess') return void (note.textContent = r.message);
                                links.set(r.paymentLink.linkId, r.paymentLink);
                                render();
                                note.textContent = t('linkDeactivated', { name: r.paymentLink.name });
                              })
                              .catch(report),
                        },
                        t('deactivate'),
                      )
                    : null,
                ),
                copied,
                h('p', { class: 'muted' }, t('createdAt', { at: time(link.createdAt) })),
              );
            })
        : h('p', {}, `${t('paymentLinks')}: ${t('none')}`),
    );
  const load = () =>
    void v.gql(DashboardPaymentLinksDocument, { first: PAGE })
      .then(({ paymentLinks }) => {
        links.clear();
        for (const l of paymentLinks.nodes) links.set(l.linkId, l);
        render();
      })
      .catch(report);
  load();
  v.reloads.push(load);
  let form: HTMLElement | null = null;
  if (v.may('INVOICES_WRITE')) {
    const name = h('input', { name: 'linkName', required: true, maxlength: 200, autocomplete: 'off' });
    const nameField = field(t('linkName'), name, t('linkNameHint'));
    const currencies = currencyFields();
    const items = itemsEditor();
    const fee = h('select', { name: 'isMerchantPaysFee' }, h('option', { value: '' }, t('feeStoreDefault')), h('option', { value: 'true' }, t('feeMerchant')), h('option', { value: 'false' }, t('feeClient')));
    const formNote = statusNote();
    const created = h('p', { class: 'created', tabindex: -1 });
    form = h(
      'form',
      { class: 'task', 'data-form': 'create-link' },
      h('h3', {}, t('newLink')),
      nameField.wrapper,
      currencies.currency,
      items.elements,
      currencies.payIn,
      field(t('whoPaysFee'), fee).wrapper,
      h('button', { type: 'submit', class: 'primary' }, t('createLink')),
      formNote,
      created,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      nameField.clear();
      items.clear();
      formNote.textContent = created.textContent = '';
      const input = { name: name.value.trim(), ...currencies.values(), items: items.values(), isMerchantPaysFee: fee.value === '' ? null : fee.value === 'true', active: true };
      v.gql(DashboardCreatePaymentLinkDocument, { input })
        .then(({ createPaymentLink: r }) => {
          if (r.__typename !== 'CreatePaymentLinkSuccess') {
            const details = 'details' in r ? (r.details ?? []) : [];
            items.mark(details);
            if (details.some((d) => d.path === 'name')) nameField.error(details.find((d) => d.path === 'name')!.message);
            formNote.textContent = failure(r as never);
            return;
          }
          links.set(r.paymentLink.linkId, r.paymentLink);
          render();
          (form as HTMLFormElement).reset();
          items.reset();
          created.textContent = t('linkCreated', { name: r.paymentLink.name });
          created.focus();
        })
        .catch((e: unknown) => (formNote.textContent = e instanceof Error ? e.message : String(e)));
    });
  }
  return section('payment-links', 'paymentLinks', h('p', {}, t('paymentLinksMean')), form, note, list);
}
