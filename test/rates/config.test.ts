// RATES_CONFIG and TEST_MODE_RATES are checked at start, every problem named with its place in the file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'payrail-rates-config-'));
const file = (name: string, body: unknown) => {
  const p = path.join(dir, name);
  writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
  return p;
};
const problems = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
    return 'accepted';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('RATES_CONFIG', () => {
  it('reads a good file with its defaults', () => {
    const key = file('key', 'secret-key\n');
    const c = loadConfig({ RATES_CONFIG: file('good.json', { sources: [{ source: 'kraken' }, { source: 'coingecko', url: 'https://proxy.example/cg', apiKeyFile: key }, { source: 'static' }], spreadPercent: '0.5' }) });
    expect(c.invoices.rates).toMatchObject({ refreshSeconds: 30, maxAgeSeconds: 120, minSources: 2, timeoutSeconds: 5 });
    expect(c.invoices.rates!.maxDeviationPercent.toFixed()).toBe('3');
    expect(c.invoices.rates!.spreadPercent.toFixed()).toBe('0.5');
    expect(c.invoices.testModeRates).toBe('static');
  });

  it('names every problem of a bad file at once', () => {
    const message = problems({
      RATES_CONFIG: file('bad.json', {
        sources: [{ source: 'kraken', url: 'ftp://x' }, { source: 'kraken' }, { source: 'nasdaq' }, { source: 'coingecko', apiKeyFile: '/nonexistent/key' }, { source: 'static', extra: 1 }],
        refreshSeconds: 60,
        maxAgeSeconds: 30,
        minSources: 9,
        maxDeviationPercent: '-1',
        spreadPercent: 'lots',
      }),
    });
    for (const part of [
      'RATES_CONFIG:',
      'sources.0.url: must be an absolute http(s) URL',
      'sources.2.source',
      'maxDeviationPercent: must be at least 0',
      'spreadPercent: must be a decimal number',
      'sources.4: Unrecognized key',
    ]) {
      expect(message).toContain(part);
    }
  });

  it('checks the rules against each other and the files it names', () => {
    const message = problems({
      RATES_CONFIG: file('rules.json', { sources: [{ source: 'kraken' }, { source: 'kraken' }, { source: 'coingecko', apiKeyFile: '/nonexistent/key' }], refreshSeconds: 60, maxAgeSeconds: 30, minSources: 4 }),
    });
    expect(message).toContain('sources.1.source: kraken is named twice');
    expect(message).toContain('sources.2.apiKeyFile: cannot read /nonexistent/key');
    expect(message).toContain('minSources: is 4 but only 3 sources are named');
    expect(message).toContain('maxAgeSeconds: must be more than refreshSeconds (60)');
  });

  it('refuses a file that is not JSON or missing, and TEST_MODE_RATES=live without sources', () => {
    expect(problems({ RATES_CONFIG: file('broken.json', '{"sources": [') })).toContain('RATES_CONFIG:');
    expect(problems({ RATES_CONFIG: path.join(dir, 'missing.json') })).toContain('RATES_CONFIG:');
    expect(problems({ TEST_MODE_RATES: 'live' })).toContain('TEST_MODE_RATES: live needs RATES_CONFIG');
    expect(problems({ TEST_MODE_RATES: 'random' })).toContain('TEST_MODE_RATES');
  });
});
