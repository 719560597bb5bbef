// The secret scan at finalize through real HTTP (spec "finalize", SECRET_DETECTED, "Expected remediation
// flow"), the remediation flow end to end against a real HTTPS upstream standing in for api.stripe.com,
// and the browser builds of popular front-end packages publishing without a detection.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, type Files, manifestOf, publish, update } from '../helpers/publish.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { siteRequest } from '../serve/site-client.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');

/** A page with a live Stripe key inline, on line 6. */
function leakyPage(stripeKey: string): string {
  return [
    '<!doctype html>',
    '<html><head><title>Shop</title></head>',
    '<body>',
    '<button id="pay">Pay</button>',
    '<script>',
    `  const STRIPE_KEY = "${stripeKey}";`,
    "  document.getElementById('pay').onclick = () =>",
    "    fetch('https://api.stripe.com/v1/charges', { method: 'POST', headers: { Authorization: 'Bearer ' + STRIPE_KEY } });",
    '</script>',
    '</body></html>',
  ].join('\n');
}

describe('finalize with exposed secrets', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'scan@example.com');
  });
  after(() => t.close());

  test('POST /api/v1/publish/:slug/finalize answers 400 SECRET_DETECTED with the spec fields; the site does not go live', async () => {
    const stripeKey = `sk_live_${randomKey(32)}`;
    const files: Files = {
      'index.html': leakyPage(stripeKey),
      'js/config.js': `export const config = {\n  name: "shop",\n  openai: "sk-proj-${randomKey(64)}",\n};\n`,
      'img/logo.png': { body: Buffer.from(`\x89PNG sk_live_${randomKey(32)}`), contentType: 'image/png' },
    };
    const out = await publish(t, files, { key });
    const res = out.finalize!;
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.code, 'SECRET_DETECTED');
    assert.equal(res.body.status, 400);
    assert.equal(typeof res.body.error, 'string');
    const detected = [...res.body.detectedSecrets].sort((a, b) => a.path.localeCompare(b.path));
    assert.deepEqual(detected, [
      {
        path: 'index.html',
        type: 'stripe_secret_key',
        line: 6,
        suggestedVariableName: 'STRIPE_SECRET_KEY',
        suggestedProxyHosts: ['api.stripe.com'],
      },
      {
        path: 'js/config.js',
        type: 'openai_api_key',
        line: 3,
        suggestedVariableName: 'OPENAI_API_KEY',
        suggestedProxyHosts: ['api.openai.com'],
      },
    ]);
    assert.deepEqual(res.body.remediation.suggestedVariableNames.sort(), [
      'OPENAI_API_KEY',
      'STRIPE_SECRET_KEY',
    ]);
    assert.deepEqual(res.body.remediation.suggestedProxyHosts.sort(), ['api.openai.com', 'api.stripe.com']);
    assert.ok(res.body.remediation.steps.length >= 3);
    assert.ok(res.body.remediation.steps.every((s: unknown) => typeof s === 'string'));
    // Never the value, not even the binary file's (binaries are not scanned).
    assert.ok(!res.text.includes(stripeKey.slice(8)), 'the secret is echoed');
    assert.ok(!t.logs.join('\n').includes(stripeKey.slice(8)), 'the secret was logged');

    // Not live; the pending version stays, and finalizing it again is refused the same way.
    assert.equal((await siteRequest(t, out.slug, '/')).status, 404);
    const details = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(details.body.status, 'pending');
    const again = await t.api(`/api/v1/publish/${out.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: out.versionId },
    });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'SECRET_DETECTED');
  });

  test('an anonymous site with a secret is refused too', async () => {
    const out = await publish(t, { 'index.html': leakyPage(`sk_test_${randomKey(30)}`) });
    assert.equal(out.finalize?.status, 400);
    assert.equal(out.finalize?.body.code, 'SECRET_DETECTED');
    assert.equal(out.finalize?.body.detectedSecrets[0].type, 'stripe_secret_key');
  });

  test('each blob is scanned once: a republish of the same bytes reads the stored result', async () => {
    const files: Files = {
      'index.html': `<h1>clean ${randomKey(8)}</h1>`,
      'app.js': `console.log(${Date.now()})`,
    };
    const first = assertPublished(await publish(t, files, { key }));
    const count = async () =>
      (await t.ctx.db.kysely.selectFrom('blob_scans').select('hash').execute()).length;
    const before = await count();
    // A second site with the same bytes (uploaded again, not skipped) adds no scan result.
    assertPublished(await publish(t, files, { key }));
    assert.equal(await count(), before);
    // Files skipped by hash on update are not uploaded and cost nothing either; the update still passes.
    const upd = await update(t, key, first.slug, { ...files, 'new.txt': 'hello' });
    assert.equal(upd.finalize?.status, 200, upd.finalize?.text);
    assert.equal(await count(), before + 1);
  });

  test('a file stored before the scanner (no stored result) is scanned at finalize', async () => {
    const leak = `const token = "ghp_${randomKey(36)}";\n`;
    const first = assertPublished(
      await publish(t, { 'index.html': '<h1>x</h1>', 'a.js': 'let a = 1;' }, { key }),
    );
    // Upload the leaky bytes under a name the scanner skips (binary), then reuse them as a .js file.
    const bin = await publish(
      t,
      { 'data.bin': { body: leak, contentType: 'application/octet-stream' } },
      { key },
    );
    assert.equal(bin.finalize?.status, 200, bin.finalize?.text);
    const upd = await update(t, key, first.slug, { 'index.html': '<h1>x</h1>', 'b.js': leak });
    assert.equal(upd.uploads.length, 0, 'the bytes should have been skipped by hash');
    assert.equal(upd.finalize?.status, 400, upd.finalize?.text);
    assert.equal(upd.finalize?.body.detectedSecrets[0].type, 'github_token');
    assert.equal(upd.finalize?.body.detectedSecrets[0].path, 'b.js');
  });
});

describe('the remediation flow, end to end', () => {
  let dns: DnsPeer;
  let upstream: Upstream;
  let t: TestApp;
  before(async () => {
    // api.stripe.com is this test's HTTPS server on loopback (its DNS answer and certificate say so).
    dns = await startDnsPeer({ 'api.stripe.com': { A: ['127.0.0.1'] } });
    upstream = await startUpstream(['api.stripe.com']);
    t = await startTestApp(
      { PROXY_ENABLED: 'true', PROXY_ALLOW_PRIVATE_ADDRESSES: 'true', DNS_SERVERS: dns.server },
      { proxyCa: upstream.ca },
    );
  });
  after(async () => {
    await t.close();
    await upstream.close();
    await dns.close();
  });

  test('blocked page -> variable + allowed host -> page calls the proxy -> live, and the call carries the secret', async () => {
    const key = await signIn(t, 'remediate@example.com');
    const stripeKey = `sk_live_${randomKey(40)}`;
    const blocked = await publish(t, { 'index.html': leakyPage(stripeKey), 'style.css': 'body{}' }, { key });
    assert.equal(blocked.finalize?.status, 400);
    const { detectedSecrets, remediation } = blocked.finalize!.body;
    assert.equal(detectedSecrets.length, 1);
    const slug = blocked.slug;

    // 1. The secret becomes a variable under the suggested name; 2. the suggested host is approved.
    const [name] = remediation.suggestedVariableNames;
    assert.equal(name, 'STRIPE_SECRET_KEY');
    const vars = await t.api(`/api/v1/publish/${slug}/variables`, {
      method: 'PUT',
      key,
      body: { [name]: stripeKey },
    });
    assert.equal(vars.status, 200, vars.text);
    const hosts = await t.api(`/api/v1/publish/${slug}/proxy-hosts`, {
      method: 'PUT',
      key,
      body: { hosts: remediation.suggestedProxyHosts },
    });
    assert.deepEqual(hosts.body, { ok: true, stored: ['api.stripe.com'] });

    // 3. The published copy calls the proxy with a placeholder instead of the key.
    const fixedPage = leakyPage('unused').replace(
      /const STRIPE_KEY = .*\n[\s\S]*<\/script>/,
      [
        `fetch('${t.url}/api/v1/proxy/${slug}', { method: 'POST', headers: { 'Content-Type': 'application/json' },`,
        `  body: JSON.stringify({ url: 'https://api.stripe.com:${upstream.port}/v1/charges', method: 'POST',`,
        "    headers: { Authorization: 'Bearer {{STRIPE_SECRET_KEY}}' }, body: 'amount=100' }) });",
        '</script>',
      ].join('\n'),
    );
    assert.ok(!fixedPage.includes('sk_live_'));
    const fixed = await update(t, key, slug, { 'index.html': fixedPage, 'style.css': 'body{}' });
    assert.equal(fixed.uploads.length, 1, 'only the changed page is uploaded');
    assert.equal(fixed.finalize?.status, 200, fixed.finalize?.text);

    // 4. The served page holds no secret.
    const served = await siteRequest(t, slug, '/');
    assert.equal(served.status, 200);
    assert.ok(served.text.includes('{{STRIPE_SECRET_KEY}}'));
    assert.ok(!served.text.includes(stripeKey));

    // 5. The call the page makes reaches the upstream with the secret substituted.
    const call = await t.api(`/api/v1/proxy/${slug}`, {
      method: 'POST',
      headers: { origin: `http://${slug}.localhost:${t.port}` },
      body: {
        url: `https://api.stripe.com:${upstream.port}/v1/charges`,
        method: 'POST',
        headers: { Authorization: 'Bearer {{STRIPE_SECRET_KEY}}' },
        body: 'amount=100',
      },
    });
    assert.equal(call.status, 200, call.text);
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]!.headers.authorization, `Bearer ${stripeKey}`);
    assert.equal(upstream.requests[0]!.body, 'amount=100');
    assert.ok(!call.text.includes(stripeKey), 'the echoed secret must be masked');
    assert.ok(!t.logs.join('\n').includes(stripeKey), 'the secret was logged');
  });
});

