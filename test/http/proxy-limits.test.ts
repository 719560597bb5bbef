// The site proxy's own rate limit and its CORS on every answer (issue 21 items 0 and 2; CONTRACT "Rate
// limits" and "Variables, proxy hosts, proxy"): a window per visitor IP and site (RATE_LIMIT_PROXY) under a
// per-site ceiling by the owner's plan, outside the API's anonymous/account windows; refusals, 400, 429
// and 502 carry the site origin's CORS headers so the page can read the reason.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';
import { Browser, csrfOf } from '../helpers/web.js';

const HOUR_MS = 3_600_000;
const EXPOSED = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];

interface World {
  dns: DnsPeer;
  upstream: Upstream;
}

async function startWorld(): Promise<World> {
  const dns = await startDnsPeer({ 'api.upstream.test': { A: ['127.0.0.1'] } });
  const upstream = await startUpstream(['api.upstream.test']);
  upstream.handle = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  };
  return { dns, upstream };
}

async function proxiedSite(t: TestApp, hobby = false) {
  const key = await signIn(t, `owner-${Math.random().toString(36).slice(2)}@example.com`);
  if (hobby) await upgradeToHobby(t, key);
  const slug = assertPublished(await publish(t, { 'index.html': '<h1>app</h1>' }, { key })).slug;
  const allow = await t.api(`/api/v1/publish/${slug}/proxy-hosts`, {
    method: 'PUT',
    key,
    body: { hosts: ['api.upstream.test'] },
  });
  assert.equal(allow.status, 200, allow.text);
  return { slug, key, origin: `http://${slug}.localhost:${t.port}` };
}

function call(t: TestApp, slug: string, origin: string | undefined, body: unknown, visitor?: string) {
  const headers: Record<string, string> = {};
  if (origin !== undefined) headers.origin = origin;
  if (visitor !== undefined) headers['x-forwarded-for'] = visitor;
  return t.api(`/api/v1/proxy/${slug}`, { method: 'POST', headers, body: body as Record<string, unknown> });
}

/** The dashboard's site page, signed in through the web form. */
async function dashboardSitePage(t: TestApp, email: string, slug: string): Promise<string> {
  const b = new Browser(t);
  const page = await b.request('/login?next=%2Fdashboard');
  const sent = await b.request('/login', {
    method: 'POST',
    form: { email, next: '/dashboard', _csrf: csrfOf(page.text) },
  });
  const done = await b.request('/login/code', {
    method: 'POST',
    form: { email, code: lastCodeFor(t, email), next: '/dashboard', _csrf: csrfOf(sent.text) },
  });
  assert.equal(done.status, 303, done.text);
  const site = await b.request(`/dashboard/sites/${slug}`);
  assert.equal(site.status, 200);
  return site.text;
}

function assertCors(res: { headers: Headers; status: number; text: string }, origin: string) {
  assert.equal(res.headers.get('access-control-allow-origin'), origin, `${res.status} ${res.text}`);
  assert.match(String(res.headers.get('vary')), /Origin/i);
  const exposed = String(res.headers.get('access-control-expose-headers')).toLowerCase();
  for (const name of EXPOSED) assert.ok(exposed.includes(name), `${name} not exposed: ${exposed}`);
}

