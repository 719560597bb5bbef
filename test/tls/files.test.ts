// TLS terminated by the service with certificate files (TLS_PORT, TLS_CERT_FILE, TLS_KEY_FILE): served
// for the names they cover and nothing else, replaced on disk and picked up without a restart; the
// house profile (TLS 1.2 floor, http/1.1, resumption); the plain port redirecting to https with an
// https BASE_URL; HSTS on the BASE_URL host.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { composeService } from '../../src/compose.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { insertDomain } from '../../src/store/db/tables/domain.js';
import { freePort, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite } from '../helpers/seed.js';
import { handshake, issueCertificate, makeCa, type TestCa, tlsRequest } from '../helpers/tls.js';

const SITES = 'sites.test';
const BASE = 'app.test';
/** A custom domain the operator put into the certificate files. */
const FILE_DOMAIN = 'shop.files-customer.example';

describe('TLS with certificate files', () => {
  let t: TestApp;
  let ca: TestCa;
  let dir: string;
  let slug: string;
  let tlsPort: number;
  const page = `<!doctype html><title>TLS</title>${'<p>over TLS</p>\n'.repeat(700)}`;

  before(async () => {
    ca = makeCa();
    dir = mkdtempSync(join(tmpdir(), 'slipway-tls-files-'));
    const cert = issueCertificate(ca, [`*.${SITES}`, BASE, FILE_DOMAIN]);
    writeFileSync(join(dir, 'cert.pem'), cert.chainPem);
    writeFileSync(join(dir, 'key.pem'), cert.keyPem);
    tlsPort = await freePort();
    t = await startTestApp(
      {
        BASE_URL: `https://${BASE}:${tlsPort}`,
        SITE_DOMAIN: SITES,
        TLS_PORT: String(tlsPort),
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
      },
      { tlsWatchIntervalMs: 100 },
    );
    ({ slug } = await seedSite(t.ctx, { files: { 'index.html': page } }));
  });

  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a site host the wildcard covers is served over TLS by the site fast path', async () => {
    const before = t.service.app.server.listenerCount('connection');
    assert.equal(before, 1);
    const res = await tlsRequest(t.tlsPort, { host: `${slug}.${SITES}`, path: '/', ca: ca.certPem });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), page);
    // Twice more on one connection each: the memo answers on TLS sockets too.
    for (let i = 0; i < 2; i++) {
      const again = await tlsRequest(t.tlsPort, { host: `${slug}.${SITES}`, path: '/', ca: ca.certPem });
      assert.equal(again.body.toString(), page);
    }
    const metrics = await tlsRequest(t.tlsPort, { host: BASE, path: '/metrics', ca: ca.certPem });
    assert.match(metrics.body.toString(), /slipway_site_fast_path_memo_hits_total [1-9]/);
  });

  test('a custom domain the files cover is served from them, and its sslStatus becomes active', async () => {
    const key = await signIn(t, 'files-domain@example.com');
    const account = await t.ctx.db.kysely
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', 'files-domain@example.com')
      .executeTakeFirstOrThrow();
    await insertDomain(t.ctx.db.kysely, {
      domain: FILE_DOMAIN,
      account_id: account.id,
      status: 'active',
      token: 'files-token',
      created_at: t.clock.now(),
      verified_at: t.clock.now(),
      tls_requested_at: null,
      tls_error: null,
    });
    const status = async () =>
      ((await t.api('/api/v1/domains', { key })).body.domains as Array<{ sslStatus: string }>)[0]?.sslStatus;
    assert.equal(await status(), 'provisioning');
    assert.equal((await handshake(t.tlsPort, FILE_DOMAIN, { ca: ca.certPem })).ok, true);
    const until = Date.now() + 5_000;
    while ((await status()) !== 'active' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await status(), 'active');
  });

  test('the BASE_URL host is served over TLS with Strict-Transport-Security', async () => {
    const res = await tlsRequest(t.tlsPort, { host: BASE, path: '/healthz', ca: ca.certPem });
    assert.equal(res.status, 200);
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000');
  });

  test('a name no certificate covers fails the handshake (no default certificate)', async () => {
    const other = await handshake(t.tlsPort, 'other.example', { ca: ca.certPem });
    assert.equal(other.ok, false);
    // A deeper name than the wildcard covers, and no SNI at all, fail alike.
    assert.equal((await handshake(t.tlsPort, `a.b.${SITES}`, { ca: ca.certPem })).ok, false);
    const noSni = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: t.tlsPort, rejectUnauthorized: false });
      s.once('secureConnect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    assert.equal(noSni, false);
  });

  test('TLS 1.2 and 1.3 only, ALPN http/1.1, sessions resumed', async () => {
    // Nagle off, as node:http's and node:https's servers have it.
    assert.equal((t.service.tls?.server as unknown as { noDelay?: boolean } | undefined)?.noDelay, true);
    const v13 = await handshake(t.tlsPort, BASE, { ca: ca.certPem });
    assert.equal(v13.protocol, 'TLSv1.3');
    assert.equal(v13.alpn, 'http/1.1');
    const h2only = await handshake(t.tlsPort, BASE, { ca: ca.certPem, ALPNProtocols: ['h2'] });
    assert.equal(h2only.ok, false, 'no h2');
    const v12 = await handshake(t.tlsPort, BASE, { ca: ca.certPem, maxVersion: 'TLSv1.2' });
    assert.equal(v12.protocol, 'TLSv1.2');
    const v11 = await handshake(t.tlsPort, BASE, {
      ca: ca.certPem,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
    });
    assert.equal(v11.ok, false);
    // Resumption (TLS 1.2 tickets: the session is known on 'secureConnect').
    const session = await new Promise<Buffer>((resolve, reject) => {
      const s = connect({
        host: '127.0.0.1',
        port: t.tlsPort,
        servername: BASE,
        ca: ca.certPem,
        maxVersion: 'TLSv1.2',
      });
      s.once('secureConnect', () => {
        const got = s.getSession();
        s.end();
        if (got) resolve(got);
        else reject(new Error('no session'));
      });
      s.once('error', reject);
    });
    const reused = await new Promise<boolean>((resolve, reject) => {
      const s = connect({
        host: '127.0.0.1',
        port: t.tlsPort,
        servername: BASE,
        ca: ca.certPem,
        maxVersion: 'TLSv1.2',
        session,
      });
      s.once('secureConnect', () => {
        const r = s.isSessionReused();
        s.end();
        resolve(r);
      });
      s.once('error', reject);
    });
    assert.equal(reused, true);
  });

  test('the plain port redirects to https (301, BASE_URL port) and serves nothing else', async () => {
    const site = await rawRequest(t.port, { host: `${slug}.${SITES}`, path: '/a?b=1' });
    assert.equal(site.status, 301);
    assert.equal(site.headers.location, `https://${slug}.${SITES}:${tlsPort}/a?b=1`);
    const api = await rawRequest(t.port, { host: `${BASE}:${t.port}`, path: '/healthz', method: 'POST' });
    assert.equal(api.status, 301);
    assert.equal(api.headers.location, `https://${BASE}:${tlsPort}/healthz`);
    assert.equal(api.headers['strict-transport-security'], undefined, 'no HSTS over plain HTTP');
    const bad = await rawRequest(t.port, { host: 'a/b', path: '/' });
    assert.equal(bad.status, 400);
    // An address has no certificate, so https cannot serve it: health checks by address stay plain.
    const byAddress = await rawRequest(t.port, { host: `127.0.0.1:${t.port}`, path: '/healthz' });
    assert.equal(byAddress.status, 200);
    assert.equal((await rawRequest(t.port, { host: '[::1]', path: '/healthz' })).status, 200);
  });

  test('a BASE_URL whose host is an address is redirected too (CONTRACT: every other request)', async () => {
    const c = makeCa('Address CA');
    const d = mkdtempSync(join(tmpdir(), 'slipway-tls-addr-'));
    const cert = issueCertificate(c, [`*.${SITES}`]);
    writeFileSync(join(d, 'cert.pem'), cert.chainPem);
    writeFileSync(join(d, 'key.pem'), cert.keyPem);
    const port = await freePort();
    const app = await startTestApp({
      BASE_URL: `https://127.0.0.1:${port}`,
      SITE_DOMAIN: SITES,
      TLS_PORT: String(port),
      TLS_CERT_FILE: join(d, 'cert.pem'),
      TLS_KEY_FILE: join(d, 'key.pem'),
    });
    try {
      const res = await rawRequest(app.port, { host: `127.0.0.1:${app.port}`, path: '/healthz' });
      assert.equal(res.status, 301);
      assert.equal(res.headers.location, `https://127.0.0.1:${port}/healthz`);
      // Another address is still a health check by address, answered plain.
      assert.equal((await rawRequest(app.port, { host: '[::1]', path: '/healthz' })).status, 200);
    } finally {
      await app.close();
      rmSync(d, { recursive: true, force: true });
    }
  });

  test('certificate files replaced on disk (by rename) are served without a restart', async () => {
    const first = await handshake(t.tlsPort, `${slug}.${SITES}`, { ca: ca.certPem });
    const ca2 = makeCa('Second CA');
    const next = issueCertificate(ca2, [`*.${SITES}`, BASE, 'extra.example']);
    writeFileSync(join(dir, 'cert.pem.new'), next.chainPem);
    writeFileSync(join(dir, 'key.pem.new'), next.keyPem);
    renameSync(join(dir, 'key.pem.new'), join(dir, 'key.pem'));
    renameSync(join(dir, 'cert.pem.new'), join(dir, 'cert.pem'));
    const until = Date.now() + 10_000;
    let now = first;
    while (Date.now() < until) {
      now = await handshake(t.tlsPort, `${slug}.${SITES}`, { ca: ca2.certPem });
      if (now.ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(now.ok, true, now.error);
    assert.notEqual(now.peer?.serialNumber, first.peer?.serialNumber);
    assert.equal((await handshake(t.tlsPort, 'extra.example', { ca: ca2.certPem })).ok, true);
    // A half-written replacement (a key that does not match) keeps the last good pair.
    writeFileSync(join(dir, 'key.pem'), issueCertificate(ca2, ['x.example']).keyPem);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal((await handshake(t.tlsPort, `${slug}.${SITES}`, { ca: ca2.certPem })).ok, true);
    writeFileSync(join(dir, 'key.pem'), next.keyPem);
  });
});