describe('popular front-end packages publish without a detection', () => {
  // Browser builds as a site would ship them (installed as dev dependencies).
  const BUNDLES: Record<string, string> = {
    'vendor/jquery.min.js': 'jquery/dist/jquery.min.js',
    'vendor/jquery.js': 'jquery/dist/jquery.js',
    'vendor/react-dom.production.js': 'react-dom/cjs/react-dom-client.production.js',
    'vendor/vue.global.prod.js': 'vue/dist/vue.global.prod.js',
    'vendor/lodash.min.js': 'lodash/lodash.min.js',
    'vendor/bootstrap.bundle.min.js': 'bootstrap/dist/js/bootstrap.bundle.min.js',
    'vendor/bootstrap.bundle.min.js.map': 'bootstrap/dist/js/bootstrap.bundle.min.js.map',
    'vendor/bootstrap.min.css': 'bootstrap/dist/css/bootstrap.min.css',
    'vendor/three.core.js': 'three/build/three.core.js',
    'vendor/d3.min.js': 'd3/dist/d3.min.js',
    'vendor/chart.umd.js': 'chart.js/dist/chart.umd.js',
    'vendor/pdf.min.mjs': 'pdfjs-dist/build/pdf.min.mjs',
    'vendor/pdf.worker.min.mjs': 'pdfjs-dist/build/pdf.worker.min.mjs',
    'vendor/highlight.min.js': '@highlightjs/cdn-assets/highlight.min.js',
    // A language grammar whose `token` classes once read as generic secrets (issue 21). The publish helper
    // uploads every file at once: 16 in all is the server's limit per client (UPLOADS_PER_CLIENT).
    'vendor/monaco/ruby.js': 'monaco-editor/esm/vs/languages/definitions/ruby/ruby.js',
  };
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('jquery, react-dom, vue, lodash, bootstrap, three, d3, chart.js, pdfjs-dist, highlight.js and a monaco-editor grammar go live', async () => {
    const key = await signIn(t, 'bundles@example.com');
    const files: Files = { 'index.html': '<!doctype html><script src="vendor/jquery.min.js"></script>' };
    for (const [path, module] of Object.entries(BUNDLES)) {
      const body = readFileSync(new URL(`../../node_modules/${module}`, import.meta.url));
      files[path] = {
        body,
        contentType: path.endsWith('.css')
          ? 'text/css'
          : path.endsWith('.map')
            ? 'application/json'
            : 'text/javascript',
      };
    }
    const out = await publish(t, files, { key });
    const failed = out.uploads.filter((u) => u.status !== 200).map((u) => `${u.path}: ${u.status} ${u.text}`);
    assert.deepEqual(failed, []);
    assert.equal(out.finalize?.status, 200, out.finalize?.text.slice(0, 2000));
    const manifest = manifestOf(files);
    assert.ok(manifest.reduce((n, f) => n + f.size, 0) > 3_000_000, 'the bundles are the real builds');
    // Each was scanned (the results are stored), none had a finding.
    const rows = await t.ctx.db.kysely.selectFrom('blob_scans').select(['findings']).execute();
    assert.ok(rows.length >= Object.keys(BUNDLES).length);
    assert.ok(rows.every((r) => r.findings === '[]'));
  });
});
