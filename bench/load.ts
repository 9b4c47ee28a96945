// Load generation: autocannon in a worker thread, so the client does not share the event loop with the
// in-process server under test (on 2 cores that would distort both numbers).
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';

const VERIFY_BODY = fileURLToPath(new URL('./verify-body.cjs', import.meta.url));

export interface LoadTarget {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Each connection cycles through these (path and optionally body); default: the url itself. */
  rotate?: { path: string; body?: string }[];
}

export interface LoadSettings {
  connections: number;
  durationSec: number;
  warmupSec: number;
}

export interface Measurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  /** non2xx + connection errors + timeouts + bodies failing verify-body.cjs */
  failures: number;
  detail: { non2xx: number; errors: number; timeouts: number; mismatches: number; statusCodes: Record<string, number> };
}

function run(target: LoadTarget, connections: number, duration: number): Promise<Result> {
  const u = new URL(target.url);
  return autocannon({
    url: u.origin,
    connections,
    duration,
    workers: 1,
    timeout: 10,
    method: target.method,
    headers: target.headers,
    body: target.body,
    requests: target.rotate ?? [{ path: u.pathname + u.search }],
    verifyBody: VERIFY_BODY,
  });
}

export async function measure(target: LoadTarget, s: LoadSettings): Promise<Measurement> {
  // Warm-up: JIT, pool connections, PostgreSQL plan/catalog caches. Its numbers are discarded.
  if (s.warmupSec > 0) await run(target, s.connections, s.warmupSec);
  const r = await run(target, s.connections, s.durationSec);
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, v]) => [code, v.count]));
  const ok = r['2xx'] - r.mismatches;
  return {
    reqPerSec: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    failures: r.non2xx + r.errors + r.timeouts + r.mismatches,
    detail: { non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches, statusCodes },
  };
}