function assertError(res: { status: number; body: unknown; text: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text);
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

describe('the site proxy counts in its own window per visitor and site', () => {
  let w: World;
  let t: TestApp;
  let base: string;
  before(async () => {
    w = await startWorld();
    t = await startTestApp(
      {
        PROXY_ENABLED: 'true',
        PROXY_ALLOW_PRIVATE_ADDRESSES: 'true',
        DNS_SERVERS: w.dns.server,
        RATE_LIMIT_PROXY: '3',
        RATE_LIMIT_ANONYMOUS: '50',
        TRUST_PROXY: '1',
      },
      { proxyCa: w.upstream.ca },
    );
    base = `https://api.upstream.test:${w.upstream.port}`;
  });
  after(async () => {
    await t.close();
    await w.upstream.close();
    await w.dns.close();
  });

  test('RATE_LIMIT_PROXY calls per visitor, then 429 with the body, Retry-After and CORS; the API window is untouched', async () => {
    const site = await proxiedSite(t);
    const visitor = '198.51.100.10';
    const top = (Math.floor(t.clock.now() / HOUR_MS) + 1) * 3600;
    for (let i = 0; i < 3; i++) {
      const res = await call(t, site.slug, site.origin, { url: `${base}/x` }, visitor);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-ratelimit-limit'), '3');
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(2 - i));
      assert.equal(res.headers.get('x-ratelimit-reset'), String(top));
      assertCors(res, site.origin);
    }
    const over = await call(t, site.slug, site.origin, { url: `${base}/x` }, visitor);
    assertError(over, 429, 'RATE_LIMITED');
    assertCors(over, site.origin);
    assert.equal(over.headers.get('x-ratelimit-remaining'), '0');
    const retryAfter = Number(over.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 3600, String(retryAfter));
    // The visitor's anonymous API window (50) was not spent by the proxy calls.
    const apiCall = await t.api('/api/v1/nothing-here', { headers: { 'x-forwarded-for': visitor } });
    assert.equal(apiCall.status, 404);
    assert.equal(apiCall.headers.get('x-ratelimit-remaining'), '49');
    // Another visitor of the same site has a window of its own.
    const other = await call(t, site.slug, site.origin, { url: `${base}/x` }, '198.51.100.11');
    assert.equal(other.status, 200, other.text);
    assert.equal(other.headers.get('x-ratelimit-remaining'), '2');
  });

  test('a spent anonymous API window does not stop the proxy', async () => {
    const site = await proxiedSite(t);
    const visitor = '198.51.100.20';
    for (let i = 0; i < 51; i++)
      await t.api('/api/v1/nothing-here', { headers: { 'x-forwarded-for': visitor } });
    const res = await call(t, site.slug, site.origin, { url: `${base}/x` }, visitor);
    assert.equal(res.status, 200, res.text);
  });

  test('a foreign origin and an unknown site spend nothing of the site or the visitor', async () => {
    const site = await proxiedSite(t);
    const visitor = '198.51.100.30';
    for (let i = 0; i < 5; i++) {
      const res = await call(t, site.slug, 'https://evil.example', { url: `${base}/x` }, visitor);
      assertError(res, 403, 'FORBIDDEN');
      assert.equal(res.headers.get('access-control-allow-origin'), null);
    }
    const ok = await call(t, site.slug, site.origin, { url: `${base}/x` }, visitor);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.get('x-ratelimit-remaining'), '2');
  });

  test('the per-site ceiling (10 x RATE_LIMIT_PROXY for a Free owner) stops many visitors together', async () => {
    const site = await proxiedSite(t);
    for (let v = 0; v < 10; v++) {
      for (let i = 0; i < 3; i++) {
        const res = await call(t, site.slug, site.origin, { url: `${base}/x` }, `203.0.113.${v + 1}`);
        assert.equal(res.status, 200, `visitor ${v} call ${i}: ${res.text}`);
      }
    }
    const fresh = await call(t, site.slug, site.origin, { url: `${base}/x` }, '203.0.113.99');
    assertError(fresh, 429, 'RATE_LIMITED');
    assert.match(fresh.body.error, /site/i);
    assertCors(fresh, site.origin);
    assert.equal(fresh.headers.get('x-ratelimit-limit'), '30');
    assert.equal(fresh.headers.get('x-ratelimit-remaining'), '0');
    // Another site is not affected.
    const other = await proxiedSite(t);
    const res = await call(t, other.slug, other.origin, { url: `${base}/x` }, '203.0.113.99');
    assert.equal(res.status, 200, res.text);
  });

  test("a Hobby owner's site has a higher ceiling (100 x RATE_LIMIT_PROXY)", async () => {
    const site = await proxiedSite(t, true);
    for (let v = 0; v < 11; v++) {
      for (let i = 0; i < 3; i++) {
        const res = await call(t, site.slug, site.origin, { url: `${base}/x` }, `192.0.2.${v + 1}`);
        assert.equal(res.status, 200, `visitor ${v} call ${i}: ${res.text}`);
      }
    }
  });

  test('400 and 502 answers to a page of the site carry its CORS headers', async () => {
    const site = await proxiedSite(t);
    const bad = await call(t, site.slug, site.origin, { nope: true }, '198.51.100.40');
    assertError(bad, 400, 'INVALID_REQUEST');
    assertCors(bad, site.origin);
    const down = await call(
      t,
      site.slug,
      site.origin,
      { url: 'https://api.upstream.test:1/x' },
      '198.51.100.40',
    );
    assertError(down, 502, 'UPSTREAM_ERROR');
    assertCors(down, site.origin);
    const unknown = await call(t, 'no-such-site-zz', site.origin, { url: `${base}/x` }, '198.51.100.40');
    assertError(unknown, 404, 'NOT_FOUND');
    assert.equal(unknown.headers.get('access-control-allow-origin'), null);
  });
});

describe('a disabled proxy answers pages of the site with CORS headers', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({});
  });
  after(async () => {
    await t.close();
  });

  test('403 FORBIDDEN names PROXY_ENABLED and carries CORS for the site origin only; the preflight passes', async () => {
    const key = await signIn(t, 'disabled-owner@example.com');
    const slug = assertPublished(await publish(t, { 'index.html': '<h1>app</h1>' }, { key })).slug;
    const origin = `http://${slug}.localhost:${t.port}`;
    const res = await call(t, slug, origin, { url: 'https://api.example.com/x' });
    assertError(res, 403, 'FORBIDDEN');
    assert.match(res.body.error, /PROXY_ENABLED=true/);
    assertCors(res, origin);
    // Every API answer carries the window headers (spec); for the proxy they describe its own window, and
    // a refusal that counted nothing shows it untouched.
    assert.equal(res.headers.get('x-ratelimit-limit'), '300');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '300');
    assert.match(res.headers.get('x-ratelimit-reset') ?? '', /^\d+$/);
    const foreign = await call(t, slug, 'https://evil.example', { url: 'https://api.example.com/x' });
    assertError(foreign, 403, 'FORBIDDEN');
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const unknown = await call(t, 'no-such-site-zz', origin, {});
    assertError(unknown, 403, 'FORBIDDEN');
    assert.equal(unknown.headers.get('access-control-allow-origin'), null);
    // A page sending application/json is preflighted: the preflight passes so the 403 itself is readable.
    const pre = await t.api(`/api/v1/proxy/${slug}`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), origin);
  });

  test("the dashboard's site page says the proxy is switched off and what the operator must set", async () => {
    const email = 'dash-off@example.com';
    const key = await signIn(t, email);
    const slug = assertPublished(await publish(t, { 'index.html': '<h1>app</h1>' }, { key })).slug;
    const text = await dashboardSitePage(t, email, slug);
    assert.match(text, /site proxy is switched off on this server/);
    assert.match(text, /PROXY_ENABLED=true/);
  });
});
