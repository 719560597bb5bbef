// Certificates on demand over ACME (CONTRACT "HTTPS") against Pebble on loopback: a custom domain
// verified by DNS gets one on its first handshake without a restart (HTTP-01 answered on the plain
// port); a name that may not have one gets no order; renewal by the sweeper with a moved clock; the CA
// down during issuance: a clean failure with sslError, then a retry that succeeds.

import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RENEW_BEFORE_MS, seal } from '../../src/core/certificates.js';
import {
  findTlsCertificate,
  insertAcmeChallenge,
  storeTlsCertificate,
} from '../../src/store/db/tables/tls-certificate.js';
import { freePort, rawRequest, signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { type Pebble, preparePebble } from '../helpers/pebble.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { deleteSite, seedSite } from '../helpers/seed.js';
import { handshake, issueCertificate, makeCa, tlsRequest } from '../helpers/tls.js';

const CNAME_TARGET = 'sites.acme-target.example';
const PAGE = '<!doctype html><h1>shop over its own certificate</h1>';

/** An account with a site, and `domain` verified by DNS and linked to it. */
export async function activeDomain(t: TestApp, dns: DnsPeer, domain: string, email: string): Promise<string> {
  const key = await signIn(t, email);
  const { slug } = assertPublished(await publish(t, { 'index.html': PAGE }, { key }));
  const added = await t.api('/api/v1/domains', { method: 'POST', key, body: { domain } });
  assert.equal(added.status, 201, added.text);
  const records = added.body.dns.records as Array<{ type: string; name: string; value: string }>;
  const txt = records.find((r) => r.type === 'TXT');
  assert.ok(txt);
  dns.records[txt.name] = { TXT: [txt.value] };
  dns.records[domain] = { CNAME: CNAME_TARGET };
  const verified = await t.api(`/api/v1/domains/${domain}/verify`, { method: 'POST', key });
  assert.equal(verified.body.status, 'active', verified.text);
  const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug, domain, location: '/' } });
  assert.equal(link.status, 201, link.text);
  // Pebble's resolver (the CA's view) wants the address itself.
  dns.records[domain] = { A: ['127.0.0.1'] };
  return key;
}

async function domainStatus(t: TestApp, key: string, domain: string) {
  const res = await t.api('/api/v1/domains', { key });
  return (res.body.domains as Array<{ domain: string; sslStatus: string; sslError?: string }>).find(
    (d) => d.domain === domain,
  );
}

