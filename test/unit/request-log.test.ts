// The request log never carries an export download link's token (a credential that works without a header).
import { describe, expect, it } from 'vitest';
import { withoutSecrets } from '../../src/app.ts';

describe('the URL a request is logged with', () => {
  it('leaves out the token of an export download link, and nothing else', () => {
    const token = 'k3Vq0mZ1x9bYzA4t7QpL2sWfJ8hNcR6dEoU5iG0aB1c';
    expect(withoutSecrets(`/api/exports/${token}`)).toBe('/api/exports/<token>');
    expect(withoutSecrets(`/api/exports/${token}?x=1`)).toBe('/api/exports/<token>?x=1');
    expect(withoutSecrets('/api/company/exports/ledger.csv?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z')).toBe(
      '/api/company/exports/ledger.csv?from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z',
    );
    expect(withoutSecrets('/api/invoices/v1/regular/abc')).toBe('/api/invoices/v1/regular/abc');
    expect(withoutSecrets(undefined)).toBeUndefined();
  });
});
