// The proxy's address rule (core/addresses.ts) as a table: only public unicast addresses may be reached.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isForbiddenAddress } from '../../src/core/addresses.js';

const REFUSED = [
  '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', // loopback, private
  '169.254.169.254', '169.254.0.1', // link-local, cloud metadata
  '100.64.0.1', '100.100.100.200', // CGNAT, Alibaba metadata
  '0.0.0.0', '255.255.255.255', '224.0.0.1', '239.1.2.3', '240.0.0.1', // unspecified, broadcast, multicast
  '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.18.0.1', // documentation, benchmarking
  '::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '2001:db8::1', // IPv6
  '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', // IPv4-mapped
  '::127.0.0.1', '64:ff9b::a00:1', '2002:7f00:1::1', // compatible, NAT64, 6to4 embedding internal IPv4
  '64:ff9b:1::808:808', '64:ff9b:1:abcd::1', // local-use NAT64 (RFC 8215): the translator is the operator's
  '::ffff:0:808:808', '::ffff:0:7f00:1', // SIIT (RFC 6145): a translator of the operator's network
  '3fff::1', '3fff:fff:ffff::1', // documentation (RFC 9637)
  '2002:808:808::1', '2001:0:4136:e378::1', // 6to4 and Teredo relays: deprecated, never an API's address
  '5f00::1', '2001:2::1', '2001:20::1', '100::1', // segment routing, benchmarking, ORCHIDv2, discard
  '4000::1', 'e000::1', '1::1', // outside global unicast 2000::/3 (unassigned)
  '192.175.48.1', '192.52.193.1', // AS112, AMT
  '127.1', '0x7f.0.0.1', '017700000001', // legacy IPv4 spellings: never a resolver's answer
  'not-an-ip', '',
]; // biome-ignore format: a table

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '3ffe:ffff::1', // global unicast outside the documentation block (3fff::/20)
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
];

describe('isForbiddenAddress', () => {
  test('refuses internal, special-purpose, translated and unassigned addresses (an allowlist of global unicast)', () => {
    for (const a of REFUSED) assert.equal(isForbiddenAddress(a), true, a);
  });
  test('allows public unicast addresses', () => {
    for (const a of ALLOWED) assert.equal(isForbiddenAddress(a), false, a);
  });
});
