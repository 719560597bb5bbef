// Path resolution of served sites (CONTRACT "Serving"): index files, pretty URLs, folder redirects, 404s,
// and traversal attempts that must never reach outside the site's manifest.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite } from '../helpers/seed.js';
import { hostRequest, siteRequest } from './site-client.js';

describe('site paths', () => {
  let t: TestApp;
  let slug: string;
  let bare: string;

  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      files: {
        'index.html': '<h1>home</h1>',
        'about.html': '<h1>about</h1>',
        'notes.txt': 'plain notes',
        'docs/index.html': '<h1>docs</h1>',
        'docs/guide.html': '<h1>guide</h1>',
        'blog/index.html': '<h1>blog</h1>',
        'caf\u00e9 menu.html': '<h1>menu</h1>',
        '404.html': '<h1>custom missing page</h1>',
        _redirects: '/old /about 301\n',
        _headers: '/*\n  X-Site: yes\n',
      },
    }));
    ({ slug: bare } = await seedSite(t.ctx, { files: { 'index.html': 'bare home' } }));
  });
  after(() => t.close());

  const cases: Array<[string, number, string | RegExp]> = [
    ['/', 200, '<h1>home</h1>'],
    ['/index.html', 200, '<h1>home</h1>'],
    ['/about', 200, '<h1>about</h1>'],
    ['/about.html', 200, '<h1>about</h1>'],
    ['/notes.txt', 200, 'plain notes'],
    ['/docs/', 200, '<h1>docs</h1>'],
    ['/docs/guide', 200, '<h1>guide</h1>'],
    ['/docs/guide.html', 200, '<h1>guide</h1>'],
    ['/docs/index.html', 200, '<h1>docs</h1>'],
    ['/caf%C3%A9%20menu', 200, '<h1>menu</h1>'],
    ['/?utm_source=x', 200, '<h1>home</h1>'],
    ['/about?x=1&y=2', 200, '<h1>about</h1>'],
  ];
  for (const [path, status, body] of cases) {
    test(`GET ${path} answers ${status} with the right file`, async () => {
      const res = await siteRequest(t, slug, path);
      assert.equal(res.status, status);
      if (typeof body === 'string') assert.equal(res.text, body);
      else assert.match(res.text, body);
    });
  }

  test('GET /docs (a folder named without its slash) answers 301 to /docs/, keeping the query', async () => {
    const res = await siteRequest(t, slug, '/docs?tab=2');
    assert.equal(res.status, 301);
    assert.equal(res.header('location'), '/docs/?tab=2');
    const plain = await siteRequest(t, slug, '/blog');
    assert.equal(plain.status, 301);
    assert.equal(plain.header('location'), '/blog/');
  });

  test('GET of a missing file serves the site 404.html with status 404', async () => {
    const res = await siteRequest(t, slug, '/no/such/page');
    assert.equal(res.status, 404);
    assert.equal(res.text, '<h1>custom missing page</h1>');
    assert.match(res.header('content-type') ?? '', /^text\/html; charset=utf-8$/);
    assert.equal(res.header('etag'), undefined, 'a 404 carries no validator');
  });

  test('GET of a missing file on a site without 404.html serves the plain 404 page', async () => {
    const res = await siteRequest(t, bare, '/missing');
    assert.equal(res.status, 404);
    assert.match(res.text, /404/);
    assert.equal(res.header('cache-control'), 'no-store');
  });

  test('GET /docs/missing/ (a folder without index.html) answers 404', async () => {
    const res = await siteRequest(t, slug, '/docs/missing/');
    assert.equal(res.status, 404);
  });

  test('_redirects and _headers themselves are never served', async () => {
    for (const path of ['/_redirects', '/_headers']) {
      const res = await siteRequest(t, slug, path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.text, /X-Site|\/old/);
    }
  });

  test('an unknown site host answers the 404 page', async () => {
    const res = await hostRequest(t, `no-such-site.localhost:${t.port}`, '/');
    assert.equal(res.status, 404);
    assert.match(res.text, /404/);
    const deep = await hostRequest(t, `a.b.localhost:${t.port}`, '/');
    assert.equal(deep.status, 404);
    const other = await hostRequest(t, 'example.org', '/');
    assert.equal(other.status, 404);
  });

  test('a Host with upper case letters and a trailing dot finds the site', async () => {
    const res = await hostRequest(t, `${slug.toUpperCase()}.LOCALHOST.:${t.port}`, '/about');
    assert.equal(res.status, 200);
    assert.equal(res.text, '<h1>about</h1>');
  });

  test('site requests never reach the API and are not rate limited', async () => {
    const res = await siteRequest(t, slug, '/api/v1/account');
    assert.equal(res.status, 404);
    assert.equal(res.text, '<h1>custom missing page</h1>');
    assert.equal(res.header('x-ratelimit-limit'), undefined);
  });

  describe('traversal attempts', () => {
    const attempts = [
      '/%2e%2e/',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/..%2f..%2fetc%2fpasswd',
      '/docs/..%2f..%2fslipway.db',
      '//etc/passwd',
      '/\\..\\secrets.key',
      '/%5c..%5csecrets.key',
      '/docs/../index.html',
      '/./index.html',
      '/%00index.html',
      '/index.html%00',
      '/%252e%252e/secrets.key',
      '/..',
      '/%zz',
      '/docs//guide.html',
    ];
    for (const path of attempts) {
      test(`GET ${path} answers 400 or 404 and serves nothing outside the site`, async () => {
        const res = await siteRequest(t, slug, path);
        assert.ok(res.status === 400 || res.status === 404, `${path}: ${res.status}`);
        assert.doesNotMatch(res.text, /root:|<h1>home<\/h1>|<h1>guide<\/h1>|BEGIN|sqlite/i);
      });
    }

    test('absolute-form request targets are served by path only', async () => {
      const res = await siteRequest(t, slug, `http://${slug}.localhost:${t.port}/about`);
      assert.equal(res.status, 200);
      assert.equal(res.text, '<h1>about</h1>');
    });
  });
});
