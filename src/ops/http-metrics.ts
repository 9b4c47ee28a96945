// Requests of the public listener by route template and status, and their latency. Per request: two label
// lookups and no I/O (bench/invoices.ts measures the cost).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '../core/metrics.ts';
import { routeLabel } from '../http/route-label.ts';

// Node's parser accepts ~30 methods; the label keeps the usual ones and folds the rest.
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function httpMetrics(metrics: Metrics): (req: IncomingMessage, res: ServerResponse) => void {
  const requests = metrics.counter({
    name: 'payrail_http_requests_total',
    help: 'Requests answered on the public listener, by method, route template (unmatched: no route) and status (aborted: the connection ended before the answer did, a client that left or a streamed answer cut after a failure).',
    labelNames: ['method', 'route', 'status'],
  });
  const duration = metrics.histogram({
    name: 'payrail_http_request_duration_seconds',
    help: 'From the request to the last byte of its answer, by method and route template (SSE streams left out: they last as long as the client stays).',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
  });
  /** Call as the request arrives: it is counted once, when its answer is sent or its connection ends first. */
  return (req, res) => {
    const started = process.hrtime.bigint();
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      const method = METHODS.has(req.method ?? '') ? req.method! : 'other';
      const route = routeLabel(res);
      const sse = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
      // An SSE stream ends when its client leaves: that is how it is meant to end, not an abort.
      const status = res.writableFinished || (sse && res.headersSent) ? String(res.statusCode) : 'aborted';
      requests.inc({ method, route, status });
      if (!sse) duration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    };
    res.once('finish', count);
    res.once('close', count);
  };
}
