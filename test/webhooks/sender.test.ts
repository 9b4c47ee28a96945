// The webhook sender's timeout against a starved process: a receiver that answered in time is recorded as answered
// even when the sending process was blocked past the timeout (its answer waits in the socket); a receiver that does
// not answer still times out.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookSender } from '../../src/webhooks/sender.ts';

/** A receiver in another process (it must answer while this one is blocked): /fast answers in 50 ms, /never never. */
async function startReceiver(): Promise<{ url: (path: string) => string; child: ChildProcess }> {
  const code = `require('http').createServer((q, s) => { q.resume(); q.on('end', () => { if (q.url === '/fast') setTimeout(() => s.writeHead(200).end('ok'), 50); }); })
    .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
  return { url: (path) => `http://127.0.0.1:${port}${path}`, child };
}

/** Blocks this process for `ms`, starting `afterMs` from now, from an I/O-phase callback (as a query's completion). */
const starve = (afterMs: number, ms: number) =>
  setTimeout(() => setImmediate(() => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  }), afterMs);

describe('webhook sender timeout', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const sender = new WebhookSender(500, true);
  const send = (path: string) => sender.send({ url: receiver.url(path), eventId: 'evt-1', body: '{}', secretKey: 'whsec_dGVzdA==', timestampSeconds: 1, mode: 'test' });
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.child.kill());

  it('an answer that arrived while the process was blocked past the timeout counts (no failed attempt, no duplicate)', async () => {
    const sent = send('/fast');
    starve(20, 900);
    const result = await sent;
    expect(result.durationMs).toBeGreaterThanOrEqual(500);
    expect(result).toMatchObject({ ok: true, statusCode: 200, error: null, responseBody: 'ok' });
  });

  it('a receiver that does not answer still times out', async () => {
    const result = await send('/never');
    expect(result).toMatchObject({ ok: false, statusCode: null, error: 'timed out after 500 ms' });
    expect(result.durationMs).toBeLessThan(2_000);
  });
});
