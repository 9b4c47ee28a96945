// The pages the service serves beside its APIs: the checkout page at PAY_URL/<invoice id> (with the payment's QR
// code at .../qr.svg), payment links at /l/<link id> (a new invoice, then 303 to its checkout page), the merchant
// dashboard at /dashboard, and their scripts and styles at /assets/. The pages
// are small HTML shells: the scripts render them from the public GraphQL API. Every answer carries a CSP without
// inline script, `frame-ancestors 'none'`, `Referrer-Policy: no-referrer` and `nosniff`.
import type { IncomingMessage, ServerResponse } from 'node:http';
import QRCode from 'qrcode';
import { qrContent } from '../chains/payment-uri.ts';
import type { Db } from '../db/client.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { INVOICE_ID_PATTERN } from '../invoices/ids.ts';
import { outstandingPayment } from '../invoices/presenter.ts';
import { labelRoute } from '../http/route-label.ts';
import { preferredLanguage } from '../domain/languages.ts';
import type { Logger } from '../logger.ts';
import type { WebAssets } from './assets.ts';
import { isLanguage, LANGUAGE_NAMES, LANGUAGES, text, type Language, type TextKey } from './client/shared/i18n.ts';

/** What opening a payment link came to (payment-links/ makes the invoice; this module only answers). */
export type LinkOpening =
  | { kind: 'invoice'; invoiceId: string; checkoutUrl: string }
  | { kind: 'unknown' }
  | { kind: 'inactive' }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'limited'; retryAfterSeconds: number };

/** Where payment links are served: `/l/<id>` on the server's own host (PUBLIC_BASE_URL). */
const LINK_PATH = /^\/l\/([^/]+)\/?$/;

export interface WebPagesDeps {
  db: Db;
  /** Opens a payment link for this request's client (its address counts against the limit); none: /l/ is not served. */
  openLink?: (id: string, req: IncomingMessage) => Promise<LinkOpening>;
  logger: Logger;
  /** The path part of PAY_URL: the checkout page of an invoice is `<payPath>/<id>`. */
  payPath: string;
  /** Null when the pages' code was not built (an install without dev dependencies): the pages answer 503. */
  assets: WebAssets | null;
}

const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/;