describe('certificates on demand over ACME (Pebble)', { timeout: 240_000 }, () => {
  let t: TestApp;
  let dns: DnsPeer;
  let pebble: Pebble;
  let root: string;
  const SHOP = 'shop.acme-customer.example';
  const LATE = 'late.acme-customer.example';

  before(async () => {
    dns = await startDnsPeer({});
    const setup = await preparePebble({ dnsServer: dns.server });
    t = await startTestApp({
      DNS_SERVERS: dns.server,
      CNAME_TARGET,
      TLS_PORT: String(await freePort()),
      ACME_DIRECTORY_URL: setup.directoryUrl,
      ACME_EMAIL: 'ops@example.com',
      ACME_CA_FILE: setup.caFile,
    });
    pebble = await setup.start({ httpPort: t.port, tlsPort: t.tlsPort });
    root = await pebble.root();
  });

  after(async () => {
    await t?.close();
    await pebble?.close();
    await dns?.close();
  });

  test('a name that may not have a certificate fails the handshake and nothing is asked of the CA', async () => {
    const owner = await signIn(t, 'pending-owner@example.com');
    const pending = await t.api('/api/v1/domains', {
      method: 'POST',
      key: owner,
      body: { domain: 'pending.acme-other.example' },
    });
    assert.equal(pending.status, 201, pending.text);
    for (const name of ['unknown.acme-other.example', 'pending.acme-other.example', 'nosuchsite.localhost']) {
      const started = Date.now();
      const result = await handshake(t.tlsPort, name, { ca: root });
      assert.equal(result.ok, false, name);
      assert.ok(Date.now() - started < 5_000, 'refused at once');
    }
    assert.equal(pebble.orders(), 0, pebble.log());
    assert.equal(t.service.certificates?.ordersPlaced, 0);
    assert.equal((await domainStatus(t, owner, 'pending.acme-other.example'))?.sslStatus, 'pending');
  });

  test('a verified custom domain gets a certificate on its first handshake, without a restart', async () => {
    const key = await activeDomain(t, dns, SHOP, 'shop-owner@example.com');
    assert.equal((await domainStatus(t, key, SHOP))?.sslStatus, 'provisioning');
    // The chain verifies against Pebble's root (tlsRequest rejects an unverified peer).
    const res = await tlsRequest(t.tlsPort, { host: SHOP, path: '/', ca: root });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), PAGE);
    assert.equal(pebble.orders(), 1, pebble.log());
    assert.deepEqual(t.service.certificates?.challengesPublished, { 'http-01': 1, 'tls-alpn-01': 0 });
    assert.equal((await domainStatus(t, key, SHOP))?.sslStatus, 'active');
    // Served from memory from now on: no second order.
    const again = await handshake(t.tlsPort, SHOP, { ca: root });
    assert.equal(again.ok, true);
    assert.equal(pebble.orders(), 1);
    // The key is sealed at rest.
    const row = await findTlsCertificate(t.ctx.db.kysely, SHOP);
    assert.ok(row?.key_sealed && !row.key_sealed.includes('PRIVATE KEY'));
  });

  test('the plain port answers ACME HTTP-01 only for published tokens', async () => {
    const res = await rawRequest(t.port, {
      host: SHOP,
      path: '/.well-known/acme-challenge/abcdefghijklmnopqrstuvwxyz012345',
    });
    assert.equal(res.status, 404);
    const odd = await rawRequest(t.port, { host: SHOP, path: '/.well-known/acme-challenge/../../etc' });
    assert.equal(odd.status, 404);
  });

  test('the sweeper renews a certificate 30 days before it ends (moved clock)', async () => {
    const before = await findTlsCertificate(t.ctx.db.kysely, SHOP);
    assert.ok(before?.not_after);
    const first = await handshake(t.tlsPort, SHOP, { ca: root });
    const quiet = await sweepNow(t);
    assert.equal(quiet.certificatesRenewed, 0, 'nothing due yet');
    t.clock.advance(before.not_after - RENEW_BEFORE_MS - t.clock.now() + 3_600_000);
    const report = await sweepNow(t);
    assert.equal(report.certificatesRenewed, 1);
    assert.equal(pebble.orders(), 2);
    const renewed = await handshake(t.tlsPort, SHOP, { ca: root });
    assert.equal(renewed.ok, true);
    assert.notEqual(renewed.peer?.serialNumber, first.peer?.serialNumber, 'the new certificate is served');
    const after = await findTlsCertificate(t.ctx.db.kysely, SHOP);
    assert.ok(after?.issued_at && before.issued_at && after.issued_at > before.issued_at);
  });

  test('the CA down during issuance: the handshake fails cleanly, the order is retried, the site served after', async () => {
    const key = await activeDomain(t, dns, LATE, 'late-owner@example.com');
    await pebble.stop();
    const started = Date.now();
    const down = await handshake(t.tlsPort, LATE, { ca: root });
    assert.equal(down.ok, false);
    assert.ok(Date.now() - started < 20_000, 'bounded');
    const status = await domainStatus(t, key, LATE);
    assert.equal(status?.sslStatus, 'provisioning');
    assert.match(status?.sslError ?? '', /ACME directory .* did not answer/, 'the last error is shown');
    await pebble.start();
    root = await pebble.root();
    // Within the backoff, handshakes fail at once without an order.
    const orders = pebble.orders();
    assert.equal((await handshake(t.tlsPort, LATE, { ca: root })).ok, false);
    assert.equal(pebble.orders(), orders);
    // After it, the sweeper retries; the site is served.
    t.clock.advance(5 * 60_000);
    // (SHOP, renewed on the real clock's terms, is due again on the moved one: at least LATE's order.)
    assert.ok((await sweepNow(t)).certificatesRenewed >= 1);
    const res = await tlsRequest(t.tlsPort, { host: LATE, path: '/', ca: root });
    assert.equal(res.status, 200);
    const after = await domainStatus(t, key, LATE);
    assert.equal(after?.sslStatus, 'active');
    assert.equal(after?.sslError, undefined);
    // Removed: its stored certificate is no longer served (the change event drops the cached one).
    const removed = await t.api(`/api/v1/domains/${LATE}`, { method: 'DELETE', key });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await handshake(t.tlsPort, LATE, { ca: root })).ok, false);
  });
});

describe('TLS-ALPN-01 answered on the TLS port (Pebble)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let dns: DnsPeer;
  let pebble: Pebble;
  const SHOP = 'alpn.acme-customer.example';

  before(async () => {
    dns = await startDnsPeer({});
    const setup = await preparePebble({ dnsServer: dns.server });
    t = await startTestApp(
      {
        DNS_SERVERS: dns.server,
        CNAME_TARGET,
        TLS_PORT: String(await freePort()),
        ACME_DIRECTORY_URL: setup.directoryUrl,
        ACME_CA_FILE: setup.caFile,
      },
      { acmeChallengePriority: ['tls-alpn-01'] },
    );
    pebble = await setup.start({ httpPort: t.port, tlsPort: t.tlsPort });
  });

  after(async () => {
    await t?.close();
    await pebble?.close();
    await dns?.close();
  });

  test('a verified custom domain gets its certificate through TLS-ALPN-01', async () => {
    await activeDomain(t, dns, SHOP, 'alpn-owner@example.com');
    const res = await tlsRequest(t.tlsPort, { host: SHOP, path: '/', ca: await pebble.root() });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), PAGE);
    assert.deepEqual(t.service.certificates?.challengesPublished, { 'http-01': 0, 'tls-alpn-01': 1 });
  });
});

