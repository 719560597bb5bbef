// `_redirects` and `_headers` (Netlify / Cloudflare Pages conventions) applied by the site server.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite, seedVersion } from '../helpers/seed.js';
import { siteRequest } from './site-client.js';

describe('_redirects', () => {
  let t: TestApp;
  let slug: string;
  let spa: string;

  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      files: {
        'index.html': 'home',
        'about.html': 'about page',
        'news/index.html': 'news index',
        'gone.html': 'gone page',
        'legacy.html': 'legacy file',
        'forced.html': 'forced file',
        _redirects: [
          '# comments and blank lines are fine',
          '',
          '/home              /                 301',
          '/temp              /about            302',
          '/blog/*            /news/:splat      301',
          '/posts/:year/:id   /news/:id?y=:year 308',
          '/ext               https://example.com/landing',
          '/legacy.html       /about            301',
          '/forced.html       /about            301!',
          '/internal          /about            200',
          '/old-page          /gone             404',
          '/bad line with too many fields here',
        ].join('\n'),
      },
    }));
    ({ slug: spa } = await seedSite(t.ctx, {
      files: {
        'index.html': '<div id="app"></div>',
        'app.js': 'console.log(1)',
        _redirects: '/api/*  https://api.example.com/:splat  302\n/*  /index.html  200\n',
      },
    }));
  });
  after(() => t.close());

  const redirects: Array<[string, number, string]> = [
    ['/home', 301, '/'],
    ['/temp', 302, '/about'],
    ['/blog/2024/hello', 301, '/news/2024/hello'],
    ['/blog/2024/hello?ref=x', 301, '/news/2024/hello?ref=x'],
    ['/posts/2023/42', 308, '/news/42?y=2023'],
    ['/ext', 301, 'https://example.com/landing'],
    ['/ext?a=1', 301, 'https://example.com/landing?a=1'],
  ];
  for (const [path, status, location] of redirects) {
    test(`GET ${path} redirects ${status} to ${location}`, async () => {
      const res = await siteRequest(t, slug, path);
      assert.equal(res.status, status);
      assert.equal(res.header('location'), location);
    });
  }

  test('a file at the path shadows an unforced rule (Netlify default)', async () => {
    const res = await siteRequest(t, slug, '/legacy.html');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'legacy file');
  });

  test('a forced rule (!) applies even when a file exists at the path', async () => {
    const res = await siteRequest(t, slug, '/forced.html');
    assert.equal(res.status, 301);
    assert.equal(res.header('location'), '/about');
  });

  test('a 200 rule rewrites: the target content under the requested URL', async () => {
    const res = await siteRequest(t, slug, '/internal');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'about page');
    assert.equal(res.header('location'), undefined);
  });

  test('a 404 rule serves the target content with status 404', async () => {
    const res = await siteRequest(t, slug, '/old-page');
    assert.equal(res.status, 404);
    assert.equal(res.text, 'gone page');
  });

  test('SPA fallback: /* /index.html 200 serves index.html for unknown paths, files stay files', async () => {
    const deep = await siteRequest(t, spa, '/users/42/profile');
    assert.equal(deep.status, 200);
    assert.equal(deep.text, '<div id="app"></div>');
    assert.equal(deep.header('content-type'), 'text/html; charset=utf-8');
    assert.ok(deep.header('etag'));
    const js = await siteRequest(t, spa, '/app.js');
    assert.equal(js.text, 'console.log(1)');
    const api = await siteRequest(t, spa, '/api/v1/items?limit=2');
    assert.equal(api.status, 302);
    assert.equal(api.header('location'), 'https://api.example.com/v1/items?limit=2');
  });

  test('a protocol-relative splat cannot turn a redirect into another host', async () => {
    const res = await siteRequest(t, slug, '/blog//evil.example/x');
    if (res.status === 301) assert.ok(!res.header('location')!.startsWith('//'), res.header('location'));
    else assert.ok(res.status === 400 || res.status === 404);
  });

  test('rules follow the live version', async () => {
    const { slug: s } = await seedSite(t.ctx, { files: { 'index.html': 'x', _redirects: '/a /b 302' } });
    assert.equal((await siteRequest(t, s, '/a')).status, 302);
    await seedVersion(t.ctx, s, { 'index.html': 'x', _redirects: '/a /c 301' });
    const res = await siteRequest(t, s, '/a');
    assert.equal(res.status, 301);
    assert.equal(res.header('location'), '/c');
  });
});

describe('_headers', () => {
  let t: TestApp;
  let slug: string;

  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      files: {
        'index.html': 'home page with enough text to compress well '.repeat(20),
        'assets/app.js': 'console.log("app")',
        'about.html': 'about',
        _headers: [
          '/*',
          '  X-Frame-Options: DENY',
          '  Referrer-Policy: no-referrer',
          '/assets/*',
          '  Cache-Control: public, max-age=600',
          '  Access-Control-Allow-Origin: *',
          '/about',
          '  X-Robots-Tag: noindex',
          '  Set-Cookie: evil=1',
          '  Content-Length: 1',
        ].join('\n'),
      },
    }));
  });
  after(() => t.close());

  test('headers of every matching rule are applied to served files', async () => {
    const home = await siteRequest(t, slug, '/');
    assert.equal(home.header('x-frame-options'), 'DENY');
    assert.equal(home.header('referrer-policy'), 'no-referrer');
    assert.equal(home.header('cache-control'), 'public, max-age=0, must-revalidate');
    const js = await siteRequest(t, slug, '/assets/app.js');
    assert.equal(js.header('x-frame-options'), 'DENY');
    assert.equal(js.header('cache-control'), 'public, max-age=600');
    assert.equal(js.header('access-control-allow-origin'), '*');
    assert.equal(js.text, 'console.log("app")');
  });

  test('rules match the request path (pretty URL) and forbidden headers are never sent', async () => {
    const pretty = await siteRequest(t, slug, '/about');
    assert.equal(pretty.header('x-robots-tag'), 'noindex');
    assert.equal(pretty.header('set-cookie'), undefined);
    assert.equal(pretty.header('content-length'), '5');
    const direct = await siteRequest(t, slug, '/about.html');
    assert.equal(direct.header('x-robots-tag'), undefined);
    assert.equal(direct.header('x-frame-options'), 'DENY');
  });

  test('custom headers also apply to compressed variants and to 304', async () => {
    const br = await siteRequest(t, slug, '/', { headers: { 'accept-encoding': 'br' } });
    assert.equal(br.header('content-encoding'), 'br');
    assert.equal(br.header('x-frame-options'), 'DENY');
    const js = await siteRequest(t, slug, '/assets/app.js');
    const revalidated = await siteRequest(t, slug, '/assets/app.js', {
      headers: { 'if-none-match': js.header('etag')! },
    });
    assert.equal(revalidated.status, 304);
    assert.equal(revalidated.header('cache-control'), 'public, max-age=600');
  });
});
