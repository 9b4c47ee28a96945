// Webhook URLs are merchant input: requests must not reach our own network unless the operator allows it.
// Addresses are classified by ipaddr.js (IANA special-purpose registries), not a hand-kept list; IPv6 forms
// that carry an IPv4 address (mapped, translated, NAT64, 6to4) are judged by the IPv4 address they carry.
import dns from 'node:dns';
import ipaddr from 'ipaddr.js';

/** The IPv4 address inside an IPv6 address that carries one; null for forms that are never public. */
function embeddedIPv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null | undefined {
  const b = v6.toByteArray();
  const v4 = (from: number) => new ipaddr.IPv4(b.slice(from, from + 4));
  switch (v6.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d (SIIT)
      return v4(12);
    case 'rfc6052': // NAT64: only the well-known 64:ff9b::/96 maps the public internet; local-use prefixes are private
      return v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96) ? v4(12) : null;
    case '6to4': // 2002:a.b.c.d::/48
      return v4(2);
    case 'teredo': // a tunnel endpoint, never a webhook receiver
      return null;
    default:
      // ::a.b.c.d, the deprecated IPv4-compatible form (ipaddr.js calls it unicast): never public.
      return b.slice(0, 12).every((x) => x === 0) ? null : undefined;
  }
}

/** True unless the address is plain public unicast (IPv4 or IPv6, embedded IPv4 judged as IPv4). */
export function isNonPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return true;
  const addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv4') return addr.range() !== 'unicast';
  const v6 = addr as ipaddr.IPv6;
  const inner = embeddedIPv4(v6);
  if (inner === null) return true;
  if (inner) return inner.range() !== 'unicast';
  return v6.range() !== 'unicast';
}

/** Names the operator setting, so a developer testing against a local shop finds the fix in the error itself. */
export const ALLOW_PRIVATE_HINT = '(the operator can allow private addresses with WEBHOOK_ALLOW_PRIVATE=1)';

export class BlockedAddressError extends Error {
  constructor(host: string, ip: string) {
    super(`${host} resolves to ${ip}, a non-public address; webhooks may not reach it ${ALLOW_PRIVATE_HINT}`);
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
  return ipaddr.isValid(host) && isNonPublicAddress(host) ? host : null;
}
