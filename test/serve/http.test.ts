// HTTP semantics of served files: representation headers, validators and 304 (RFC 9110 §13), ranges
// (§14), HEAD, content codings with per-encoding ETags (§8.4, §8.8.3), and methods (§15.5.6).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite } from '../helpers/seed.js';
import { siteRequest } from './site-client.js';

const sha256 = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

describe('site HTTP', () => {
  let t: TestApp;
  let slug: string;
  const html = `<!doctype html><title>Page</title>${'<p>Lorem ipsum dolor sit amet.</p>\n'.repeat(300)}`;
  const css = 'body { color: #333; }\n'.repeat(200);
  const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(2000, 7)]);
  // Larger than the in-memory limit (256 KiB): streamed from the blob store.
  const big = Buffer.alloc(600 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  const tiny = 'ok';

  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      files: {
        'index.html': html,
        'assets/app.3f9a1c2b.css': css,
        'logo.png': png,
        'big.bin': big,
        'tiny.txt': tiny,
        'data.json': {
          body: JSON.stringify({ a: 1, list: Array.from({ length: 200 }, (_, i) => i) }),
          contentType: 'application/json',
        },
        'empty.txt': '',
      },
    }));
  });
  after(() => t.close());

  test('GET / carries Content-Type with charset, Content-Length, strong ETag, Last-Modified, Cache-Control, Accept-Ranges, nosniff', async () => {
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 200);
    assert.equal(res.text, html);
    assert.equal(res.header('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.header('content-length'), String(Buffer.byteLength(html)));
    assert.equal(res.header('etag'), `"${sha256(html)}"`);
    assert.ok(!Number.isNaN(Date.parse(res.header('last-modified') ?? '')));
    assert.equal(res.header('cache-control'), 'public, max-age=0, must-revalidate');
    assert.equal(res.header('accept-ranges'), 'bytes');
    assert.equal(res.header('x-content-type-options'), 'nosniff');
    assert.equal(res.header('vary'), 'Accept-Encoding');
    assert.equal(res.header('content-encoding'), undefined);
  });

  test('fingerprinted assets are immutable; images have no charset and no Vary', async () => {
    const asset = await siteRequest(t, slug, '/assets/app.3f9a1c2b.css');
    assert.equal(asset.header('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(asset.header('content-type'), 'text/css; charset=utf-8');
    const img = await siteRequest(t, slug, '/logo.png');
    assert.equal(img.header('content-type'), 'image/png');
    assert.equal(img.header('vary'), undefined);
    assert.deepEqual(img.body, png);
    const json = await siteRequest(t, slug, '/data.json');
    assert.equal(json.header('content-type'), 'application/json; charset=utf-8');
  });

  test('an empty file answers 200 with Content-Length 0', async () => {
    const res = await siteRequest(t, slug, '/empty.txt');
    assert.equal(res.status, 200);
    assert.equal(res.header('content-length'), '0');
    assert.equal(res.body.length, 0);
  });

  test('If-None-Match with the ETag answers 304 without a body (also W/ and lists)', async () => {
    const first = await siteRequest(t, slug, '/');
    const etag = first.header('etag')!;
    for (const value of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const res = await siteRequest(t, slug, '/', { headers: { 'if-none-match': value } });
      assert.equal(res.status, 304, value);
      assert.equal(res.body.length, 0);
      assert.equal(res.header('etag'), etag);
      assert.equal(res.header('cache-control'), 'public, max-age=0, must-revalidate');
      assert.equal(res.header('vary'), 'Accept-Encoding');
    }
    const miss = await siteRequest(t, slug, '/', { headers: { 'if-none-match': '"other"' } });
    assert.equal(miss.status, 200);
  });

  test('If-Modified-Since at or after Last-Modified answers 304; before answers 200', async () => {
    const first = await siteRequest(t, slug, '/logo.png');
    const lastModified = first.header('last-modified')!;
    const same = await siteRequest(t, slug, '/logo.png', { headers: { 'if-modified-since': lastModified } });
    assert.equal(same.status, 304);
    const earlier = new Date(Date.parse(lastModified) - 60_000).toUTCString();
    const older = await siteRequest(t, slug, '/logo.png', { headers: { 'if-modified-since': earlier } });
    assert.equal(older.status, 200);
    // If-None-Match takes precedence over If-Modified-Since (RFC 9110 §13.2.2).
    const both = await siteRequest(t, slug, '/logo.png', {
      headers: { 'if-none-match': '"other"', 'if-modified-since': lastModified },
    });
    assert.equal(both.status, 200);
  });

  test('a single Range answers 206 with Content-Range and the bytes', async () => {
    const res = await siteRequest(t, slug, '/logo.png', { headers: { range: 'bytes=0-3' } });
    assert.equal(res.status, 206);
    assert.equal(res.header('content-range'), `bytes 0-3/${png.length}`);
    assert.equal(res.header('content-length'), '4');
    assert.deepEqual(res.body, png.subarray(0, 4));
    const suffix = await siteRequest(t, slug, '/logo.png', { headers: { range: 'bytes=-10' } });
    assert.equal(suffix.status, 206);
    assert.deepEqual(suffix.body, png.subarray(png.length - 10));
    const open = await siteRequest(t, slug, '/logo.png', { headers: { range: 'bytes=1000-' } });
    assert.deepEqual(open.body, png.subarray(1000));
  });

  test('an unsatisfiable Range answers 416 with Content-Range bytes */size', async () => {
    const res = await siteRequest(t, slug, '/logo.png', { headers: { range: `bytes=${png.length}-` } });
    assert.equal(res.status, 416);
    assert.equal(res.header('content-range'), `bytes */${png.length}`);
  });

  test('several ranges or a malformed Range are ignored (200 with the whole file)', async () => {
    for (const range of ['bytes=0-1,4-5', 'bytes=x-y', 'items=0-1']) {
      const res = await siteRequest(t, slug, '/logo.png', { headers: { range } });
      assert.equal(res.status, 200, range);
      assert.deepEqual(res.body, png);
    }
  });

  test('If-Range with a stale ETag sends the whole file; with the current ETag the range', async () => {
    const etag = `"${sha256(png)}"`;
    const stale = await siteRequest(t, slug, '/logo.png', {
      headers: { range: 'bytes=0-3', 'if-range': '"old"' },
    });
    assert.equal(stale.status, 200);
    const fresh = await siteRequest(t, slug, '/logo.png', {
      headers: { range: 'bytes=0-3', 'if-range': etag },
    });
    assert.equal(fresh.status, 206);
  });

  test('large files are streamed, whole and by range', async () => {
    const whole = await siteRequest(t, slug, '/big.bin');
    assert.equal(whole.status, 200);
    assert.equal(whole.header('content-length'), String(big.length));
    assert.ok(whole.body.equals(big));
    const part = await siteRequest(t, slug, '/big.bin', { headers: { range: 'bytes=300000-300099' } });
    assert.equal(part.status, 206);
    assert.ok(part.body.equals(big.subarray(300000, 300100)));
  });

  test('HEAD answers the GET headers without a body', async () => {
    const get = await siteRequest(t, slug, '/');
    const head = await siteRequest(t, slug, '/', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    for (const name of ['content-type', 'content-length', 'etag', 'last-modified', 'cache-control']) {
      assert.equal(head.header(name), get.header(name), name);
    }
    const big404 = await siteRequest(t, slug, '/missing', { method: 'HEAD' });
    assert.equal(big404.status, 404);
    assert.equal(big404.body.length, 0);
    const headBig = await siteRequest(t, slug, '/big.bin', { method: 'HEAD' });
    assert.equal(headBig.header('content-length'), String(big.length));
    assert.equal(headBig.body.length, 0);
  });

  test('Accept-Encoding br serves brotli with a per-encoding ETag and Vary', async () => {
    const res = await siteRequest(t, slug, '/', { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(res.status, 200);
    assert.equal(res.header('content-encoding'), 'br');
    assert.equal(res.header('vary'), 'Accept-Encoding');
    assert.equal(res.header('etag'), `"${sha256(html)}-br"`);
    assert.equal(res.header('content-length'), String(res.body.length));
    assert.ok(res.body.length < Buffer.byteLength(html));
    assert.equal(brotliDecompressSync(res.body).toString(), html);
    // The brotli ETag revalidates the brotli representation.
    const again = await siteRequest(t, slug, '/', {
      headers: { 'accept-encoding': 'br', 'if-none-match': res.header('etag')! },
    });
    assert.equal(again.status, 304);
    assert.equal(again.header('etag'), `"${sha256(html)}-br"`);
  });

  test('Accept-Encoding gzip serves gzip with its own ETag', async () => {
    const res = await siteRequest(t, slug, '/assets/app.3f9a1c2b.css', {
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(res.header('content-encoding'), 'gzip');
    assert.equal(res.header('etag'), `"${sha256(css)}-gzip"`);
    assert.equal(res.header('vary'), 'Accept-Encoding');
    assert.equal(gunzipSync(res.body).toString(), css);
    const head = await siteRequest(t, slug, '/assets/app.3f9a1c2b.css', {
      method: 'HEAD',
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(head.header('content-length'), res.header('content-length'));
  });

  test('compressed variants are computed once and reused (same bytes every time)', async () => {
    const a = await siteRequest(t, slug, '/data.json', { headers: { 'accept-encoding': 'br' } });
    const b = await siteRequest(t, slug, '/data.json', { headers: { 'accept-encoding': 'br' } });
    assert.equal(a.header('content-encoding'), 'br');
    assert.ok(a.body.equals(b.body));
  });

  test('no compression for images, tiny files, or when the client does not accept it', async () => {
    const img = await siteRequest(t, slug, '/logo.png', { headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(img.header('content-encoding'), undefined);
    const small = await siteRequest(t, slug, '/tiny.txt', { headers: { 'accept-encoding': 'br' } });
    assert.equal(small.header('content-encoding'), undefined);
    assert.equal(small.text, tiny);
    const none = await siteRequest(t, slug, '/', { headers: { 'accept-encoding': 'identity' } });
    assert.equal(none.header('content-encoding'), undefined);
    const refused = await siteRequest(t, slug, '/', { headers: { 'accept-encoding': 'br;q=0, gzip;q=0' } });
    assert.equal(refused.header('content-encoding'), undefined);
  });

  test('a Range on a compressible file is served from the identity bytes', async () => {
    const res = await siteRequest(t, slug, '/', {
      headers: { 'accept-encoding': 'br', range: 'bytes=0-14' },
    });
    assert.equal(res.status, 206);
    assert.equal(res.header('content-encoding'), undefined);
    assert.equal(res.text, html.slice(0, 15));
    assert.equal(res.header('etag'), `"${sha256(html)}"`);
  });

  for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    test(`${method} answers 405 with Allow: GET, HEAD`, async () => {
      const res = await siteRequest(t, slug, '/', { method });
      assert.equal(res.status, 405);
      assert.equal(res.header('allow'), 'GET, HEAD');
    });
  }

  test('site responses are counted by status in /metrics (on the API host)', async () => {
    await siteRequest(t, slug, '/');
    await siteRequest(t, slug, '/nothing-here');
    const metrics = await t.api('/metrics');
    assert.match(metrics.text, /slipway_site_responses_total\{status="200"\} [1-9]/);
    assert.match(metrics.text, /slipway_site_responses_total\{status="404"\} [1-9]/);
  });

  test('POST to a site without a password answers 405', async () => {
    const res = await siteRequest(t, slug, '/', { method: 'POST', body: 'x=1' });
    assert.equal(res.status, 405);
    assert.equal(res.header('allow'), 'GET, HEAD');
  });
});

// Issue 19 item 6: one site could set cookies on the parent SITE_DOMAIN until every other site's requests
// were refused (431) in that browser. A site host reads only its gate cookie, so the largest Cookie header
// a browser sends is served: Chromium and Firefox keep up to 180 cookies per registrable domain, each
// up to 4096 bytes of name and value (Chromium's CookieMonster kDomainMaxCookies; RFC 6265bis §5.5).
const BROWSER_MAX_COOKIES = 180;
const BROWSER_MAX_COOKIE_BYTES = 4096;

/** The Cookie header of a full jar: 180 cookies of 4096 bytes each, about 720 KiB. */
function fullCookieJar(): string {
  return Array.from({ length: BROWSER_MAX_COOKIES }, (_, i) => {
    const name = `tossed${i}`;
    return `${name}=${'v'.repeat(BROWSER_MAX_COOKIE_BYTES - name.length)}`;
  }).join('; ');
}

for (const fastPath of ['true', 'false']) {
  describe(`the largest Cookie header a browser sends (SERVE_FAST_PATH=${fastPath})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp({ SERVE_FAST_PATH: fastPath });
    });
    after(() => t.close());

    test('a site answers 200 with the page', async () => {
      const { slug } = await seedSite(t.ctx, { files: { 'index.html': '<h1>still here</h1>' } });
      const cookie = fullCookieJar();
      assert.ok(cookie.length > 700 * 1024);
      for (const method of ['GET', 'HEAD']) {
        const res = await siteRequest(t, slug, '/', { method, headers: { cookie } });
        assert.equal(res.status, 200, `${method} ${res.text.slice(0, 200)}`);
        assert.equal(res.text, method === 'GET' ? '<h1>still here</h1>' : '');
      }
    });

    test('a protected site finds its session cookie among them, and behind a tossed cookie of the same name', async () => {
      const { slug } = await seedSite(t.ctx, { password: 'pw', files: { 'index.html': 'locked page' } });
      const signedIn = await siteRequest(t, slug, '/', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'password=pw',
      });
      assert.equal(signedIn.status, 303);
      const session = String(signedIn.headers['set-cookie']).split(';', 1)[0]!;
      const [name] = session.split('=', 1);
      // Browsers send a parent-domain cookie created earlier before the host's own (RFC 6265 §5.4 step 2).
      const cookie = `${name}=tossed-by-another-site; ${fullCookieJar()}; ${session}`;
      const res = await siteRequest(t, slug, '/', { headers: { cookie } });
      assert.equal(res.status, 200, res.text.slice(0, 200));
      assert.equal(res.text, 'locked page');
    });

    test("a head beyond any browser's jar is still refused with 431 and the error body", async () => {
      const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'x' } });
      // Repeated: the client is still sending when the answer comes, and closing at once reset about one
      // connection in five over TLS (the client saw ECONNRESET, not the 431).
      for (let i = 0; i < 20; i++) {
        const res = await siteRequest(t, slug, '/', {
          headers: { cookie: `a=${'v'.repeat(2 * 1024 * 1024)}` },
        });
        assert.equal(res.status, 431);
        assert.equal(JSON.parse(res.text).status, 431);
      }
    });
  });
}
