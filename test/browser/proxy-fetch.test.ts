// A published page calling the site proxy with fetch() reads every answer (issue 21 item 2): a disabled
// proxy's 403, the proxy's own 429 with its X-RateLimit-*/Retry-After headers, and a 502 from an upstream
// that is down, each with the error body, never "Failed to fetch" (the answers carry the site origin's CORS
// headers). Chromium via playwright-core against the real app, a real DNS peer and a real HTTPS upstream.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, publish, update } from '../helpers/publish.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const UPSTREAM_HOST = 'api.upstream.test';

interface Seen {
  failed?: string;
  status?: number;
  body?: { error?: string; code?: string; status?: number } | null;
  headers?: Record<string, string | null>;
}

/** The page: `window.callProxy(call, json)` fetches the proxy and reports what the page could read. */
const page = (proxyUrl: string) => `<!doctype html><title>app</title><p id="out">ready</p><script>
window.callProxy = async (call, json) => {
  try {
    const r = await fetch(${JSON.stringify(proxyUrl)}, {
      method: 'POST',
      headers: json ? { 'content-type': 'application/json' } : {},
      body: JSON.stringify(call),
    });
    const headers = {};
    for (const n of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) headers[n] = r.headers.get(n);
    const text = await r.text();
    let body = null;
    try { body = JSON.parse(text); } catch {}
    return { status: r.status, body, headers };
  } catch (e) {
    return { failed: String(e) };
  }
};
</script>`;

let browser: BrowserHarness;
before(async () => {
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
});

async function siteCalling(t: TestApp, email: string, hosts: string[]) {
  const key = await signIn(t, email);
  const slug = assertPublished(await publish(t, { 'index.html': '<p>placeholder</p>' }, { key })).slug;
  const proxyUrl = `${t.ctx.config.baseUrl}/api/v1/proxy/${slug}`;
  const out = await update(t, key, slug, { 'index.html': page(proxyUrl) });
  assert.equal(out.finalize?.status, 200, JSON.stringify(out.finalize?.body));
  if (hosts.length > 0) {
    const allow = await t.api(`/api/v1/publish/${slug}/proxy-hosts`, { method: 'PUT', key, body: { hosts } });
    assert.equal(allow.status, 200, allow.text);
  }
  const p = await browser.page(t);
  await p.page.goto(`${p.siteUrl(slug)}/`);
  await p.page.waitForFunction(
    () => typeof (globalThis as unknown as { callProxy?: unknown }).callProxy === 'function',
  );
  const call = (body: unknown, json = false): Promise<Seen> =>
    p.page.evaluate(
      ([b, j]) =>
        (globalThis as unknown as { callProxy(b: unknown, j: boolean): Promise<Seen> }).callProxy(b, j),
      [body, json] as const,
    );
  return { slug, p, call };
}

describe('a page reads the proxy’s refusals (proxy disabled)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({});
  });
  after(async () => {
    await t?.close();
  });

  test('403 FORBIDDEN with the body, for a simple request and a preflighted one', async () => {
    const { p, call } = await siteCalling(t, 'page-off@example.com', []);
    try {
      for (const json of [false, true]) {
        const seen = await call({ url: 'https://api.example.com/x' }, json);
        assert.equal(seen.failed, undefined, `json=${json}: ${seen.failed}`);
        assert.equal(seen.status, 403);
        assert.equal(seen.body?.code, 'FORBIDDEN');
        assert.equal(seen.body?.status, 403);
        assert.match(String(seen.body?.error), /PROXY_ENABLED=true/);
      }
    } finally {
      await p.close();
    }
  });
});

describe('a page reads the proxy’s 429 and 502 (proxy enabled)', () => {
  let t: TestApp;
  let dns: DnsPeer;
  let upstream: Upstream;
  before(async () => {
    dns = await startDnsPeer({ [UPSTREAM_HOST]: { A: ['127.0.0.1'] } });
    upstream = await startUpstream([UPSTREAM_HOST], (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"hello":"upstream"}');
    });
    t = await startTestApp(
      {
        PROXY_ENABLED: 'true',
        PROXY_ALLOW_PRIVATE_ADDRESSES: 'true',
        DNS_SERVERS: dns.server,
        RATE_LIMIT_PROXY: '2',
      },
      { proxyCa: upstream.ca },
    );
  });
  after(async () => {
    await t?.close();
    await upstream?.close();
    await dns?.close();
  });

  test('upstream down: 502 UPSTREAM_ERROR; a success; then over the limit: 429 with its headers', async () => {
    const { p, call } = await siteCalling(t, 'page-on@example.com', [UPSTREAM_HOST]);
    try {
      const down = await call({ url: `https://${UPSTREAM_HOST}:1/x` });
      assert.equal(down.failed, undefined, down.failed);
      assert.equal(down.status, 502);
      assert.equal(down.body?.code, 'UPSTREAM_ERROR');
      assert.equal(down.headers?.['x-ratelimit-remaining'], '1');

      const ok = await call({ url: `https://${UPSTREAM_HOST}:${upstream.port}/x` }, true);
      assert.equal(ok.failed, undefined, ok.failed);
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body, { hello: 'upstream' });
      assert.equal(ok.headers?.['x-ratelimit-limit'], '2');
      assert.equal(ok.headers?.['x-ratelimit-remaining'], '0');

      const over = await call({ url: `https://${UPSTREAM_HOST}:${upstream.port}/x` });
      assert.equal(over.failed, undefined, over.failed);
      assert.equal(over.status, 429);
      assert.equal(over.body?.code, 'RATE_LIMITED');
      assert.equal(over.body?.status, 429);
      assert.equal(over.headers?.['x-ratelimit-limit'], '2');
      assert.equal(over.headers?.['x-ratelimit-remaining'], '0');
      assert.match(String(over.headers?.['x-ratelimit-reset']), /^\d+$/);
      const retryAfter = Number(over.headers?.['retry-after']);
      assert.ok(retryAfter >= 1 && retryAfter <= 3600, String(retryAfter));
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
});