/** The security headers of every page answer; the live connection goes to this same host. */
function securityHeaders(req: IncomingMessage): Record<string, string> {
  const host = req.headers.host && HOST.test(req.headers.host) ? req.headers.host : null;
  const sockets = host ? ` ws://${host} wss://${host}` : '';
  return pageSecurityHeaders([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // Merchants' logos are https URLs of their own.
    "img-src 'self' https:",
    `connect-src 'self'${sockets}`,
    "form-action 'self'",
  ]);
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** ?lang=, else the supported language the browser prefers most (Accept-Language with its q-values), else English. */
export function pickLanguage(url: URL, acceptLanguage: string | undefined): Language {
  const asked = url.searchParams.get('lang');
  if (isLanguage(asked)) return asked;
  return preferredLanguage(acceptLanguage) ?? 'en';
}

interface Shell {
  language: Language;
  title: TextKey;
  /** The page's module; none for the 404 page, which is complete as served. */
  script: string | null;
  style: string;
  /** data-* attributes of <main id="app">, already checked (ids match their pattern). */
  data: Record<string, string>;
  body: string;
}

function shell(assets: WebAssets, s: Shell): string {
  const data = Object.entries(s.data)
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="${s.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(text(s.language, s.title))}</title>
<link rel="stylesheet" href="${assets.url(s.style)}">
${s.script ? `<script type="module" src="${assets.url(s.script)}"></script>` : ''}
</head>
<body>
<main id="app"${data}>${s.body}</main>
</body>
</html>
`;
}

function send(res: ServerResponse, req: IncomingMessage, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...securityHeaders(req), 'content-type': type, 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-cache', ...headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function createWebPages(deps: WebPagesDeps) {
  const { payPath, assets } = deps;
  // PAY_URL without a path (a host of its own): only what looks like an invoice id is a checkout page there.
  const idSegment = payPath ? '[^/]+' : INVOICE_ID_PATTERN.source.replace(/^\^|\$$/g, '');
  const checkoutPath = new RegExp(`^${payPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(${idSegment})(/qr\\.svg)?/?$`);

  /** A complete page that says one thing (no script): not found, a link that is off, a limit reached. */
  const messagePage = (req: IncomingMessage, res: ServerResponse, language: Language, page: { status: number; code: string; title: TextKey; text: TextKey; values?: Record<string, string | number>; headers?: Record<string, string> }) => {
    const languages = LANGUAGES.map((code) => `<a href="?lang=${code}" lang="${code}" hreflang="${code}"${code === language ? ' aria-current="true"' : ''}>${LANGUAGE_NAMES[code]}</a>`).join('');
    const body = `<nav class="languages" aria-label="${escapeHtml(text(language, 'language'))}">${languages}</nav><h1>${escapeHtml(text(language, page.title))}</h1><p>${escapeHtml(text(language, page.text, page.values))}</p>`;
    const html = assets
      ? shell(assets, { language, title: page.title, script: null, style: 'checkout-style.css', data: { status: page.code }, body })
      : `<!doctype html><html lang="${language}"><title>${escapeHtml(text(language, page.title))}</title>${body}</html>`;
    send(res, req, page.status, 'text/html; charset=utf-8', html, page.headers);
  };
  const notFound = (req: IncomingMessage, res: ServerResponse, language: Language) => messagePage(req, res, language, { status: 404, code: 'NOT_FOUND', title: 'notFoundTitle', text: 'notFoundText' });

  /** GET /l/<id>: a new invoice from the link and 303 to its checkout page, or a page saying why not. HEAD makes nothing. */
  async function paymentLink(req: IncomingMessage, res: ServerResponse, url: URL, id: string): Promise<void> {
    const language = pickLanguage(url, req.headers['accept-language']);
    if (req.method === 'HEAD') return send(res, req, 200, 'text/html; charset=utf-8', '');
    const opening = await deps.openLink!(id, req);
    switch (opening.kind) {
      case 'invoice':
        return send(res, req, 303, 'text/plain; charset=utf-8', `See ${opening.checkoutUrl}\n`, { location: opening.checkoutUrl, 'cache-control': 'no-store' });
      case 'unknown':
        return messagePage(req, res, language, { status: 404, code: 'LINK_NOT_FOUND', title: 'linkNotFoundTitle', text: 'linkNotFoundText' });
      case 'inactive':
        return messagePage(req, res, language, { status: 410, code: 'LINK_INACTIVE', title: 'linkInactiveTitle', text: 'linkInactiveText' });
      case 'unavailable':
        return messagePage(req, res, language, { status: 409, code: 'LINK_UNAVAILABLE', title: 'linkUnavailableTitle', text: 'linkUnavailableText' });
      case 'limited':
        return messagePage(req, res, language, {
          status: 429,
          code: 'RATE_LIMITED',
          title: 'linkLimitedTitle',
          text: 'linkLimitedText',
          values: { minutes: Math.max(1, Math.ceil(opening.retryAfterSeconds / 60)) },
          headers: { 'retry-after': String(opening.retryAfterSeconds), 'cache-control': 'no-store' },
        });
    }
  }

  async function checkout(req: IncomingMessage, res: ServerResponse, url: URL, id: string, qr: boolean): Promise<void> {
    const language = pickLanguage(url, req.headers['accept-language']);
    const invoice = INVOICE_ID_PATTERN.test(id)
      ? await deps.db.invoice.findUnique({
          where: { id },
          select: { id: true, status: true, paymentCurrency: true, paymentAmount: true, paidAmount: true, address: { select: { address: true, tag: true } }, company: { select: { mode: true } } },
        })
      : null;
    if (!invoice) return notFound(req, res, language);
    if (qr) {
      const outstanding = outstandingPayment(invoice);
      if (!outstanding) return send(res, req, 404, 'text/plain; charset=utf-8', 'Nothing to pay at this invoice now\n');
      const svg = await QRCode.toString(qrContent(outstanding), { type: 'svg', errorCorrectionLevel: 'M', margin: 4 });
      // What is due changes with payments: never cached.
      return send(res, req, 200, 'image/svg+xml', svg, { 'cache-control': 'no-store' });
    }
    if (!assets) return unavailable(req, res);
    const loading = `<p>${escapeHtml(text(language, 'loading'))}</p><noscript><p>${escapeHtml(text(language, 'noscript'))}</p></noscript>`;
    send(
      res,
      req,
      200,
      'text/html; charset=utf-8',
      shell(assets, {
        language,
        title: 'pageTitle',
        script: 'checkout.js',
        style: 'checkout-style.css',
        // The test banner is for test-mode invoices only: a live invoice is real money, whatever else the server runs.
        data: { invoice: invoice.id, 'pay-path': payPath, mode: invoice.company.mode },
        body: loading,
      }),
    );
  }

  const unavailable = (req: IncomingMessage, res: ServerResponse) =>
    send(res, req, 503, 'text/plain; charset=utf-8', 'The pages were not built: run `npm run build` (it needs the dev dependencies).\n', { 'retry-after': '60' });

  /** Answers the request if it is for a page or an asset; false when it is not ours. */
  return async function handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
    const path = url.pathname;
    // Browsers ask for it on every page: an empty answer instead of the API's JSON 404.
    if (path === '/favicon.ico') {
      labelRoute(res, path);
      res.writeHead(204, { 'cache-control': 'public, max-age=86400' }).end();
      return true;
    }
    const asset = path.startsWith('/assets/');
    const match = checkoutPath.exec(path);
    const link = deps.openLink && !match ? LINK_PATH.exec(path) : null;
    if (!asset && !match && !link && path !== '/dashboard' && path !== '/dashboard/') return false;
    labelRoute(res, asset ? '/assets/:file' : match ? `${payPath}/:id${match[2] ? '/qr.svg' : ''}` : link ? '/l/:id' : '/dashboard');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, req, 405, 'text/plain; charset=utf-8', 'Method not allowed\n', { allow: 'GET, HEAD' });
      return true;
    }
    if (asset) {
      const file = assets?.get(path.slice('/assets/'.length));
      if (!file) send(res, req, 404, 'text/plain; charset=utf-8', 'Not found\n');
      // Content-addressed URLs never change: cache them for good; anything else revalidates.
      else send(res, req, 200, file.type, file.body, { 'cache-control': url.searchParams.get('v') === file.hash ? 'public, max-age=31536000, immutable' : 'no-cache' });
      return true;
    }
    if (link) {
      await paymentLink(req, res, url, link[1]!);
      return true;
    }
    if (match) {
      // An id is plain ASCII (INVOICE_ID_PATTERN): anything else, encoded or not, is no invoice.
      await checkout(req, res, url, match[1]!, match[2] !== undefined);
      return true;
    }
    if (!assets) {
      unavailable(req, res);
      return true;
    }
    const language = pickLanguage(url, req.headers['accept-language']);
    send(
      res,
      req,
      200,
      'text/html; charset=utf-8',
      shell(assets, {
        language,
        title: 'dashboardTitle',
        script: 'dashboard.js',
        style: 'dashboard-style.css',
        data: {},
        body: `<p>${escapeHtml(text(language, 'loading'))}</p><noscript><p>${escapeHtml(text(language, 'noscript'))}</p></noscript>`,
      }),
    );
    return true;
  };
}

