// The client address rule (issue 19 item 4): X-Forwarded-For is read from the right, only across hops
// TRUST_PROXY trusts; the leftmost entry is whatever the client wrote. Plus the per-client limit key.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { clientAddress, limitKey } from '../../src/core/client-address.js';

const trust = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;

describe('clientAddress', () => {
  // [TRUST_PROXY, socket peer, X-Forwarded-For, client]
  const table: Array<[string, string | undefined, string | undefined, string]> = [
    // Trusting nobody: the peer, whatever the header says.
    ['false', '203.0.113.5', '192.0.2.1', '203.0.113.5'],
    ['0', '203.0.113.5', '192.0.2.1, 198.51.100.7', '203.0.113.5'],
    // One trusted hop (`true` = 1): the entry that proxy appended, never the forged ones left of it.
    ['true', '127.0.0.1', '198.51.100.7', '198.51.100.7'],
    ['1', '127.0.0.1', '192.0.2.1, 198.51.100.7', '198.51.100.7'],
    ['1', '127.0.0.1', '192.0.2.1,192.0.2.2,198.51.100.7', '198.51.100.7'],
    ['1', '127.0.0.1', undefined, '127.0.0.1'],
    // Two hops (a CDN in front of Caddy): the second entry from the right.
    ['2', '127.0.0.1', '192.0.2.1, 198.51.100.7, 203.0.113.9', '198.51.100.7'],
    // Fewer entries than trusted hops: the leftmost there is.
    ['2', '127.0.0.1', '198.51.100.7', '198.51.100.7'],
    // Trusted addresses: the walk goes left while the hop is one of them.
    ['127.0.0.1', '127.0.0.1', '192.0.2.1, 198.51.100.7', '198.51.100.7'],
    ['127.0.0.1,10.0.0.0/8', '127.0.0.1', '192.0.2.1, 198.51.100.7, 10.1.2.3', '198.51.100.7'],
    ['10.0.0.0/8', '127.0.0.1', '192.0.2.1', '127.0.0.1'],
    ['10.0.0.0/8', '10.0.0.1', '10.0.0.2, 10.0.0.3', '10.0.0.2'],
    ['::1', '::1', '2001:db8::1', '2001:db8::1'],
    // A dual-stack socket reports IPv4 peers IPv4-mapped: the same address to the list and in the answer.
    ['127.0.0.1', '::ffff:127.0.0.1', '198.51.100.7', '198.51.100.7'],
    ['false', '::ffff:203.0.113.5', undefined, '203.0.113.5'],
    // An entry that is not an address ends the walk at the proxy that passed it on.
    ['1', '127.0.0.1', '192.0.2.1, unknown', '127.0.0.1'],
    ['2', '127.0.0.1', 'not-an-ip, 198.51.100.7', '198.51.100.7'],
    ['1', '127.0.0.1', '', '127.0.0.1'],
    ['1', undefined, '198.51.100.7', 'unknown'],
    ['1', '127.0.0.1', '2001:DB8::AB', '2001:db8::ab'],
  ];
  for (const [trustProxy, peer, forwardedFor, expected] of table) {
    test(`TRUST_PROXY=${trustProxy}, peer ${peer}, X-Forwarded-For ${JSON.stringify(forwardedFor)} -> ${expected}`, () => {
      assert.equal(clientAddress(trust(trustProxy), peer, forwardedFor), expected);
    });
  }

  test('repeated X-Forwarded-For fields are one list', () => {
    assert.equal(
      clientAddress(trust('2'), '127.0.0.1', ['192.0.2.1', '198.51.100.7, 10.0.0.1']),
      '198.51.100.7',
    );
  });
});

describe('limitKey', () => {
  const table: Array<[string, string]> = [
    ['198.51.100.7', '198.51.100.7'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:aaaa::7', '2001:db8:1:2::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['unknown', 'unknown'],
  ];
  for (const [address, expected] of table) {
    test(`${address} -> ${expected}`, () => assert.equal(limitKey(address), expected));
  }
});

/** Code reading the field, the socket's peer, or Fastify's own view of them (`req.ip`, `req.ips`). */
const READS_ADDRESS = /headers\[['"]x-forwarded-for['"]\]|\.remoteAddress\b|\b(req|request)\.ips?\b/i;

test('only the two places handing a request to the rule read X-Forwarded-For or the socket peer', () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const p = join(dir, name);
      return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
    });
  const readers = sources('src')
    .filter((file) => !file.startsWith(join('src', 'client')) && !file.startsWith(join('src', 'cli')))
    .filter((file) => READS_ADDRESS.test(readFileSync(file, 'utf8')))
    .map((file) => relative('.', file));
  // The two transports hand their requests to the rule (src/core/client-address.ts) and read nothing else;
  // the site fast path reads its connection's peer once and hands it to the site server's analytics.
  // The TLS listener names the peer of a failed handshake in a debug line: no request exists yet, and the
  // address decides nothing there.
  assert.deepEqual(readers.sort(), [
    'src/http/client-address.ts',
    'src/serve/http1/connection.ts',
    'src/serve/site-server.ts',
    'src/serve/tls/listener.ts',
  ]);
});