describe('TLS configuration', () => {
  test('unreadable or mismatched certificate files stop start-up naming the variable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'slipway-tls-bad-'));
    try {
      const ca = makeCa();
      const a = issueCertificate(ca, ['a.example']);
      const b = issueCertificate(ca, ['b.example']);
      writeFileSync(join(dir, 'cert.pem'), a.chainPem);
      writeFileSync(join(dir, 'key.pem'), b.keyPem);
      writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
      const base = {
        DATA_DIR: dir,
        SECRETS_KEY: randomBytes(32).toString('base64'),
        TLS_PORT: String(await freePort()),
      };
      const cases: Array<[Record<string, string>, string]> = [
        [{ TLS_CERT_FILE: join(dir, 'missing.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }, 'TLS_CERT_FILE'],
        [{ TLS_CERT_FILE: join(dir, 'junk.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }, 'TLS_CERT_FILE'],
        [{ TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') }, 'TLS_KEY_FILE'],
      ];
      for (const [env, variable] of cases) {
        await assert.rejects(composeService(loadConfig({ ...base, ...env })), (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.equal(err.variable, variable);
          return true;
        });
      }
      assert.throws(() => loadConfig({ ...base, TLS_CERT_FILE: join(dir, 'cert.pem') }), /TLS_KEY_FILE/);
      assert.throws(
        () => loadConfig({ DATA_DIR: dir, ACME_DIRECTORY_URL: 'https://acme.example/dir' }),
        /TLS_PORT/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
