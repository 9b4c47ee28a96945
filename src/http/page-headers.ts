// The security headers of every HTML page the server answers (the checkout page, the dashboard, the API reference,
// GraphiQL): a CSP without inline script, no framing, no referrer, no sniffing, no powerful browser features.

/** The headers of a page whose CSP is `directives` (each `name value`); `frame-ancestors 'none'` and `base-uri 'none'` are always added. */
export function pageSecurityHeaders(directives: string[]): Record<string, string> {
  return {
    'content-security-policy': [...directives, "base-uri 'none'", "frame-ancestors 'none'"].join('; '),
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
}
