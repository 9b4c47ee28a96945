import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config.ts';
import { loadFeeTable } from '../../src/pricing/fees.ts';
import { StaticRateSource } from '../../src/pricing/rates.ts';

describe('loadConfig', () => {
  it('defines each variable once, and the README documents every one', () => {
    expect(new Set(CONFIG_VARIABLES).size).toBe(CONFIG_VARIABLES.length);
    expect(CONFIG_VARIABLES).toEqual(expect.arrayContaining(['PORT', 'WEBHOOK_TIMEOUT_MS', 'SWEEP_INTERVAL_MS', 'IDEMPOTENCY_KEY_TTL_HOURS']));
    const readme = readFileSync('README.md', 'utf8');
    expect(CONFIG_VARIABLES.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('gives each feature its section, named by the variable without the prefix', () => {
    const c = loadConfig({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_WORKER: '0', SWEEP_INTERVAL_MS: '250' });
    expect(c.webhooks).toMatchObject({ timeoutMs: 2000, worker: false, leaseMs: 22_000, allowPrivate: false });
    expect(c.invoices).toMatchObject({ sweepIntervalMs: 250, refundRetryIntervalMs: 30_000 });
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MS: '1000' })).toThrow('WEBHOOK_LEASE_MS: must be longer than WEBHOOK_TIMEOUT_MS');
  });

  it('has working defaults for a bare machine', () => {
    const c = loadConfig({});
    expect(c.port).toBe(4000);
    expect(c.databaseUrl).toBe(`pglite:${path.resolve('data', 'pglite')}`);
    expect(c.embedded).toBe(true);
    expect(c.publicBaseUrl).toBe('http://localhost:4000');
    expect(c.payUrl).toBe('http://localhost:4000/pay');
    expect(c.logLevel).toBe('info');
  });

  it('derives PAY_URL from PUBLIC_BASE_URL and accepts PostgreSQL', () => {
    const c = loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/', DATABASE_URL: 'postgresql://u@db/x', PORT: '8080' });
    expect(c.payUrl).toBe('https://pay.example.com/pay');
    expect(c.embedded).toBe(false);
    expect(c.port).toBe(8080);
    expect(loadConfig({ PAY_URL: 'https://checkout.example/p' }).payUrl).toBe('https://checkout.example/p');
  });

  it('takes CHAIN_WORKER=0 with PostgreSQL only (the chains worker is another process); 1 by default', () => {
    expect(loadConfig({}).chainWorker).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db/x', CHAIN_WORKER: '0' }).chainWorker).toBe(false);
    expect(() => loadConfig({ CHAIN_WORKER: '0' })).toThrow('CHAIN_WORKER=0: needs DATABASE_URL=postgresql://');
    expect(() => loadConfig({ DATABASE_URL: 'pglite:./x', CHAIN_WORKER: '0' })).toThrow('CHAIN_WORKER=0: needs DATABASE_URL=postgresql://');
  });

  it('takes REDIS_URL with PostgreSQL only, as a redis URL', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'redis://cache:6379/0' }).redisUrl).toBe('redis://cache:6379/0');
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'rediss://u:p@cache:6380' }).redisUrl).toBe('rediss://u:p@cache:6380');
    expect(loadConfig({}).redisUrl).toBeUndefined();
    expect(() => loadConfig({ REDIS_URL: 'redis://cache:6379' })).toThrow('REDIS_URL: needs DATABASE_URL=postgresql://');
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'http://cache:6379' })).toThrow('REDIS_URL');
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://u@db/x', REDIS_URL: 'not a url' })).toThrow('REDIS_URL');
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ PORT: '99999', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', PUBLIC_BASE_URL: 'nope' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: '99999', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', PUBLIC_BASE_URL: 'nope' });
    } catch (e) {
      for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'PUBLIC_BASE_URL']) expect((e as Error).message).toContain(name);
    }
  });
});

describe('rate and fee files', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'payrail-cfg-'));
  it('overrides USD prices from RATES_FILE', async () => {
    const file = path.join(dir, 'rates.json');
    writeFileSync(file, JSON.stringify({ btc: '100000', eur: 1.1 }));
    const rates = StaticRateSource.fromFile(file);
    expect((await rates.rate('usd', 'btc')).toFixed()).toBe('0.00001');
    expect((await rates.rate('eur', 'trc20usdt')).toFixed()).toBe('1.1');
  });
  it('rejects a bad rate table', () => {
    const file = path.join(dir, 'bad-rates.json');
    writeFileSync(file, JSON.stringify({ btc: '-1' }));
    expect(() => StaticRateSource.fromFile(file)).toThrow(/btc/);
  });
  it('reads the files with the project’s one decimal parser: exact digits, bounded exponents and ranges, fast', () => {
    const file = path.join(dir, 'hostile.json');
    // Raw JSON numbers, not strings: they must not pass through a float either.
    for (const raw of ['1e10000000', '1e-10000000', '1e21', '0.0000000000000000001', '"1e99999"', '"NaN"']) {
      writeFileSync(file, `{"btc": ${raw}}`);
      const started = performance.now();
      expect(() => StaticRateSource.fromFile(file), raw).toThrow(/btc/);
      writeFileSync(file, `{"btc": {"percent": ${raw}}}`);
      expect(() => loadFeeTable(file), raw).toThrow(/btc/);
      expect(performance.now() - started, raw).toBeLessThan(100);
    }
    writeFileSync(file, '{"btc": 97000.123456789012345678}');
    expect(StaticRateSource.fromFile(file)).toBeInstanceOf(StaticRateSource);
    writeFileSync(file, '{"btc": {"percent": 100.5}}');
    expect(() => loadFeeTable(file)).toThrow(/at most 100/);
  });
  it('merges FEES_FILE over the defaults and rejects unknown currencies', () => {
    const file = path.join(dir, 'fees.json');
    writeFileSync(file, JSON.stringify({ btc: { percent: '0.5', fixed: '0.00001' } }));
    const fees = loadFeeTable(file);
    expect(fees.btc.percent.toFixed()).toBe('0.5');
    expect(fees.btc.fixed.toFixed()).toBe('0.00001');
    expect(fees.eth.percent.toFixed()).toBe('1');
    writeFileSync(file, JSON.stringify({ doge: { percent: '1' } }));
    expect(() => loadFeeTable(file)).toThrow();
  });
});
