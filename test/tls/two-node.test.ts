// Two service processes on one database and Redis, each with its own TLS listener: the first handshake
// for a custom domain on both at once places one order with the CA (the lease); the other node waits
// for the stored certificate and serves it too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/app.js';
import {
  type Cluster,
  postJson,
  publishOn,
  type ServiceNode,
  signInOn,
  startCluster,
} from '../helpers/cluster.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { type Pebble, type PebbleSetup, preparePebble } from '../helpers/pebble.js';
import { handshake, tlsRequest } from '../helpers/tls.js';

const CNAME_TARGET = 'sites.two-node-target.example';
const DOMAIN = 'shop.two-node-customer.example';
const PAGE = '<!doctype html><h1>one certificate, two nodes</h1>';

describe('two nodes share one certificate and only one asks the CA', { timeout: 180_000 }, () => {
  let cluster: Cluster;
  let dns: DnsPeer;
  let setup: PebbleSetup;
  let pebble: Pebble;
  let a: ServiceNode;
  let b: ServiceNode;
  let tlsA: number;
  let tlsB: number;

  before(async () => {
    dns = await startDnsPeer({});
    setup = await preparePebble({ dnsServer: dns.server });
    cluster = await startCluster({
      env: {
        DNS_SERVERS: dns.server,
        CNAME_TARGET,
        ACME_DIRECTORY_URL: setup.directoryUrl,
        ACME_CA_FILE: setup.caFile,
        LOG_LEVEL: 'info',
      },
    });
    tlsA = await freePort();
    tlsB = await freePort();
    [a, b] = await Promise.all([
      cluster.startNode({ TLS_PORT: String(tlsA) }),
      cluster.startNode({ TLS_PORT: String(tlsB) }),
    ]);
    // The CA validates HTTP-01 on A's plain port; B's challenges are in the shared database.
    pebble = await setup.start({ httpPort: a.port, tlsPort: tlsA });
  });

  after(async () => {
    await cluster?.dispose();
    await pebble?.close();
    await dns?.close();
  });

  test('handshakes on both nodes at once: one order, both serve the certificate', async () => {
    const key = await signInOn(a, 'two-node-shop@example.com');
    const slug = await publishOn(a, key, { 'index.html': PAGE });
    const added = await postJson(a, '/api/v1/domains', { domain: DOMAIN }, key);
    assert.equal(added.status, 201);
    const records = (
      (await added.json()) as { dns: { records: Array<{ type: string; name: string; value: string }> } }
    ).dns.records;
    const txt = records.find((r) => r.type === 'TXT');
    assert.ok(txt);
    dns.records[txt.name] = { TXT: [txt.value] };
    dns.records[DOMAIN] = { CNAME: CNAME_TARGET };
    const verified = await postJson(a, `/api/v1/domains/${DOMAIN}/verify`, {}, key);
    assert.equal(verified.status, 200);
    const link = await postJson(a, '/api/v1/links', { slug, domain: DOMAIN, location: '/' }, key);
    assert.equal(link.status, 201);
    dns.records[DOMAIN] = { A: ['127.0.0.1'] };

    const root = await pebble.root();
    // B first by a hair: whichever node orders, the CA validates through A's plain port.
    const [onB, onA] = await Promise.all([
      tlsRequest(tlsB, { host: DOMAIN, path: '/', ca: root }),
      tlsRequest(tlsA, { host: DOMAIN, path: '/', ca: root }),
    ]);
    assert.equal(onA.status, 200, a.output.join(''));
    assert.equal(onB.status, 200, b.output.join(''));
    assert.equal(onA.body.toString(), PAGE);
    assert.equal(pebble.orders(), 1, pebble.log());
    const [hA, hB] = await Promise.all([
      handshake(tlsA, DOMAIN, { ca: root }),
      handshake(tlsB, DOMAIN, { ca: root }),
    ]);
    assert.equal(hA.peer?.serialNumber, hB.peer?.serialNumber, 'the same certificate');
    assert.equal(pebble.orders(), 1);
  });
});
