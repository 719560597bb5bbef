// Web pages on the BASE_URL host (CONTRACT "Web pages"): landing, /llms.txt, /docs and the OpenAPI
// renderer's assets, the shared stylesheet, and the pages' security headers.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('web pages', () => {
  let t: TestApp;
  let base: string;
  before(async () => {
    t = await startTestApp();
    base = `http://localhost:${t.port}`;
  });
  after(() => t.close());

  test('GET / is the landing page with this server’s real URLs, under a strict CSP', async () => {
    const res = await fetch(`${t.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const body = await res.text();
    assert.match(body, new RegExp(`curl -s ${base}/api/v1/publish `));
    assert.match(body, new RegExp(`${base}/api/v1/publish/&lt;slug&gt;/finalize`));
    assert.match(body, /slipway mcp/);
    // The command line as the README installs it, aimed at this server: `npm run cli` only works from
    // the checkout and would talk to the default http://localhost:8080 (issue 21 walkthrough).
    assert.match(body, /npm link/);
    assert.match(body, new RegExp(`export SLIPWAY_URL=${base}\n`));
    assert.match(body, /slipway login/);
    assert.match(body, /slipway publish \./);
    assert.doesNotMatch(body, /npm run cli/);
    assert.doesNotMatch(body, /<script(?![^>]*\ssrc=)|style=|<style/, 'no inline script or style');
    // Every URL on the page is this server's (no CDN, no other host).
    for (const [, url] of body.matchAll(/(?:href|src)="([^"]+)"/g)) {
      assert.ok(url!.startsWith('/') || url!.startsWith(base), `foreign URL ${url}`);
    }
    const css = /<link rel="stylesheet" href="([^"]+)">/.exec(body)?.[1];
    assert.ok(css);
    const sheet = await fetch(`${t.url}${css}`);
    assert.equal(sheet.status, 200);
    assert.match(sheet.headers.get('content-type') ?? '', /^text\/css/);
    assert.match(sheet.headers.get('cache-control') ?? '', /immutable/);
    // The one script: local, hashed name, cached for a year, JavaScript content type.
    const script = /<script src="(\/assets\/app-[0-9a-f]{12}\.js)" defer><\/script>/.exec(body)?.[1];
    assert.ok(script, 'the page loads the shared script');
    const js = await fetch(`${t.url}${script}`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(js.headers.get('cache-control') ?? '', /max-age=31536000, immutable/);
    assert.match(await js.text(), /data-confirm/);
  });

  test('GET /llms.txt is a plain-text guide for agents with the publish and remediation flows', async () => {
    const res = await fetch(`${t.url}/llms.txt`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, new RegExp(`POST ${base}/api/v1/publish with`));
    assert.match(text, /SECRET_DETECTED/);
    assert.match(text, /Ask the user/);
    assert.match(text, /Free: 500 sites/);
  });

  test('GET /docs renders the OpenAPI document with assets served by this service', async () => {
    const res = await fetch(`${t.url}/docs`, { redirect: 'follow' });
    assert.equal(res.status, 200);
    const body = await res.text();
    assert.match(body, /swagger/i);
    const assets = [...body.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.length > 0);
    for (const asset of assets) {
      assert.ok(!/^https?:\/\//.test(asset) || asset.startsWith(base), `asset from another host: ${asset}`);
      const url = new URL(asset, `${t.url}/docs/`).toString();
      assert.equal((await fetch(url)).status, 200, url);
    }
  });
  test('an unknown page is a 404 page for a browser and the JSON error for API clients; /docs/ goes to /docs', async () => {
    const page = await fetch(`${t.url}/no/such/page`, { headers: { accept: 'text/html,*/*' } });
    assert.equal(page.status, 404);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.match(await page.text(), /<h1>Page not found<\/h1>/);
    const json = await fetch(`${t.url}/no/such/page`);
    assert.equal(json.status, 404);
    assert.equal(((await json.json()) as { code: string }).code, 'NOT_FOUND');
    // The API's namespace answers JSON even to a browser.
    const api = await fetch(`${t.url}/api/v1/nope`, { headers: { accept: 'text/html' } });
    assert.equal(api.status, 404);
    assert.match(api.headers.get('content-type') ?? '', /^application\/json/);
    const slash = await fetch(`${t.url}/docs/`, { redirect: 'manual' });
    assert.equal(slash.status, 301);
    assert.equal(slash.headers.get('location'), '/docs');
  });
});
