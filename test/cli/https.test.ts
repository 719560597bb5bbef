// `slipway` against a service on https (TLS_PORT with certificate files): the key, the manifest, the
// uploads and a one-request archive all go over TLS, and the certificate is verified (a CA the command
// is not given fails with a clear network error, nothing published). The client loads node:https only
// for https addresses (src/client/api.ts `request`), so this is the test of that path.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';
import { issueCertificate, makeCa } from '../helpers/tls.js';

const SITES = 'sites.test';

describe('slipway over https', () => {
  let t: TestApp;
  let cli: CliEnv;
  let dir: string;
  let server: string;

  before(async () => {
    const ca = makeCa();
    dir = mkdtempSync(join(tmpdir(), 'slipway-cli-https-'));
    const cert = issueCertificate(ca, [`*.${SITES}`, 'localhost']);
    writeFileSync(join(dir, 'cert.pem'), cert.chainPem);
    writeFileSync(join(dir, 'key.pem'), cert.keyPem);
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    const tlsPort = await freePort();
    server = `https://localhost:${tlsPort}`;
    t = await startTestApp({
      BASE_URL: server,
      SITE_DOMAIN: SITES,
      TLS_PORT: String(tlsPort),
      TLS_CERT_FILE: join(dir, 'cert.pem'),
      TLS_KEY_FILE: join(dir, 'key.pem'),
    });
    cli = await cliEnv(server, {
      SLIPWAY_API_KEY: await signIn(t, 'https-cli@example.com'),
      NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
    });
  });

  const siteCount = async () =>
    Number(
      (
        await t.ctx.db.kysely
          .selectFrom('sites')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  after(async () => {
    await t?.close();
    await cli?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('publish, a one-file republish and an archive deploy go over TLS', async () => {
    const site = mkdtempSync(join(tmpdir(), 'slipway-cli-https-site-'));
    try {
      writeFileSync(join(site, 'index.html'), '<h1>over TLS</h1>');
      writeFileSync(join(site, 'about.html'), '<h1>about</h1>');
      const first = await cli.run(['publish', site, '--json']);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(first.json.uploaded, 2);
      assert.match(first.json.siteUrl, new RegExp(`^https://${first.json.slug}\\.${SITES}`));

      writeFileSync(join(site, 'about.html'), '<h1>about, again</h1>');
      const again = await cli.run(['publish', site, '--json']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.json.slug, first.json.slug);
      assert.deepEqual([again.json.uploaded, again.json.skipped], [1, 1]);

      writeFileSync(join(site, 'about.html'), '<h1>about, packed</h1>');
      const packed = await cli.run(['publish', site, '--archive', '--json']);
      assert.equal(packed.code, 0, packed.stderr);
      assert.equal(packed.json.slug, first.json.slug);

      const listed = await cli.run(['info', first.json.slug, '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.json.slug, first.json.slug);
    } finally {
      rmSync(site, { recursive: true, force: true });
    }
  });

  test('a certificate the command cannot verify stops it with a network error', async () => {
    const site = mkdtempSync(join(tmpdir(), 'slipway-cli-https-site-'));
    try {
      writeFileSync(join(site, 'index.html'), '<h1>never sent</h1>');
      const before = await siteCount();
      const res = await cli.run(['publish', site, '--json'], { env: { NODE_EXTRA_CA_CERTS: '' } });
      assert.notEqual(res.code, 0);
      assert.equal(res.json.code, 'NETWORK_ERROR', res.stdout);
      assert.match(res.json.error, /certificate/i);
      assert.equal(await siteCount(), before, 'nothing published');
    } finally {
      rmSync(site, { recursive: true, force: true });
    }
  });
});
