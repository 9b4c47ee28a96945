// Requests are counted once whatever becomes of them: answered (their status), or cut before the answer ended
// (a client that left mid-stream): `aborted`, never the 200 their head had promised.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { labelRoute } from '../../src/http/route-label.ts';
import { createLogger } from '../../src/logger.ts';
import { httpMetrics } from '../../src/ops/http-metrics.ts';
import { MetricsRegistry } from '../../src/ops/metrics.ts';
import { eventually } from '../support/funding.ts';

describe('HTTP request metrics', () => {
  it('count an answered request by its status and one cut mid-answer as aborted, each once', async () => {
    const metrics = new MetricsRegistry(createLogger('silent'));
    const track = httpMetrics(metrics);
    const server = createServer((req, res) => {
      track(req, res);
      labelRoute(res, req.url === '/whole' ? '/whole' : '/stream');
      res.writeHead(200, { 'content-type': 'text/csv' });
      if (req.url === '/whole') return void res.end('a,b\r\n');
      res.write('a,b\r\n'); // and never ends: the client leaves
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${url}/whole`)).text()).toBe('a,b\r\n');
      const abort = new AbortController();
      const streamed = await fetch(`${url}/stream`, { signal: abort.signal });
      await streamed.body!.getReader().read();
      abort.abort();
      const counted = (text: string, route: string, status: string) =>
        text.includes(`payrail_http_requests_total{method="GET",route="${route}",status="${status}"} 1`);
      const text = await eventually(() => metrics.text(), (t) => counted(t, '/stream', 'aborted'));
      expect(counted(text, '/whole', '200')).toBe(true);
      expect(text).not.toContain('route="/stream",status="200"');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
