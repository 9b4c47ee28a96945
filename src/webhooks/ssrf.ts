// Webhook URLs are merchant input: requests must not reach our own network unless the operator allows it.
import dns from 'node:dns';
import net, { BlockList } from 'node:net';

const blocked = new BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** Loopback, private, link-local, carrier-grade NAT, multicast and reserved ranges (IPv4-mapped IPv6 too). */
export function isNonPublicAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = net.isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) return blocked.check(ip, 'ipv6');
  return true;
}

export class BlockedAddressError extends Error {
  constructor(host: string, ip: string) {
    super(`${host} resolves to ${ip}, a non-public address; webhooks may not reach it`);
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for sockets that checks the address actually connected to, not only the host name. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => isNonPublicAddress(a.address));
      if (bad) return callback(new BlockedAddressError(hostname, bad.address) as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** IP-literal hosts never go through lookup: check them directly. */
export function literalHostBlocked(url: URL, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) && isNonPublicAddress(host) ? host : null;
}
