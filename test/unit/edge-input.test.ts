// The edge checks every untrusted value passes: the one decimal parser, instants, sequence cursors, tags, the
// text guard (bytes that are not UTF-8, NUL, lone surrogates, nesting) and the SSRF address classifier.
import { describe, expect, it } from 'vitest';
import { AMOUNT_COLUMN, readDecimal } from '../../src/domain/money.ts';
import { DecimalLiteral } from '../../src/core/json.ts';
import { checkFormEncodedUtf8, findInputProblem, MAX_INPUT_DEPTH, textProblem, utf8Text } from '../../src/http/input-guard.ts';
import { parseInstant, sequenceCursor, TAG_PATTERN } from '../../src/core/validation.ts';
import { isNonPublicAddress } from '../../src/webhooks/ssrf.ts';

const timed = <T>(fn: () => T): [T, number] => {
  const started = performance.now();
  const out = fn();
  return [out, performance.now() - started];
};

describe('the decimal parser', () => {
  it('refuses huge and tiny exponents and long texts without computing them (each well under a millisecond budget)', () => {
    for (const text of ['1e10000000', '1e-10000000', '9e99999', `1${'0'.repeat(5000)}`, `0.${'0'.repeat(5000)}1`]) {
      const [reading, ms] = timed(() => readDecimal(text));
      expect(reading.ok, text.slice(0, 40)).toBe(false);
      expect(ms, text.slice(0, 40)).toBeLessThan(50);
    }
  });

  it('checks the value against the column it goes into', () => {
    expect(readDecimal('1e21')).toEqual({ ok: false, message: 'must have at most 20 digits before the decimal point' });
    expect(readDecimal('99999999999999999999.999999999999999999')).toMatchObject({ ok: true });
    expect(readDecimal('100000000000000000000')).toMatchObject({ ok: false });
    expect(readDecimal('0.0000000000000000001')).toEqual({ ok: false, message: 'must have at most 18 decimal places' });
    expect(readDecimal('1e-18')).toMatchObject({ ok: true });
    // Trailing zeros are not places; an exponent can bring a long literal back in range.
    expect(readDecimal('1.500000000000000000000000')).toMatchObject({ ok: true });
    expect(readDecimal('12345e-4', { integerDigits: 5, scale: 4 })).toMatchObject({ ok: true });
    expect(readDecimal('123456', { integerDigits: 5, scale: 4 })).toMatchObject({ ok: false });
    expect(AMOUNT_COLUMN).toEqual({ integerDigits: 20, scale: 18 });
  });

  it('reads exact values and nothing but decimal literals', () => {
    const ok = (t: string) => {
      const r = readDecimal(t);
      if (!r.ok) throw new Error(`${t}: ${r.message}`);
      return r.value.toFixed();
    };
    expect(ok('0.1')).toBe('0.1');
    // No float on the way: 0.1 + 0.2 is 0.3.
    const [a, b] = [readDecimal('0.1'), readDecimal('0.2')];
    expect(a.ok && b.ok && a.value.plus(b.value).toFixed()).toBe('0.3');
    expect(ok(' -12.50 ')).toBe('-12.5');
    expect(ok('1E3')).toBe('1000');
    expect(ok('-0')).toBe('0');
    expect(ok('1e+0000000000000000001')).toBe('10');
    for (const bad of ['', ' ', 'abc', '1,5', 'NaN', 'Infinity', '-Infinity', '0x10', '1.2.3', '--1', '1e', 'e5', '١٢٣', '1_000']) {
      expect(readDecimal(bad).ok, bad).toBe(false);
    }
  });
});

