// A strict reader of the Prometheus text exposition format 0.0.4, as a scraper would read it: it throws on any line
// it cannot take (bad names, unescaped label values, samples without a TYPE, duplicate series, histograms whose
// buckets do not add up), so a test that reads a scrape also proves it parseable.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface PromFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: PromSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

// As Prometheus reads values (Go's ParseFloat): Inf and NaN in any case (prom-client writes `Nan`).
function parseValue(text: string, line: string): number {
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${name} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`bad label separator in: ${line}`);
  }
  return labels;
}

/** The families of a scrape, by name; throws naming the first line that is not valid exposition text. */
export function parsePrometheus(text: string): Map<string, PromFamily> {
  if (!text.endsWith('\n')) throw new Error('exposition text must end with a newline');
  const families = new Map<string, PromFamily>();
  const seen = new Set<string>();
  const familyOf = (sample: string): PromFamily | undefined => {
    const exact = families.get(sample);
    if (exact) return exact;
    const base = sample.replace(/_(bucket|sum|count)$/, '');
    const f = families.get(base);
    return f && (f.type === 'histogram' || f.type === 'summary') ? f : undefined;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // other comments are allowed
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const family = families.get(name) ?? { name, type: 'untyped' as const, help: '', samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (family.samples.length) throw new Error(`TYPE after samples in: ${line}`);
        family.type = rest as PromFamily['type'];
      } else family.help = rest;
      families.set(name, family);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const family = familyOf(name);
    if (!family) throw new Error(`sample without a TYPE: ${line}`);
    const labels = parseLabels(labelText ?? '', line);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    family.samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Buckets cumulative and ending in +Inf equal to _count, per label set. */
function checkHistogram(f: PromFamily): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    if (s.name.endsWith('_bucket')) entry.buckets.push([parseValue(le ?? '', `${f.name} le`), s.value]);
    else if (s.name.endsWith('_count')) entry.count = s.value;
    else if (s.name.endsWith('_sum')) entry.sum = s.value;
    series.set(key, entry);
  }
  for (const [key, { buckets, count, sum }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity || count === undefined || sum === undefined) throw new Error(`${f.name}${key}: needs +Inf, _count and _sum`);
    if (sorted.at(-1)![1] !== count) throw new Error(`${f.name}${key}: +Inf bucket is not _count`);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${f.name}${key}: buckets are not cumulative`);
  }
}

/** The value of the one sample of `name` with exactly these labels (undefined: none). */
export function sampleValue(families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  const want = JSON.stringify(Object.entries(labels).sort());
  return family?.samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value;
}

/** Every sample of `name`, as `labels -> value` (label sets serialised in key order), for exact comparisons. */
export function seriesOf(families: Map<string, PromFamily>, name: string): Record<string, number> {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  return Object.fromEntries(
    (family?.samples ?? [])
      .filter((s) => s.name === name)
      .map((s) => [Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(','), s.value]),
  );
}
