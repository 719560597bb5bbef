// The client's address: the one rule every per-client limit and log line uses (the API's rate limit,
// the site password lockout, the upload concurrency cap, request logs). Nothing else reads
// X-Forwarded-For or the socket's peer address (test/core/client-address.test.ts checks the sources).
//
// X-Forwarded-For is a list each proxy appends the address it saw to, so only entries on the right,
// added by proxies this deployment trusts (TRUST_PROXY), are facts; anything further left was written by
// whoever sent the request. The walk starts at the socket's peer and moves left while the hop it stands
// on is a trusted proxy; the first hop that is not is the client (CONTRACT "Configuration": "the
// rightmost X-Forwarded-For entry not added by a trusted proxy"), as Fastify's `trustProxy` does.

import { isIP } from 'node:net';
import type { TrustProxy } from '../config.js';

/** Used when the socket has no peer address any more (it closed before the request was read). */
const UNKNOWN_ADDRESS = 'unknown';
const IPV4_MAPPED_PREFIX = '::ffff:';
/** IPv6 clients are limited per /64: one subscriber's network, whose addresses it may rotate freely (RFC 6177). */
const IPV6_LIMIT_PREFIX_GROUPS = 4;

/** Whether the hop `hop` steps back from this server (0 = the socket's peer), at `address`, is a trusted proxy. */
function isTrustedProxy(trust: TrustProxy, address: string, hop: number): boolean {
  if ('hops' in trust) return hop < trust.hops;
  const family = isIP(address);
  return family !== 0 && trust.proxies.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** An address as one spelling: IPv4-mapped IPv6 (a dual-stack socket's IPv4 peer) as IPv4, IPv6 lowercase. */
function normalized(address: string): string {
  const lower = address.toLowerCase();
  if (lower.startsWith(IPV4_MAPPED_PREFIX) && isIP(lower.slice(IPV4_MAPPED_PREFIX.length)) === 4) {
    return lower.slice(IPV4_MAPPED_PREFIX.length);
  }
  return lower;
}

/**
 * The client's address for a request that arrived from `peerAddress` (the socket's remote address)
 * carrying `forwardedFor` (the X-Forwarded-For field; node joins repeated fields with commas). An entry
 * that is not an IP address ends the walk at the proxy that passed it on.
 */
export function clientAddress(
  trust: TrustProxy,
  peerAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
): string {
  if (peerAddress === undefined) return UNKNOWN_ADDRESS;
  let address = normalized(peerAddress);
  if (forwardedFor === undefined || ('hops' in trust && trust.hops === 0)) return address;
  const entries = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
  for (let hop = 0, i = entries.length - 1; i >= 0 && isTrustedProxy(trust, address, hop); hop++, i--) {
    const entry = entries[i]!.trim();
    if (isIP(entry) === 0) break;
    address = normalized(entry);
  }
  return address;
}

/**
 * The key per-client limits count under: the address itself for IPv4, its /64 network for IPv6 (a client
 * holds a whole /64 and could otherwise open a new window per address).
 */
export function limitKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${ipv6Groups(address).slice(0, IPV6_LIMIT_PREFIX_GROUPS).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (valid per isIP), in hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // An IPv4 tail (`::ffff:192.0.2.1`, RFC 4291 §2.2 form 3) is two groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = tail.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const middle = rest === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => Number.parseInt(g, 16).toString(16));
}
