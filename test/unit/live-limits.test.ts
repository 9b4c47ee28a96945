// Live connection limits without a server: the client address behind trusted proxies, and SSE slots that always
// come back, the client leaving while its token is looked up included.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Credential } from '../../src/core/auth.ts';
import { LiveLimits, SseStreams } from '../../src/graphql/live-limits.ts';
import { LiveSessions } from '../../src/graphql/live-sessions.ts';
import { createLogger } from '../../src/logger.ts';
import { clientAddress } from '../../src/http/client-address.ts';

const request = (peer: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  it('is the peer without trusted proxies, whatever X-Forwarded-For claims', () => {
    expect(clientAddress(request('10.0.0.5', '1.2.3.4'), 0)).toBe('10.0.0.5');
  });

  it('behind n trusted proxies: the n-th address from the right; the client’s own claims further left are ignored', () => {
    expect(clientAddress(request('10.0.0.5', '6.6.6.6, 203.0.113.7'), 1)).toBe('203.0.113.7');
    expect(clientAddress(request('10.0.0.5', ['6.6.6.6, 203.0.113.7', '10.0.0.9']), 2)).toBe('203.0.113.7');
    expect(clientAddress(request('10.0.0.5', '::ffff:203.0.113.7'), 1)).toBe('203.0.113.7');
    // Missing, too short or not an address: the peer.
    expect(clientAddress(request('10.0.0.5'), 1)).toBe('10.0.0.5');
    expect(clientAddress(request('10.0.0.5', '203.0.113.7'), 2)).toBe('10.0.0.5');
    expect(clientAddress(request('10.0.0.5', 'evil, not-an-ip'), 1)).toBe('10.0.0.5');
  });
});

const credentialOf = (companyId: string): Credential => ({ kind: 'public-token', companyId, digest: 'ab'.repeat(32) });
const as = (companyId: string) => ({ company: { id: companyId }, credential: credentialOf(companyId) });

describe('SSE slots', () => {
  const limits = () => new LiveLimits({ maxConnectionsPerIp: 1, maxConnectionsPerMerchant: 1, maxSubscriptionsPerConnection: 10 });
  const sessions = () => new LiveSessions({ stillValid: async () => true }, createLogger('silent'));
  const response = () => Object.assign(new EventEmitter(), { destroy() {} }) as unknown as ServerResponse & EventEmitter;

  it('a client that leaves while its token is looked up gives its slot back', async () => {
    const l = limits();
    let answer: (c: ReturnType<typeof as> | null) => void = () => {};
    const followed = sessions();
    const streams = new SseStreams(l, () => new Promise((resolve) => (answer = resolve)), (req) => req.socket.remoteAddress!, followed);
    const req = request('198.51.100.1');
    req.headers.authorization = 'Bearer pk_x';
    const res = response();
    const admitted = streams.admit(req, res);
    res.emit('close');
    answer(as('merchant-1'));
    expect((await admitted).refused).toBeNull();
    // Nor is it followed for its credential.
    expect(followed.size).toBe(0);
    // Both the address and the merchant are free again.
    expect(l.open('198.51.100.1')).not.toBeNull();
    const other = l.open('198.51.100.2')!;
    expect(other.forMerchant('merchant-1')).toBe(true);
  });

  it('past a limit: a clear error, nothing held; the slot of a closed stream is free again', async () => {
    const l = limits();
    const streams = new SseStreams(l, async () => as('merchant-1'), (req) => req.socket.remoteAddress!, sessions());
    const first = response();
    expect((await streams.admit(request('198.51.100.1'), first)).refused).toBeNull();
    expect((await streams.admit(request('198.51.100.1'), response())).refused).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('address') });
    const otherAddress = response();
    expect((await streams.admit(request('198.51.100.2'), otherAddress)).refused).toMatchObject({ code: 'RATE_LIMITED', message: expect.stringContaining('merchant') });
    otherAddress.emit('close');
    first.emit('close');
    expect((await streams.admit(request('198.51.100.2'), response())).refused).toBeNull();
  });
});
