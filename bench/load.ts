// Load generation: autocannon in a worker thread, so the client does not share the event loop with the
// in-process server under test (on 2 cores that would distort both numbers).
import { fileURLToPath } from 'node:url';
import autocannon, { type Result } from 'autocannon';

const VERIFY_BODY = fileURLToPath(new URL('./verify-body.cjs', import.meta.url));
const NEXT_BODY = fileURLToPath(new URL('./next-body.cjs', import.meta.url));
const NEXT_PATH = fileURLToPath(new URL('./next-path.cjs', import.meta.url));

export interface LoadTarget {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Each connection cycles through these (path and optionally body); default: the url itself. */
  rotate?: { path: string; body?: string }[];
  /** Bodies handed out once each, in order, across all connections (see next-body.cjs); replaces `body`. */
  bodies?: string[];
  /** Paths handed out once each, in order, across all connections (see next-path.cjs), all with `body`. */
  paths?: string[];
  /** Stop after this many responses, even before the duration is over. */
  maxRequests?: number;
  /** CommonJS module judging each response body; default verify-body.cjs. */
  verifyBody?: string;
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

export function run(target: LoadTarget, connections: number, duration: number): Promise<Result> {
  const u = new URL(target.url);
  const path = u.pathname + u.search;
  return autocannon({
    url: u.origin,
    connections,
    duration,
    workers: 1,
    timeout: 10,
    method: target.method,
    headers: target.headers,
    body: target.body,
    requests: target.bodies
      ? [{ path, setupRequest: NEXT_BODY, bodies: target.bodies }]
      : target.paths
        ? [{ path, setupRequest: NEXT_PATH, paths: target.paths }]
        : (target.rotate ?? [{ path }]),
    maxOverallRequests: target.maxRequests,
    // autocannon ends a run at its next sample tick: 1 s (its default) would pad runs ended by maxRequests.
    sampleInt: 100,
    verifyBody: target.verifyBody ?? VERIFY_BODY,
  });
}

export async function measure(target: LoadTarget, s: LoadSettings): Promise<Measurement> {
  // Warm-up: JIT, pool connections, PostgreSQL plan/catalog caches. Its numbers are discarded.
  if (s.warmupSec > 0) await run(target, s.connections, s.warmupSec);
  return toMeasurement(await run(target, s.connections, s.durationSec));
}

/** `ok`: the successful responses, by default 2xx whose body passed the check. */
export function toMeasurement(r: Result, ok = r['2xx'] - r.mismatches): Measurement {
  const statusCodes = Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, v]) => [code, v.count]));
  return {
    reqPerSec: ok / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    failures: r.non2xx + r.errors + r.timeouts + r.mismatches,
    detail: { non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, mismatches: r.mismatches, statusCodes },
  };
}