describe('the plain port with an https BASE_URL and on-demand certificates', () => {
  let t: TestApp;

  before(async () => {
    const tlsPort = await freePort();
    t = await startTestApp({
      BASE_URL: `https://app.acme-plain.example:${tlsPort}`,
      SITE_DOMAIN: 'sites.acme-plain.example',
      TLS_PORT: String(tlsPort),
      // Never contacted here: the challenge below is stored by hand.
      ACME_DIRECTORY_URL: 'https://127.0.0.1:9/dir',
    });
  });

  after(() => t?.close());

  test('answers HTTP-01 challenges on any host before redirecting everything else to https', async () => {
    const token = 'tok_abcdefghijklmnopqrstuvwxyz0123';
    await insertAcmeChallenge(t.ctx.db.kysely, {
      id: token,
      name: 'shop.acme-plain.example',
      kind: 'http-01',
      value: `${token}.thumbprint`,
      key_pem: null,
      created_at: t.clock.now(),
    });
    for (const host of ['shop.acme-plain.example', 'x.sites.acme-plain.example', 'app.acme-plain.example']) {
      const res = await rawRequest(t.port, { host, path: `/.well-known/acme-challenge/${token}` });
      assert.equal(res.status, 200, host);
      assert.equal(res.body.toString(), `${token}.thumbprint`);
    }
    const unknown = await rawRequest(t.port, {
      host: 'shop.acme-plain.example',
      path: '/.well-known/acme-challenge/tok_unknownunknownunknown000',
    });
    assert.equal(unknown.status, 404);
    const other = await rawRequest(t.port, {
      host: 'x.sites.acme-plain.example',
      path: '/.well-known/other',
    });
    assert.equal(other.status, 301);
    assert.equal(other.headers.location, `https://x.sites.acme-plain.example:${t.tlsPort}/.well-known/other`);
  });

  test('a site host stops getting its stored certificate once the site is deleted', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': '<h1>soon gone</h1>' } });
    const name = `${slug}.sites.acme-plain.example`;
    const ca = makeCa('Stored site CA');
    const cert = issueCertificate(ca, [name]);
    await storeTlsCertificate(t.ctx.db.kysely, {
      name,
      cert_pem: cert.chainPem,
      key_sealed: seal(t.ctx.keys.tlsKeys, name, cert.keyPem),
      not_after: t.clock.now() + 86_400_000,
      issued_at: t.clock.now(),
    });
    assert.equal((await handshake(t.tlsPort, name, { ca: ca.certPem })).ok, true);
    await deleteSite(t.ctx, slug);
    assert.equal((await handshake(t.tlsPort, name, { ca: ca.certPem })).ok, false);
  });

  test('a stored certificate that does not load fails its handshake at once (no hang), logged', async () => {
    // The BASE_URL host may always have one (a name the TLS ask allows).
    const name = 'app.acme-plain.example';
    await storeTlsCertificate(t.ctx.db.kysely, {
      name,
      cert_pem: '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n',
      key_sealed: seal(t.ctx.keys.tlsKeys, name, 'not a key'),
      not_after: t.clock.now() + 86_400_000,
      issued_at: t.clock.now(),
    });
    const started = Date.now();
    const result = await handshake(t.tlsPort, name, { timeoutMs: 10_000 });
    assert.equal(result.ok, false);
    assert.notEqual(result.error, 'timeout');
    assert.ok(Date.now() - started < 5_000);
    assert.ok(t.logs.some((l) => l.includes('a stored certificate does not load')));
  });
});

describe('a CA that accepts connections and never answers', () => {
  let t: TestApp;
  let dns: DnsPeer;
  let silent: Server;
  const sockets = new Set<Socket>();

  before(async () => {
    dns = await startDnsPeer({});
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t = await startTestApp(
      {
        DNS_SERVERS: dns.server,
        CNAME_TARGET,
        TLS_PORT: String(await freePort()),
        ACME_DIRECTORY_URL: `https://127.0.0.1:${(silent.address() as AddressInfo).port}/dir`,
      },
      { tlsHandshakeWaitMs: 1_500 },
    );
  });

  after(async () => {
    // Cut the hanging connections: the order fails at once instead of at its 30 s request timeout.
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
    await t?.close();
    await dns?.close();
  });

  test('handshakes for a name being ordered wait a bounded time, then fail cleanly; one order for all', async () => {
    await activeDomain(t, dns, 'slow.acme-customer.example', 'slow-owner@example.com');
    const started = Date.now();
    const results = await Promise.all(
      [1, 2, 3].map(() => handshake(t.tlsPort, 'slow.acme-customer.example', { timeoutMs: 10_000 })),
    );
    const took = Date.now() - started;
    for (const r of results) {
      assert.equal(r.ok, false);
      assert.notEqual(r.error, 'timeout', 'the server fails the handshake itself');
    }
    assert.ok(took >= 1_400 && took < 5_000, `waited ${took} ms`);
    assert.equal(t.service.certificates?.ordersPlaced, 1, 'the three handshakes joined one order');
    // The service still answers.
    assert.equal((await t.api('/healthz')).status, 200);
  });
});
