// Who a connection comes from, for limits that count per client address (live connections). Behind reverse
// proxies every connection comes from a proxy: with TRUST_PROXY_HOPS=n the client is the n-th address from the
// right of X-Forwarded-For, the one the outermost trusted proxy saw (entries further left are the client's own
// claims and are never believed).
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

export function clientAddress(req: IncomingMessage, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (trustedHops === 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const forwarded = hops[hops.length - trustedHops];
  // Not there (a request that skipped a proxy) or not an address: the peer it came from.
  return forwarded && ipaddr.isValid(forwarded) ? ipaddr.process(forwarded).toString() : peer;
}
