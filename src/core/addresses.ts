// Which IP addresses a server-side request may reach (the site proxy's SSRF rule, also used for webhook
// deliveries): an allowlist, not a list of bad ranges, so a range nobody thought of is refused by default.
// Allowed: IPv4 addresses that ipaddr.js classes as `unicast` (none of the IANA special-purpose registry's
// ranges: loopback, RFC 1918, link-local and the cloud metadata address 169.254.169.254, CGNAT and
// 100.100.100.200, documentation, benchmarking, multicast, reserved, AS112, AMT ...), and IPv6 addresses in
// global unicast space (2000::/3, RFC 4291 §2.4) that are in none of the special-purpose ranges
// (documentation 2001:db8::/32 and 3fff::/20, Teredo, 6to4, ORCHID, benchmarking ...). Two IPv6 forms carry
// an IPv4 address and are judged by it: IPv4-mapped `::ffff:a.b.c.d` (what a dual-stack resolver may
// answer) and the well-known NAT64 prefix `64:ff9b::/96` (RFC 6052: how an IPv6-only host with DNS64
// reaches a public IPv4 API). Local-use NAT64 (64:ff9b:1::/48, RFC 8215) and SIIT (::ffff:0:0:0/96,
// RFC 6145) lead into the operator's own translators and are refused.

import ipaddr from 'ipaddr.js';

/** RFC 6052 §2.1's well-known prefix: the IPv4 address is the last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** RFC 4291 §2.4: everything IANA allocates as global unicast lies in 2000::/3. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

function isPublicIPv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function isPublicIPv6(address: ipaddr.IPv6): boolean {
  if (address.isIPv4MappedAddress()) return isPublicIPv4(address.toIPv4Address());
  if (address.match(NAT64_WELL_KNOWN)) {
    const bytes = address.toByteArray().slice(12);
    return isPublicIPv4(new ipaddr.IPv4(bytes));
  }
  return address.match(GLOBAL_UNICAST) && address.range() === 'unicast';
}

/** True when a request must not go to `address` (an IPv4 or IPv6 literal; anything else is refused). */
export function isForbiddenAddress(address: string): boolean {
  // A zone index (`fe80::1%eth0`) names an interface: never a public destination.
  if (address.includes('%') || !ipaddr.isValid(address)) return true;
  // `isValid` accepts the legacy IPv4 forms (`0x7f.1`, `127.1`); only the four-part decimal form is a
  // resolver's answer, so anything else is refused rather than guessed at.
  if (address.includes('.') && !address.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(address))
    return true;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4'
    ? !isPublicIPv4(parsed as ipaddr.IPv4)
    : !isPublicIPv6(parsed as ipaddr.IPv6);
}
