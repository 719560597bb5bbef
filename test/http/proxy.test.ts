// POST /api/v1/proxy/:slug through real HTTP, against a real HTTPS upstream on loopback and a real DNS
// server (dns2) that DNS_SERVERS points at (spec "Site proxy"; CONTRACT "Variables, proxy hosts, proxy").

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const NAMES = [
  'api.upstream.test',
  'other.upstream.test',
  'private.upstream.test',
  'metadata.upstream.test',
  'mapped.upstream.test',
  'missing.upstream.test',
];
const SECRET = 'sk_live_proxyCanary9f8e7d6c5b4a';

function assertError(res: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

interface World {
  dns: DnsPeer;
  upstream: Upstream;
}

async function startWorld(): Promise<World> {
  const dns = await startDnsPeer({
    'api.upstream.test': { A: ['127.0.0.1'] },
    'other.upstream.test': { A: ['127.0.0.1'] },
    'private.upstream.test': { A: ['10.0.0.1'] },
    'metadata.upstream.test': { A: ['169.254.169.254'] },
    'mapped.upstream.test': { AAAA: ['::ffff:127.0.0.1'] },
  });
  const upstream = await startUpstream(NAMES);
  return { dns, upstream };
}

/** An owned site with a variable and `hosts` allowlisted; returns its slug, key and the page origin. */
async function siteWithSecrets(t: TestApp, hosts: string[]) {
  const key = await signIn(t, `owner-${Math.random().toString(36).slice(2)}@example.com`);
  const slug = assertPublished(await publish(t, { 'index.html': '<h1>app</h1>' }, { key })).slug;
  const vars = await t.api(`/api/v1/publish/${slug}/variables`, {
    method: 'PUT',
    key,
    body: { STRIPE_SECRET_KEY: SECRET, OTHER: 'second-value-77' },
  });
  assert.equal(vars.status, 200, vars.text);
  const allow = await t.api(`/api/v1/publish/${slug}/proxy-hosts`, { method: 'PUT', key, body: { hosts } });
  assert.equal(allow.status, 200, allow.text);
  return { slug, key, origin: `http://${slug}.localhost:${t.port}` };
}

function proxyCall(t: TestApp, slug: string, origin: string | undefined, body: unknown) {
  return t.api(`/api/v1/proxy/${slug}`, {
    method: 'POST',
    headers: origin === undefined ? {} : { origin },
    body: body as Record<string, unknown>,
  });
}

describe('POST /api/v1/proxy/:slug with PROXY_ENABLED=false (the default)', () => {
  let w: World;
  let t: TestApp;
  before(async () => {
    w = await startWorld();
    t = await startTestApp({ DNS_SERVERS: w.dns.server }, { proxyCa: w.upstream.ca });
  });
  after(async () => {
    await t.close();
    await w.upstream.close();
    await w.dns.close();
  });

  test('answers 403 FORBIDDEN and forwards nothing', async () => {
    const { slug, origin } = await siteWithSecrets(t, ['api.upstream.test']);
    const res = await proxyCall(t, slug, origin, {
      url: `https://api.upstream.test:${w.upstream.port}/v1/x`,
      headers: { authorization: 'Bearer {{STRIPE_SECRET_KEY}}' },
    });
    assertError(res, 403, 'FORBIDDEN');
    // Before the site is even looked up (CONTRACT order of checks).
    assertError(await proxyCall(t, 'no-such-site-zz', origin, {}), 403, 'FORBIDDEN');
    assert.equal(w.upstream.requests.length, 0);
    assert.equal(w.dns.queries.length, 0);
  });
});

describe('POST /api/v1/proxy/:slug with the proxy enabled', () => {
  let w: World;
  let t: TestApp;
  let site: Awaited<ReturnType<typeof siteWithSecrets>>;
  let base: string;

  before(async () => {
    w = await startWorld();
    t = await startTestApp(
      { PROXY_ENABLED: 'true', PROXY_ALLOW_PRIVATE_ADDRESSES: 'true', DNS_SERVERS: w.dns.server },
      { proxyCa: w.upstream.ca },
    );
    site = await siteWithSecrets(t, ['api.upstream.test', 'missing.upstream.test']);
    base = `https://api.upstream.test:${w.upstream.port}`;
  });
  after(async () => {
    await t.close();
    await w.upstream.close();
    await w.dns.close();
  });

  test('forwards to the allowlisted https host with {{NAME}} filled in headers and body', async () => {
    w.upstream.requests.length = 0;
    w.upstream.handle = (req, res) => {
      res.writeHead(201, {
        'content-type': 'application/json',
        'x-upstream': 'yes',
        'set-cookie': 'session=abc; Path=/',
        connection: 'close',
      });
      res.end(JSON.stringify({ got: req.method, path: req.url }));
    };
    const res = await proxyCall(t, site.slug, site.origin, {
      url: `${base}/v1/charges?limit=3`,
      method: 'POST',
      headers: { Authorization: 'Bearer {{STRIPE_SECRET_KEY}}', 'Content-Type': 'application/json' },
      body: JSON.stringify({ note: 'key={{ OTHER }}' }),
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(res.body, { got: 'POST', path: '/v1/charges?limit=3' });
    assert.equal(res.headers.get('x-upstream'), 'yes');
    assert.equal(res.headers.get('set-cookie'), null, 'Set-Cookie must be dropped');
    assert.equal(res.headers.get('access-control-allow-origin'), site.origin);
    assert.equal(w.upstream.requests.length, 1);
    const seen = w.upstream.requests[0]!;
    assert.equal(seen.headers.authorization, `Bearer ${SECRET}`);
    assert.equal(seen.body, JSON.stringify({ note: 'key=second-value-77' }));
    assert.equal(seen.headers.host, `api.upstream.test:${w.upstream.port}`);
    assert.ok(!t.logs.join('\n').includes(SECRET), 'a variable value was logged');
  });

  test('a placeholder in the URL path (e.g. a bot token) is filled too, never in the host', async () => {
    w.upstream.requests.length = 0;
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    };
    const res = await proxyCall(t, site.slug, site.origin, { url: `${base}/bot{{OTHER}}/getMe?x={{OTHER}}` });
    assert.equal(res.status, 200, res.text);
    assert.equal(w.upstream.requests[0]?.url, '/botsecond-value-77/getMe?x=second-value-77');
    const inHost = await proxyCall(t, site.slug, site.origin, { url: `https://{{OTHER}}.upstream.test/x` });
    assert.ok(inHost.status === 400 || inHost.status === 403, inHost.text);
    assert.equal(w.upstream.requests.length, 1);
  });

  test('a text/plain body (a CORS simple request, no preflight) is read as the same JSON', async () => {
    w.upstream.requests.length = 0;
    const res = await fetch(`${t.url}/api/v1/proxy/${site.slug}`, {
      method: 'POST',
      headers: { origin: site.origin, 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ url: `${base}/simple`, headers: { 'x-key': '{{OTHER}}' } }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.equal(w.upstream.requests[0]?.headers['x-key'], 'second-value-77');
    assert.equal(res.headers.get('access-control-allow-origin'), site.origin);
  });

  test('a variable value the upstream echoes back is masked', async () => {
    w.upstream.handle = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': String(req.headers.authorization) });
      res.end(`you sent ${req.headers.authorization}`);
    };
    const res = await proxyCall(t, site.slug, site.origin, {
      url: `${base}/echo`,
      headers: { Authorization: 'Bearer {{STRIPE_SECRET_KEY}}' },
    });
    assert.equal(res.status, 200);
    assert.ok(!res.text.includes(SECRET), res.text);
    assert.equal(res.text, `you sent Bearer ${'*'.repeat(SECRET.length)}`);
    assert.ok(!String(res.headers.get('x-echo')).includes(SECRET));
  });

  test('transformed copies of a variable value the upstream echoes back are masked too', async () => {
    const forms = [
      Buffer.from(SECRET).toString('base64'),
      Buffer.from(SECRET).toString('base64').replace(/=+$/, ''),
      Buffer.from(SECRET).toString('base64url'),
      Buffer.from(SECRET).toString('hex'),
      Buffer.from(SECRET).toString('hex').toUpperCase(),
      encodeURIComponent(`${SECRET}/+ x`),
      SECRET.toUpperCase(),
      SECRET.toLowerCase(),
      [...SECRET].map((c, i) => (i % 2 ? c.toUpperCase() : c.toLowerCase())).join(''),
    ];
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': forms[0] });
      res.end(forms.join('\n'));
    };
    const res = await proxyCall(t, site.slug, site.origin, {
      url: `${base}/echo-forms`,
      headers: { Authorization: 'Bearer {{STRIPE_SECRET_KEY}}', 'x-spaced': '{{STRIPE_SECRET_KEY}}/+ x' },
    });
    assert.equal(res.status, 200, res.text);
    for (const form of forms) {
      assert.ok(!res.text.includes(form), `echoed as ${form}: ${res.text}`);
      assert.ok(!String(res.headers.get('x-echo')).includes(form));
    }
    assert.equal(res.text.split('\n').length, forms.length, 'the body keeps its shape (masked in place)');
  });

  test('a value put in the URL is masked as the proxy encoded it, and a query value stays one value', async () => {
    const value = 's3cr3t/Val+ue==&x=1';
    const put = await t.api(`/api/v1/publish/${site.slug}/variables`, {
      method: 'PUT',
      key: site.key,
      body: { B64_TOKEN: value },
    });
    assert.equal(put.status, 200, put.text);
    w.upstream.requests.length = 0;
    w.upstream.handle = (req, res) => {
      const query = new URL(req.url, 'https://x').searchParams;
      res.writeHead(404, { 'content-type': 'text/plain', [`x-${Buffer.from(value).toString('hex')}`]: '1' });
      // What frameworks echo: the raw target, PHP's JSON (`\/`), Python's quote(), the decoded value.
      res.end(
        [
          `Cannot GET ${req.url}`,
          JSON.stringify({ q: query.get('q') }).replace(/\//g, '\\/'),
          encodeURIComponent(value).replace(/%2F/g, '/'),
          `q=${query.get('q')} x=${query.get('x')}`,
        ].join('\n'),
      );
    };
    const res = await proxyCall(t, site.slug, site.origin, {
      url: `${base}/p/{{B64_TOKEN}}?q={{B64_TOKEN}}`,
    });
    assert.equal(res.status, 404, res.text);
    const seen = w.upstream.requests[0]!;
    assert.equal(
      new URL(seen.url, 'https://x').searchParams.get('q'),
      value,
      'the query value arrived whole',
    );
    assert.equal(new URL(seen.url, 'https://x').searchParams.get('x'), null, 'the value split the query');
    for (const form of [value, 's3cr3t/Val+ue', 's3cr3t%2FVal', 'Val%2Bue', 'Val+ue==%26', 's3cr3t\\/Val']) {
      assert.ok(!res.text.includes(form), `echoed as ${form}: ${res.text}`);
    }
    for (const name of res.headers.keys()) {
      assert.ok(!name.includes(Buffer.from(value).toString('hex')), `a header name carried it: ${name}`);
    }
  });

  test('every answer carries headers that keep it from running, rendering or being framed on the service origin', async () => {
    w.upstream.requests.length = 0;
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': 'default-src *',
        'content-disposition': 'inline',
        'x-frame-options': 'ALLOWALL',
        'clear-site-data': '"cookies", "storage"',
        refresh: '0; url=https://evil.example/',
        link: '<https://evil.example/x.js>; rel=preload; as=script',
        'cross-origin-resource-policy': 'cross-origin',
        'cross-origin-opener-policy': 'unsafe-none',
        'service-worker-allowed': '/',
        'permissions-policy': 'camera=*',
        'reporting-endpoints': 'x="https://evil.example/r"',
        nel: '{"report_to":"x","max_age":1}',
        'accept-ch': 'Sec-CH-UA-Platform-Version',
        'origin-agent-cluster': '?0',
        'x-upstream': 'kept',
      });
      res.end('<script>alert(document.domain)</script>');
    };
    const html = await proxyCall(t, site.slug, site.origin, { url: `${base}/page.html` });
    assert.equal(html.status, 200, html.text);
    // Still returned to fetch() callers as what it is...
    assert.equal(html.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(html.text, '<script>alert(document.domain)</script>');
    assert.equal(html.headers.get('x-upstream'), 'kept');
    // ...without any header that acts on the service's origin.
    for (const name of [
      'clear-site-data',
      'refresh',
      'link',
      'cross-origin-opener-policy',
      'service-worker-allowed',
      'permissions-policy',
      'reporting-endpoints',
      'nel',
      'accept-ch',
      'origin-agent-cluster',
    ]) {
      assert.equal(html.headers.get(name), null, `${name} was passed on`);
    }
    const answers = {
      'the upstream HTML': html,
      'a foreign origin (403)': await proxyCall(t, site.slug, 'https://evil.example', { url: `${base}/x` }),
      'an unknown site (404)': await proxyCall(t, 'no-such-site-zz', site.origin, { url: `${base}/x` }),
      'a bad body (400)': await proxyCall(t, site.slug, site.origin, { url: 'ftp://x' }),
      'a preflight (204)': await t.api(`/api/v1/proxy/${site.slug}`, {
        method: 'OPTIONS',
        headers: { origin: site.origin, 'access-control-request-method': 'POST' },
      }),
    };
    for (const [label, res] of Object.entries(answers)) {
      const csp = String(res.headers.get('content-security-policy'));
      assert.match(csp, /(^|;\s*)sandbox(;|$)/, `${label}: ${csp}`);
      assert.match(csp, /default-src 'none'/, label);
      assert.match(csp, /frame-ancestors 'none'/, label);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', label);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', label);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'same-origin', label);
      assert.match(String(res.headers.get('content-disposition')), /^attachment/, label);
    }
  });

  test('a navigation or a form submission is refused with 403 and forwards nothing; fetch() is answered', async () => {
    w.upstream.requests.length = 0;
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('fetched');
    };
    // What a browser sends for a top-level form post, a form targeting a frame, and <object>/<embed>.
    const navigations: Array<Record<string, string>> = [
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
      { 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'frame' },
      { 'sec-fetch-mode': 'navigate' },
      { 'sec-fetch-mode': 'NAVIGATE', 'sec-fetch-dest': 'Document' },
      { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'object' },
      { 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'embed' },
      { 'sec-fetch-dest': 'document' },
    ];
    // A text/plain form: name `{"url":...,"x":"`, `=`, value `"}`: the body parses as JSON.
    const body = `${JSON.stringify({ url: `${base}/form`, x: '' }).slice(0, -2)}="}\r\n`;
    // node:http, not fetch(): undici's fetch() sets its own Sec-Fetch-Mode.
    for (const fetchMetadata of navigations) {
      const res = await rawRequest(t.port, {
        host: `localhost:${t.port}`,
        path: `/api/v1/proxy/${site.slug}`,
        method: 'POST',
        headers: { origin: site.origin, 'content-type': 'text/plain', ...fetchMetadata },
        body,
      });
      const text = res.body.toString();
      assert.equal(res.status, 403, `${JSON.stringify(fetchMetadata)}: ${text}`);
      assert.equal(JSON.parse(text).code, 'FORBIDDEN');
      assert.match(String(res.headers['content-security-policy']), /sandbox/);
    }
    assert.equal(w.upstream.requests.length, 0, 'a navigation was forwarded');
    const fetched = await fetch(`${t.url}/api/v1/proxy/${site.slug}`, {
      method: 'POST',
      headers: {
        origin: site.origin,
        'content-type': 'text/plain;charset=UTF-8',
        'sec-fetch-mode': 'cors',
        'sec-fetch-dest': 'empty',
        'sec-fetch-site': 'same-site',
      },
      body,
    });
    assert.equal(fetched.status, 200);
    assert.equal(await fetched.text(), 'fetched');
    assert.equal(w.upstream.requests.length, 1);
  });

  test('an unknown {{NAME}} answers 400 and forwards nothing', async () => {
    w.upstream.requests.length = 0;
    const res = await proxyCall(t, site.slug, site.origin, {
      url: `${base}/v1/x`,
      headers: { Authorization: 'Bearer {{NOT_STORED}}' },
    });
    assertError(res, 400, 'INVALID_REQUEST');
    assert.match(res.body.error, /NOT_STORED/);
    assert.equal(w.upstream.requests.length, 0);
  });

  test('SSRF and misuse attempts are refused and forward nothing', async () => {
    w.upstream.requests.length = 0;
    const cases: Array<[string, unknown, number, string]> = [
      ['an http URL', { url: `http://api.upstream.test:${w.upstream.port}/x` }, 400, 'INVALID_REQUEST'],
      [
        'a host not on the list',
        { url: `https://other.upstream.test:${w.upstream.port}/x` },
        403,
        'FORBIDDEN',
      ],
      ['an IP literal', { url: `https://127.0.0.1:${w.upstream.port}/x` }, 403, 'FORBIDDEN'],
      [
        'credentials in the URL',
        { url: `https://u:p@api.upstream.test:${w.upstream.port}/x` },
        400,
        'INVALID_REQUEST',
      ],
      ['no url', { method: 'GET' }, 400, 'INVALID_REQUEST'],
      ['a body on GET', { url: `${base}/x`, body: 'x' }, 400, 'INVALID_REQUEST'],
      ['a CONNECT method', { url: `${base}/x`, method: 'CONNECT' }, 400, 'INVALID_REQUEST'],
      [
        'a header with a line break',
        { url: `${base}/x`, headers: { 'x-a': 'a\r\nx-b: b' } },
        400,
        'INVALID_REQUEST',
      ],
      [
        'a body over 1 MB',
        { url: `${base}/x`, method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) },
        413,
        'INVALID_REQUEST',
      ],
    ];
    for (const [label, body, status, code] of cases) {
      const res = await proxyCall(t, site.slug, site.origin, body);
      assert.equal(res.status, status, `${label}: ${res.text}`);
      assert.equal(res.body.code, code, label);
    }
    // The Origin must be one of the site's, compared whole.
    for (const origin of [
      undefined,
      'https://evil.example',
      `http://other-site.localhost:${t.port}`,
      `https://${site.slug}.localhost:${t.port}`,
      `http://${site.slug}.localhost:${t.port + 1}`,
      'null',
    ]) {
      const res = await proxyCall(t, site.slug, origin, { url: `${base}/x` });
      assertError(res, 403, 'FORBIDDEN');
    }
    assert.equal(w.upstream.requests.length, 0, 'something was forwarded');
    // Unknown site before the origin check.
    assertError(await proxyCall(t, 'no-such-site-zz', site.origin, { url: `${base}/x` }), 404, 'NOT_FOUND');
  });

  test('a redirect is returned to the caller, not followed', async () => {
    w.upstream.requests.length = 0;
    w.upstream.handle = (_req, res) => {
      res.writeHead(302, { location: `https://other.upstream.test:${w.upstream.port}/stolen` });
      res.end();
    };
    // The test's own client must not follow it either.
    const res = await fetch(`${t.url}/api/v1/proxy/${site.slug}`, {
      method: 'POST',
      headers: { origin: site.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${base}/redirect` }),
      redirect: 'manual',
    });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `https://other.upstream.test:${w.upstream.port}/stolen`);
    assert.deepEqual(
      w.upstream.requests.map((r) => r.url),
      ['/redirect'],
    );
  });

  test('an upstream answer over 10 MB is refused with 502 UPSTREAM_ERROR', async () => {
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let i = 0; i < 11; i++) res.write(chunk);
      res.end();
    };
    assertError(await proxyCall(t, site.slug, site.origin, { url: `${base}/big` }), 502, 'UPSTREAM_ERROR');
  });

  test('an unreachable upstream answers 502 UPSTREAM_ERROR', async () => {
    // Allowlisted but resolving to nothing, and allowlisted but with no server on the port.
    assertError(
      await proxyCall(t, site.slug, site.origin, {
        url: `https://missing.upstream.test:${w.upstream.port}/x`,
      }),
      502,
      'UPSTREAM_ERROR',
    );
    assertError(
      await proxyCall(t, site.slug, site.origin, { url: 'https://api.upstream.test:1/x' }),
      502,
      'UPSTREAM_ERROR',
    );
  });

  test('pages of the site on its owner’s handle are an origin of the site too', async () => {
    await upgradeToHobby(t, site.key);
    assert.equal(
      (await t.api('/api/v1/handle', { method: 'PUT', key: site.key, body: { handle: 'proxy-owner' } }))
        .status,
      200,
    );
    const handleOrigin = `http://proxy-owner.localhost:${t.port}`;
    assertError(await proxyCall(t, site.slug, handleOrigin, { url: `${base}/h` }), 403, 'FORBIDDEN');
    const link = await t.api('/api/v1/links', {
      method: 'POST',
      key: site.key,
      body: { slug: site.slug, location: '/app' },
    });
    assert.equal(link.status, 201, link.text);
    w.upstream.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('via handle');
    };
    const res = await proxyCall(t, site.slug, handleOrigin, { url: `${base}/h` });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'via handle');
  });

  test('OPTIONS preflight from a page of the site is allowed; from another origin it is not', async () => {
    const ok = await t.api(`/api/v1/proxy/${site.slug}`, {
      method: 'OPTIONS',
      headers: { origin: site.origin, 'access-control-request-method': 'POST' },
    });
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), site.origin);
    assert.match(String(ok.headers.get('access-control-allow-methods')), /POST/);
    const no = await t.api(`/api/v1/proxy/${site.slug}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(no.status, 403);
    assert.equal(no.headers.get('access-control-allow-origin'), null);
  });
});

describe('POST /api/v1/proxy/:slug refuses internal addresses without PROXY_ALLOW_PRIVATE_ADDRESSES', () => {
  let w: World;
  let t: TestApp;
  before(async () => {
    w = await startWorld();
    t = await startTestApp({ PROXY_ENABLED: 'true', DNS_SERVERS: w.dns.server }, { proxyCa: w.upstream.ca });
  });
  after(async () => {
    await t.close();
    await w.upstream.close();
    await w.dns.close();
  });

  test('only port 443 is called: another port of an allowlisted host is refused before any lookup', async () => {
    const site = await siteWithSecrets(t, ['api.upstream.test']);
    const queries = w.dns.queries.length;
    for (const port of [8443, 80, 22, 6379, w.upstream.port]) {
      const res = await proxyCall(t, site.slug, site.origin, { url: `https://api.upstream.test:${port}/x` });
      assertError(res, 403, 'FORBIDDEN');
      assert.match(res.body.error, /443/);
    }
    assert.equal(w.dns.queries.length, queries, 'a refused port was resolved');
    // 443 spelled out passes the port rule (and is then refused on the address: 127.0.0.1).
    const explicit = await proxyCall(t, site.slug, site.origin, { url: 'https://api.upstream.test:443/x' });
    assertError(explicit, 403, 'FORBIDDEN');
    assert.match(explicit.body.error, /private|loopback|internal/);
    assert.equal(w.upstream.requests.length, 0);
  });

  test('allowlisted names resolving to 127.0.0.1, 10.0.0.1, 169.254.169.254 or ::ffff:127.0.0.1 are refused', async () => {
    const hosts = [
      'api.upstream.test',
      'private.upstream.test',
      'metadata.upstream.test',
      'mapped.upstream.test',
    ];
    const site = await siteWithSecrets(t, hosts);
    for (const host of hosts) {
      const res = await proxyCall(t, site.slug, site.origin, {
        url: `https://${host}/x`,
        headers: { authorization: 'Bearer {{STRIPE_SECRET_KEY}}' },
      });
      assertError(res, 403, 'FORBIDDEN');
      assert.match(res.body.error, new RegExp(host.replace(/\./g, '\\.')));
    }
    assert.equal(w.upstream.requests.length, 0, 'a request reached the internal upstream');
    // Each name was resolved (by the DNS peer), then refused on its address.
    for (const host of hosts) assert.ok(w.dns.queries.includes(host), `${host} was not resolved`);
  });
});
