// Streamed REST answers (RestResponse.stream) through the real REST handler on a node:http server, with a source
// the test controls: the first chunk reaches the client while the source has not made the next; a client that goes
// away stops the source; a failure before the first byte is an ordinary error answer, after it a broken transfer;
// and a client that does not read holds the source back (backpressure).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/errors/app-error.ts';
import { createRestHandler } from '../../src/http/rest.ts';
import { Router, type Route } from '../../src/http/router.ts';
import { createLogger } from '../../src/logger.ts';
import { eventually } from '../support/funding.ts';

/** A source whose every chunk waits until the test lets it go; it records what was asked of it. */
class Source {
  pulls = 0;
  finished = false;
  private gates: (() => void)[] = [];
  private opened = 0;
  constructor(
    private readonly chunk: (i: number) => string,
    private readonly length = Infinity,
    private readonly failAt = -1,
  ) {}
  /** Lets the next `n` chunks be made. */
  open(n = 1) {
    this.opened += n;
    for (const release of this.gates.splice(0)) release();
  }
  async *chunks(): AsyncGenerator<string> {
    try {
      for (let i = 0; i < this.length; i++) {
        while (this.opened <= i) await new Promise<void>((resolve) => this.gates.push(resolve));
        this.pulls++;
        if (i === this.failAt) throw new Error('the database went away');
        yield this.chunk(i);
      }
    } finally {
      this.finished = true;
    }
  }
}

describe('streamed answers', () => {
  let server: Server;
  let url: string;
  const logs: Record<string, unknown>[] = [];
  /** The connection of the latest request. */
  let lastSocket: Socket | null = null;
  let current: Source | null = null;
  /** The REST handler's run for the latest request (it must end, whatever the client does). */
  let lastHandled: Promise<void> | null = null;
  let failEarly: Error | null = null;

  beforeAll(async () => {
    const routes: Route<object>[] = [
      {
        method: 'GET',
        path: '/api/stream',
        auth: 'none',
        handler: async () => {
          if (failEarly) {
            const e = failEarly;
            return { status: 200, stream: (async function* () { throw e; })() };
          }
          return { status: 200, stream: current!.chunks(), headers: { 'content-type': 'text/plain; charset=utf-8' } };
        },
      },
    ];
    const logger = createLogger('debug', { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
    const rest = createRestHandler(new Router<object>().add(...routes), {}, { bodyLimitBytes: 1024, session: async () => null, clientAddress: () => '127.0.0.1', logger });
    server = createServer((req, res) => void (lastHandled = rest(req, res, new URL(req.url ?? '/', 'http://localhost'), 'req-1')));
    server.on('request', (req) => {
      lastSocket = req.socket;
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/stream`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const decoder = new TextDecoder();

  it('the first chunk reaches the client before the source made the second; then the rest, complete', async () => {
    const source = (current = new Source((i) => `chunk ${i}\n`, 3));
    source.open();
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const reader = res.body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('chunk 0\n');
    // The source is still waiting for its gate: nothing beyond the first chunk exists yet.
    expect(source.pulls).toBe(1);
    source.open(2);
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value);
    expect(rest).toBe('chunk 1\nchunk 2\n');
    expect(source.finished).toBe(true);
  });

  it('a client that goes away stops the source: no chunk is asked for after that', async () => {
    const source = (current = new Source((i) => `chunk ${i}\n`));
    source.open();
    const abort = new AbortController();
    const res = await fetch(url, { signal: abort.signal });
    const reader = res.body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('chunk 0\n');
    const socket = lastSocket!;
    abort.abort();
    await once(socket, 'close');
    // The chunk being made when the client left is the last one asked for; the source is closed (its finally ran).
    source.open(100);
    await eventually(async () => source.finished, (f) => f);
    expect(source.pulls).toBe(2);
  });

  it('a client that goes away before the first chunk was made stops the source too, and the handler returns', async () => {
    const source = (current = new Source((i) => `chunk ${i}\n`));
    lastSocket = null;
    const abort = new AbortController();
    const answered = fetch(url, { signal: abort.signal }).catch((e: unknown) => e);
    await eventually(async () => lastSocket, (s) => s !== null);
    const socket = lastSocket!;
    abort.abort();
    await answered;
    await once(socket, 'close');
    // Only now is the first chunk made: the handler notices the client is gone, closes the source and returns.
    source.open(100);
    await eventually(async () => source.finished, (f) => f);
    expect(source.pulls).toBe(1);
    await expect(lastHandled).resolves.toBeUndefined();
  });

  it('a failure after the first byte cuts the connection: the client sees a broken transfer, not a short file', async () => {
    const source = (current = new Source((i) => `chunk ${i}\n`, 5, 2));
    source.open();
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('chunk 0\n');
    // The third chunk fails: what came before arrived, then the transfer breaks instead of ending.
    source.open(4);
    await expect((async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read());
    })()).rejects.toThrow(/terminated/);
    expect(source.finished).toBe(true);
    expect(logs.some((l) => l['msg'] === 'streamed answer failed after its first byte: connection cut' && l['requestId'] === 'req-1')).toBe(true);
  });

  it('a failure before the first byte is an ordinary error answer in the one error shape', async () => {
    failEarly = new NotFoundError('No such export');
    try {
      const res = await fetch(url);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such export', details: [], requestId: 'req-1' } });
      failEarly = new Error('boom');
      const internal = await fetch(url);
      expect(internal.status).toBe(500);
      expect((await internal.json()).error.code).toBe('INTERNAL');
    } finally {
      failEarly = null;
    }
  });

  it('backpressure: while the client reads nothing, the source is not asked for more than the buffers hold', async () => {
    // 1 MiB chunks, at most 200 (if backpressure were ignored, all of them would be asked for at once).
    const mib = 'x'.repeat(1024 * 1024);
    const source = (current = new Source(() => mib, 200));
    source.open(200);
    const res = await fetch(url);
    const reader = res.body!.getReader();
    await reader.read();
    // Wait until the source stops being asked (the socket's buffers are full), then look.
    let last = -1;
    await eventually(
      async () => {
        const now = source.pulls;
        const stable = now === last;
        last = now;
        await new Promise((r) => setTimeout(r, 100));
        return stable;
      },
      (stable) => stable,
      20_000,
    );
    // Kernel and stream buffers on loopback hold some MiB; far from the 200 of a source drained regardless.
    expect(source.pulls).toBeLessThan(64);
    let bytes = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) bytes += r.value.length;
    expect(source.pulls).toBe(200);
    expect(bytes).toBeGreaterThan(198 * mib.length);
  });
});
