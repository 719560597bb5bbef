// Which IP addresses a server-side request may reach (the site proxy's SSRF rule): only public unicast.
// Refused: unspecified, loopback, private (RFC 1918, IPv6 ULA), link-local (incl. the cloud metadata
// address 169.254.169.254), CGNAT (RFC 6598, incl. 100.100.100.200), multicast, broadcast, reserved,
// documentation and benchmarking ranges; IPv6 forms that embed an IPv4 address (IPv4-mapped, -compatible,
// NAT64, 6to4) are judged by that IPv4 address. Ranges: the IANA special-purpose address registries.

import { BlockList, isIPv4, isIPv6 } from 'node:net';

const V4_REFUSED: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

const V6_REFUSED: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (incl. AWS's fd00:ec2::254 metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const v4Refused = new BlockList();
for (const [net, prefix] of V4_REFUSED) v4Refused.addSubnet(net, prefix, 'ipv4');
const v6Refused = new BlockList();
for (const [net, prefix] of V6_REFUSED) v6Refused.addSubnet(net, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (any textual form, including a dotted IPv4 tail). */
function ipv6Bytes(address: string): number[] {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const [a, b, c, d] = dotted[1].split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const parts = (s: string) => (s === '' ? [] : s.split(':').map((h) => Number.parseInt(h, 16)));
  const left = parts(head);
  const right = tail === undefined ? [] : parts(tail);
  const groups = [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** The IPv4 address an IPv6 address embeds (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIPv4(bytes: number[]): string | null {
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const v4 = (at: number) => bytes.slice(at, at + 4).join('.');
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return v4(12); // ::ffff:a.b.c.d
  if (zeros(0, 12)) return v4(12); // ::a.b.c.d (deprecated compatible form; :: and ::1 are refused anyway)
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12))
    return v4(12); // 64:ff9b::/96 NAT64
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return v4(2); // 2002::/16 6to4
  return null;
}

/** True when a request must not go to `address` (an IPv4 or IPv6 literal; anything else is refused). */
export function isForbiddenAddress(address: string): boolean {
  if (isIPv4(address)) return v4Refused.check(address, 'ipv4');
  if (!isIPv6(address)) return true;
  if (v6Refused.check(address.replace(/%.*$/, ''), 'ipv6')) return true;
  const inner = embeddedIPv4(ipv6Bytes(address));
  return inner !== null && v4Refused.check(inner, 'ipv4');
}