describe('instants', () => {
  it('accepts RFC 3339 with a zone between years 0001 and 9999 only', () => {
    expect(parseInstant('2026-11-21T10:00:00.000Z')?.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(parseInstant('2026-11-21T12:00:00+02:00')?.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(parseInstant('0001-01-01T00:00:00Z')?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(parseInstant('9999-12-31T23:59:59.999Z')?.toISOString()).toBe('9999-12-31T23:59:59.999Z');
    for (const bad of ['0000-01-01T00:00:00Z', '-271821-04-20T00:00:00Z', '+275760-09-13T00:00:00Z', '10000-01-01T00:00:00Z', '2026-02-31T00:00:00Z',
      '2026-11-21', '2026-11-21T10:00:00', 'March 7', '1', '', '2026-13-01T00:00:00Z', '2026-11-21T24:00:00Z', '0000-12-31T23:00:00-02:00']) {
      expect(parseInstant(bad), bad).toBeNull();
    }
  });
});

describe('sequence cursors', () => {
  it('fit PostgreSQL BIGINT', () => {
    expect(sequenceCursor.safeParse('9223372036854775807').success).toBe(true);
    for (const bad of ['9223372036854775808', '99999999999999999999', '-1', '1e3', '', ' 1']) expect(sequenceCursor.safeParse(bad).success, bad).toBe(false);
  });
});

describe('tags', () => {
  it('are 1-120 printable ASCII characters without spaces at the ends', () => {
    for (const good of ['1', '123456789', 'memo-42_a.b', 'a b', 'x'.repeat(120)]) expect(TAG_PATTERN.test(good), good).toBe(true);
    for (const bad of ['', ' 1', '1 ', 'x'.repeat(121), '\uFFFD', 'é', 'a\nb', '\u0000', 'a\u0000']) expect(TAG_PATTERN.test(bad), JSON.stringify(bad)).toBe(false);
  });
});

describe('the text guard', () => {
  it('finds NUL and lone surrogates anywhere, keys included, with their path', () => {
    expect(textProblem('fine ✓ 💸')).toBeNull();
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('\uD800')).toMatch(/Unicode/);
    expect(textProblem('\uDC00x')).toMatch(/Unicode/);
    expect(findInputProblem({ items: [{ name: 'ok' }, { name: 'x\u0000' }] })).toEqual({ path: 'items.1.name', message: 'must not contain NUL characters' });
    expect(findInputProblem({ ['k\uD83D']: 1 })?.message).toMatch(/key/);
    expect(findInputProblem({ a: new DecimalLiteral('1.5'), b: [1, true, null] })).toBeNull();
  });

  it('reads bytes as UTF-8 strictly, percent-escapes of form-encoded text included (never as U+FFFD)', () => {
    expect(utf8Text(Buffer.from('fine ✓ 💸'), 'The body')).toBe('fine ✓ 💸');
    for (const bytes of [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf0, 0x9f], [0x80]]) {
      expect(() => utf8Text(Buffer.from([0x61, ...bytes]), 'The body'), String(bytes)).toThrow(expect.objectContaining({ code: 'MALFORMED_REQUEST', message: 'The body is not valid UTF-8' }));
    }
    for (const ok of ['a=b&c=d', 'q=%C3%A9+%F0%9F%98%80', 'q=100%', 'q=%', 'q=%F', 'q=%zz%41', 'q=é&r=%E2%9C%93', '']) {
      expect(() => checkFormEncodedUtf8(ok, 'The query string'), ok).not.toThrow();
    }
    for (const bad of ['q=%FF', 'q=%ED%A0%80', 'q=%F0%9F', 'q=%C0%AF', 'a=b&q=%C3', 'q=%e9']) {
      expect(() => checkFormEncodedUtf8(bad, 'The query string'), bad).toThrow('The query string is not valid UTF-8');
    }
  });

  it('refuses nesting deeper than any request needs, without recursing through all of it', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const [problem, ms] = timed(() => findInputProblem(deep));
    expect(problem?.message).toMatch(`deeper than ${MAX_INPUT_DEPTH}`);
    expect(ms).toBeLessThan(100);
  });
});

describe('the SSRF address classifier', () => {
  it('blocks every non-public address, including IPv4 inside IPv6 forms', () => {
    const blocked = [
      '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1',
      '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', '240.0.0.1', '192.0.0.8',
      '::', '::1', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '2001:db8::1', 'fec0::1', '100::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '64:ff9b::a00:1', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2002:c0a8:101::1',
      '::7f00:1', '::ffff:0:7f00:1', '::808:808', '2001:0:4136:e378:8000:63bf:3fff:fdd2', 'not an ip',
    ];
    for (const ip of blocked) expect(isNonPublicAddress(ip), ip).toBe(true);
  });

  it('lets public unicast through, also when carried inside IPv6', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      expect(isNonPublicAddress(ip), ip).toBe(false);
    }
  });
});
