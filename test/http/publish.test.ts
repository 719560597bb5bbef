// POST /api/v1/publish, finalize and PUT /api/v1/publish/:slug through real HTTP (spec "Sites",
// CONTRACT "Identity, ownership and URLs", "Versions", "Request bodies").

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import {
  assertPublished,
  type Files,
  manifestOf,
  publish,
  putUpload,
  sha256,
  update,
  uploadAll,
} from '../helpers/publish.js';

/** DNS label: what a slug must be to sit in `<slug>.<site domain>`. */
const SLUG_GRAMMAR = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const SITE: Files = {
  'index.html': '<!doctype html><h1>Hello</h1>',
  'css/site.css': 'body { color: red }',
  'img/logo.png': { body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), contentType: 'image/png' },
};

function create(t: TestApp, body: unknown, key?: string) {
  return t.api('/api/v1/publish', { method: 'POST', body, ...(key ? { key } : {}) });
}

function assertError(res: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: unknown; code: unknown; status: unknown };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
  assert.ok((body.error as string).length > 0);
}

async function siteCount(t: TestApp): Promise<number> {
  const row = await t.ctx.db.kysely
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function assertUploadPlan(t: TestApp, body: { slug: string; upload: Record<string, unknown> }, files: Files) {
  const base = `http://localhost:${t.port}`;
  const upload = body.upload;
  assert.deepEqual(Object.keys(upload).sort(), [
    'expiresInSeconds',
    'finalizeUrl',
    'skipped',
    'uploads',
    'versionId',
  ]);
  assert.equal(typeof upload.versionId, 'string');
  assert.ok((upload.versionId as string).length > 0);
  assert.deepEqual(upload.skipped, []);
  assert.equal(upload.finalizeUrl, `${base}/api/v1/publish/${body.slug}/finalize`);
  assert.equal(upload.expiresInSeconds, 3600);
  const manifest = manifestOf(files);
  const uploads = upload.uploads as Array<Record<string, unknown>>;
  assert.deepEqual(
    uploads.map((u) => u.path),
    manifest.map((f) => f.path),
  );
  const nowS = Math.floor(t.clock.now() / 1000);
  for (const [i, u] of uploads.entries()) {
    const f = manifest[i]!;
    assert.deepEqual(Object.keys(u).sort(), ['headers', 'method', 'path', 'url']);
    assert.equal(u.method, 'PUT');
    assert.deepEqual(u.headers, { 'Content-Type': f.contentType });
    const url = new URL(u.url as string);
    assert.equal(url.origin, base);
    assert.ok(url.pathname.startsWith('/api/v1/_upload/'), url.pathname);
    assert.ok((url.searchParams.get('token') ?? '').length >= 16, 'token in the query');
    assert.equal(url.searchParams.get('ct'), f.contentType);
    const exp = Number(url.searchParams.get('exp'));
    assert.ok(Math.abs(exp - (nowS + 3600)) <= 5, `exp ${exp} is about now + 3600 s`);
  }
  // Every address is distinct (one address per file).
  assert.equal(new Set(uploads.map((u) => u.url)).size, uploads.length);
}

describe('POST /api/v1/publish', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'owner@example.com');
  });
  after(() => t.close());

  test('POST /api/v1/publish returns 201 with slug, siteUrl and the upload plan for an owned site', async () => {
    const res = await create(t, { files: manifestOf(SITE) }, key);
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['siteUrl', 'slug', 'upload']);
    assert.match(res.body.slug, SLUG_GRAMMAR);
    assert.ok(res.body.slug.length >= 3 && res.body.slug.length <= 63);
    assert.equal(res.body.siteUrl, `http://${res.body.slug}.localhost:${t.port}/`);
    assertUploadPlan(t, res.body, SITE);
    assert.ok(!('claimToken' in res.body) && !('anonymous' in res.body));
  });

  test('POST /api/v1/publish without a key returns 201 with claimToken, claimUrl, expiresAt +24h, anonymous and warning', async () => {
    const res = await create(t, { files: manifestOf(SITE) });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'anonymous',
      'claimToken',
      'claimUrl',
      'expiresAt',
      'siteUrl',
      'slug',
      'upload',
      'warning',
    ]);
    const { slug, claimToken, claimUrl, expiresAt } = res.body;
    assert.match(slug, SLUG_GRAMMAR);
    assert.equal(res.body.siteUrl, `http://${slug}.localhost:${t.port}/`);
    assert.equal(res.body.anonymous, true);
    assert.equal(typeof claimToken, 'string');
    assert.ok(claimToken.length >= 16);
    const url = new URL(claimUrl);
    assert.equal(`${url.origin}${url.pathname}`, `http://localhost:${t.port}/claim`);
    assert.equal(url.searchParams.get('slug'), slug);
    assert.equal(url.searchParams.get('token'), claimToken);
    assert.match(expiresAt, ISO);
    assert.ok(Math.abs(Date.parse(expiresAt) - (t.clock.now() + 24 * 3_600_000)) < 10_000);
    assert.equal(typeof res.body.warning, 'string');
    assert.ok(res.body.warning.length > 0);
    assertUploadPlan(t, res.body, SITE);
  });

  test('POST /api/v1/publish returns an empty skipped list on create even for bytes already stored', async () => {
    assertPublished(await publish(t, { 'a.txt': 'already stored bytes' }, { key }));
    const res = await create(t, { files: manifestOf({ 'a.txt': 'already stored bytes' }) }, key);
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.upload.skipped, []);
    assert.deepEqual(
      res.body.upload.uploads.map((u: { path: string }) => u.path),
      ['a.txt'],
    );
  });

  test('POST /api/v1/publish issues a new slug each time', async () => {
    const a = await create(t, { files: manifestOf(SITE) }, key);
    const b = await create(t, { files: manifestOf(SITE) }, key);
    assert.notEqual(a.body.slug, b.body.slug);
    assert.notEqual(a.body.upload.versionId, b.body.upload.versionId);
  });

  test('POST /api/v1/publish accepts 1000 files and refuses 1001 with 400', async () => {
    const files = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ path: `f/${i}.txt`, size: 1, contentType: 'text/plain' }));
    const ok = await create(t, { files: files(1000) }, key);
    assert.equal(ok.status, 201, ok.text.slice(0, 300));
    assert.equal(ok.body.upload.uploads.length, 1000);
    const before = await siteCount(t);
    const tooMany = await create(t, { files: files(1001) }, key);
    assertError(tooMany, 400, 'INVALID_REQUEST');
    assert.match(tooMany.body.error, /1000/);
    assert.equal(await siteCount(t), before, 'no site is created');
  });

  test('POST /api/v1/publish refuses an empty manifest with 400', async () => {
    assertError(await create(t, { files: [] }, key), 400, 'INVALID_REQUEST');
    assertError(await create(t, {}, key), 400, 'INVALID_REQUEST');
  });

  for (const [name, path] of [
    ['a leading /', '/index.html'],
    ['a .. segment', '../index.html'],
    ['a .. segment in the middle', 'a/../b.html'],
    ['a null byte', 'a\u0000b.html'],
    ['a backslash', 'a\\b.html'],
    ['an empty segment', 'a//b.html'],
    ['501 characters', `${'a'.repeat(496)}.html`],
  ] as const) {
    test(`POST /api/v1/publish refuses a path with ${name} with 400 INVALID_PATH`, async () => {
      const res = await create(
        t,
        {
          files: [
            { path: 'ok.html', size: 1, contentType: 'text/html' },
            { path, size: 1, contentType: 'text/html' },
          ],
        },
        key,
      );
      assertError(res, 400, 'INVALID_PATH');
    });
  }

  test('POST /api/v1/publish accepts a path of exactly 500 characters', async () => {
    const path = `${'a'.repeat(495)}.html`;
    assert.equal(path.length, 500);
    const res = await create(t, { files: [{ path, size: 1, contentType: 'text/html' }] }, key);
    assert.equal(res.status, 201, res.text);
  });

  test('POST /api/v1/publish refuses duplicate paths with 400 INVALID_PATH', async () => {
    const res = await create(
      t,
      {
        files: [
          { path: 'index.html', size: 1, contentType: 'text/html' },
          { path: 'index.html', size: 2, contentType: 'text/html' },
        ],
      },
      key,
    );
    assertError(res, 400, 'INVALID_PATH');
    assert.match(res.body.error, /index\.html/);
  });

  test('POST /api/v1/publish refuses two paths that are one name in Unicode (NFC and NFD) with 400 INVALID_PATH', async () => {
    const res = await create(
      t,
      {
        files: [
          { path: 'caf\u00e9.html', size: 1, contentType: 'text/html' },
          { path: 'cafe\u0301.html', size: 2, contentType: 'text/html' },
        ],
      },
      key,
    );
    assertError(res, 400, 'INVALID_PATH');
  });

  test('a path published in decomposed form (as macOS names files) is served at its composed URL too', async () => {
    const decomposed = 'cafe\u0301/men\u0303u.html';
    const slug = assertPublished(await publish(t, { [decomposed]: '<p>menu</p>' }, { key })).slug;
    for (const path of ['caf%C3%A9/me%C3%B1u.html', 'cafe%CC%81/men%CC%83u.html', 'caf%C3%A9/me%C3%B1u']) {
      const res = await rawRequest(t.port, { host: `${slug}.localhost:${t.port}`, path: `/${path}` });
      assert.equal(res.status, 200, path);
      assert.equal(res.body.toString(), '<p>menu</p>');
    }
  });

  for (const [name, hash] of [
    ['uppercase hex', 'A'.repeat(64)],
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['non-hex characters', 'g'.repeat(64)],
  ] as const) {
    test(`POST /api/v1/publish refuses a hash of ${name} with 400 INVALID_HASH`, async () => {
      const res = await create(
        t,
        { files: [{ path: 'a.txt', size: 1, contentType: 'text/plain', hash }] },
        key,
      );
      assertError(res, 400, 'INVALID_HASH');
    });
  }

  for (const size of [0, -1, 1.5, '10']) {
    test(`POST /api/v1/publish refuses size ${JSON.stringify(size)} with 400`, async () => {
      const res = await create(t, { files: [{ path: 'a.txt', size, contentType: 'text/plain' }] }, key);
      assertError(res, 400, 'INVALID_REQUEST');
    });
  }

  for (const contentType of ['', 'text', 'not a mime type', 'text/html; charset', 'text/ html']) {
    test(`POST /api/v1/publish refuses contentType ${JSON.stringify(contentType)} with 400`, async () => {
      const res = await create(t, { files: [{ path: 'a.txt', size: 1, contentType }] }, key);
      assertError(res, 400, 'INVALID_REQUEST');
    });
  }

  test('POST /api/v1/publish refuses a viewer.ogImagePath that is not in the manifest or not an image with 400', async () => {
    const files = manifestOf(SITE);
    const missing = await create(t, { files, viewer: { ogImagePath: 'img/other.png' } }, key);
    assertError(missing, 400, 'INVALID_REQUEST');
    const notImage = await create(t, { files, viewer: { ogImagePath: 'index.html' } }, key);
    assertError(notImage, 400, 'INVALID_REQUEST');
    const ok = await create(
      t,
      { files, viewer: { title: 'My site', description: 'About', ogImagePath: 'img/logo.png' } },
      key,
    );
    assert.equal(ok.status, 201, ok.text);
    const details = await t.api(`/api/v1/publish/${ok.body.slug}`, { key });
    assert.equal(details.body.title, 'My site');
    assert.equal(details.body.description, 'About');
    assert.equal(details.body.ogImagePath, 'img/logo.png');
  });

  test('POST /api/v1/publish with an invalid key answers 401 and creates no anonymous site', async () => {
    const before = await siteCount(t);
    for (const authorization of [`Bearer svc_live_${'0'.repeat(32)}`, 'Bearer nope']) {
      const res = await t.api('/api/v1/publish', {
        method: 'POST',
        body: { files: manifestOf(SITE) },
        headers: { authorization },
      });
      assertError(res, 401, 'UNAUTHORIZED');
    }
    assert.equal(await siteCount(t), before);
  });

  test('POST /api/v1/publish with malformed JSON answers 400', async () => {
    const res = await t.api('/api/v1/publish', {
      method: 'POST',
      body: '{"files": [',
      headers: { 'content-type': 'application/json' },
      key,
    });
    assertError(res, 400, 'INVALID_REQUEST');
  });
});

describe('POST /api/v1/publish plan limits', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp({
      PLAN_FREE_MAX_SITES: '2',
      PLAN_FREE_MAX_STORAGE_BYTES: '1000',
      PLAN_FREE_MAX_FILE_SIZE_BYTES: '600',
    });
    key = await signIn(t, 'limits@example.com');
  });
  after(() => t.close());

  test('POST /api/v1/publish refuses a file over the plan file size with 413 FILE_TOO_LARGE', async () => {
    const res = await create(
      t,
      { files: [{ path: 'big.bin', size: 601, contentType: 'application/octet-stream' }] },
      key,
    );
    assertError(res, 413, 'FILE_TOO_LARGE');
    const anon = await create(t, {
      files: [{ path: 'big.bin', size: 601, contentType: 'application/octet-stream' }],
    });
    assertError(anon, 413, 'FILE_TOO_LARGE');
  });

  test('POST /api/v1/publish refuses a manifest over the plan storage with 413 STORAGE_EXCEEDED', async () => {
    const files = [
      { path: 'a.bin', size: 600, contentType: 'application/octet-stream' },
      { path: 'b.bin', size: 401, contentType: 'application/octet-stream' },
    ];
    assertError(await create(t, { files }, key), 413, 'STORAGE_EXCEEDED');
    assertError(await create(t, { files }), 413, 'STORAGE_EXCEEDED');
    files[1]!.size = 400;
    const ok = await create(t, { files });
    assert.equal(ok.status, 201, ok.text);
  });

  test('POST /api/v1/publish counts the storage of live sites and finalize refuses going over it', async () => {
    const six = { 'six.bin': Buffer.alloc(600, 1) };
    const first = assertPublished(await publish(t, six, { key }));
    // 600 live + 600 new > 1000.
    assertError(
      await create(t, { files: manifestOf({ 'x.bin': Buffer.alloc(600, 2) }) }, key),
      413,
      'STORAGE_EXCEEDED',
    );
    // A publish that fits now but no longer fits when the other goes live first.
    await t.api(`/api/v1/publish/${first.slug}`, { method: 'DELETE', key });
    const a = await publish(t, { 'a.bin': Buffer.alloc(600, 3) }, { key, finalize: false });
    const b = await publish(t, { 'b.bin': Buffer.alloc(600, 4) }, { key, finalize: false });
    assert.equal(a.create.status, 201);
    assert.equal(b.create.status, 201);
    const fa = await t.api(`/api/v1/publish/${a.slug}/finalize`, {
      method: 'POST',
      body: { versionId: a.versionId },
      key,
    });
    assert.equal(fa.status, 200, fa.text);
    const fb = await t.api(`/api/v1/publish/${b.slug}/finalize`, {
      method: 'POST',
      body: { versionId: b.versionId },
      key,
    });
    assertError(fb, 413, 'STORAGE_EXCEEDED');
    const account = await t.api('/api/v1/account', { key });
    assert.equal(account.body.usage.storage.usedBytes, 600);
    for (const slug of [a.slug, b.slug]) await t.api(`/api/v1/publish/${slug}`, { method: 'DELETE', key });
  });

  test('POST /api/v1/publish/:slug/claim refuses a site that would go over the plan storage with 413 STORAGE_EXCEEDED', async () => {
    const owned = assertPublished(await publish(t, { 'mine.bin': Buffer.alloc(600, 5) }, { key }));
    const anon = assertPublished(await publish(t, { 'anon.bin': Buffer.alloc(600, 6) }));
    const claim = () =>
      t.api(`/api/v1/publish/${anon.slug}/claim`, {
        method: 'POST',
        body: { claimToken: anon.create.body.claimToken },
        key,
      });
    assertError(await claim(), 413, 'STORAGE_EXCEEDED');
    assertError(await t.api(`/api/v1/publish/${anon.slug}`, { key }), 404, 'NOT_FOUND');
    assert.equal((await t.api('/api/v1/account', { key })).body.usage.storage.usedBytes, 600);
    await t.api(`/api/v1/publish/${owned.slug}`, { method: 'DELETE', key });
    assert.equal((await claim()).status, 200);
    await t.api(`/api/v1/publish/${anon.slug}`, { method: 'DELETE', key });
  });

  test('POST /api/v1/publish refuses a site over the plan site count with 403 SITE_LIMIT_EXCEEDED', async () => {
    const small = { files: manifestOf({ 'a.txt': 'a' }) };
    const first = await create(t, small, key);
    const second = await create(t, small, key);
    assert.equal(first.status, 201);
    assert.equal(second.status, 201);
    assertError(await create(t, small, key), 403, 'SITE_LIMIT_EXCEEDED');
    // Anonymous publishes belong to no account and are not counted.
    assert.equal((await create(t, small)).status, 201);
    const del = await t.api(`/api/v1/publish/${first.body.slug}`, { method: 'DELETE', key });
    assert.equal(del.status, 200);
    assert.equal((await create(t, small, key)).status, 201);
  });
});

describe('POST /api/v1/publish/:slug/finalize', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'fin@example.com');
    otherKey = await signIn(t, 'other-fin@example.com');
  });
  after(() => t.close());

  const finalize = (slug: string, versionId: unknown, k?: string) =>
    t.api(`/api/v1/publish/${slug}/finalize`, {
      method: 'POST',
      body: { versionId },
      ...(k ? { key: k } : {}),
    });

  test('POST /api/v1/publish/:slug/finalize returns 200 with slug, siteUrl, versionId and status active', async () => {
    const out = await publish(t, SITE, { key });
    assert.ok(out.uploads.every((u) => u.status === 200));
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    const { warnings, previewUrl, ...rest } = out.finalize!.body;
    assert.deepEqual(rest, {
      slug: out.slug,
      siteUrl: `http://${out.slug}.localhost:${t.port}/`,
      versionId: out.versionId,
      status: 'active',
      live: true,
    });
    // Beyond the spec (CONTRACT "Previews and aliases"): the version's own host.
    assert.match(previewUrl, new RegExp(`^http://${out.slug}--[0-9][a-z0-9]{9}\\.localhost:${t.port}/$`));
    assert.deepEqual(warnings ?? [], []);
    const details = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(details.body.status, 'active');
    assert.equal(details.body.versionId, out.versionId);
  });

  test('POST /api/v1/publish/:slug/finalize works at the finalizeUrl the create response gave', async () => {
    const res = await create(t, { files: manifestOf({ 'a.txt': 'finalizeUrl' }) }, key);
    await uploadAll(res.body, { 'a.txt': 'finalizeUrl' });
    const url = res.body.upload.finalizeUrl.replace('//localhost:', '//127.0.0.1:');
    const fin = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ versionId: res.body.upload.versionId }),
    });
    assert.equal(fin.status, 200);
  });

  test('POST /api/v1/publish/:slug/finalize with missing uploads answers 400 listing the missing paths', async () => {
    const res = await create(t, { files: manifestOf(SITE) }, key);
    const [first] = res.body.upload.uploads;
    const up = await putUpload(first.url, SITE['index.html'] as string, first.headers['Content-Type']);
    assert.equal(up.status, 200);
    const fin = await finalize(res.body.slug, res.body.upload.versionId, key);
    assertError(fin, 400, 'INVALID_REQUEST');
    assert.match(fin.body.error, /css\/site\.css/);
    assert.match(fin.body.error, /img\/logo\.png/);
    assert.doesNotMatch(fin.body.error, /index\.html/);
    assert.deepEqual(fin.body.missing, ['css/site.css', 'img/logo.png']);
    const details = await t.api(`/api/v1/publish/${res.body.slug}`, { key });
    assert.equal(details.body.status, 'pending');
  });

  test('POST /api/v1/publish/:slug/finalize with a wrong versionId answers 400 INVALID_REQUEST', async () => {
    const out = await publish(t, SITE, { key, finalize: false });
    assertError(await finalize(out.slug, 'ver_doesnotexist', key), 400, 'INVALID_REQUEST');
    const other = await publish(t, SITE, { key, finalize: false });
    assertError(await finalize(out.slug, other.versionId, key), 400, 'INVALID_REQUEST');
    assertError(await finalize(out.slug, '', key), 400, 'INVALID_REQUEST');
    assertError(
      await t.api(`/api/v1/publish/${out.slug}/finalize`, { method: 'POST', body: {}, key }),
      400,
      'INVALID_REQUEST',
    );
    // Still pending and still finalizable with the right one.
    assert.equal((await finalize(out.slug, out.versionId, key)).status, 200);
  });

  test('POST /api/v1/publish/:slug/finalize of an owned site without a key answers 401', async () => {
    const out = await publish(t, SITE, { key, finalize: false });
    assertError(await finalize(out.slug, out.versionId), 401, 'UNAUTHORIZED');
    const details = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(details.body.status, 'pending');
  });

  test('POST /api/v1/publish/:slug/finalize of an owned site with another account key answers 401', async () => {
    const out = await publish(t, SITE, { key, finalize: false });
    assertError(await finalize(out.slug, out.versionId, otherKey), 401, 'UNAUTHORIZED');
    const details = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(details.body.status, 'pending');
  });

  test('POST /api/v1/publish/:slug/finalize of an anonymous site works without a key', async () => {
    const out = await publish(t, SITE);
    assert.equal(out.create.status, 201);
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    assert.equal(out.finalize?.body.status, 'active');
    assert.equal(out.finalize?.body.versionId, out.versionId);
  });

  test('POST /api/v1/publish/:slug/finalize of the current version again answers 200 and changes nothing', async () => {
    const out = assertPublished(await publish(t, SITE, { key }));
    const again = await finalize(out.slug, out.versionId, key);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.versionId, out.versionId);
    assert.equal(again.body.status, 'active');
    const versions = await t.api(`/api/v1/publish/${out.slug}/versions`, { key });
    assert.equal(versions.body.versions.length, 1);
  });

  test('POST /api/v1/publish/:slug/finalize of an unknown site answers 404', async () => {
    assertError(await finalize('no-such-site-zzzzzz', 'ver_x', key), 404, 'NOT_FOUND');
  });

  test('POST /api/v1/publish/:slug/finalize with a bad _redirects line answers 200 with a warning naming the line', async () => {
    const out = await publish(
      t,
      { 'index.html': 'hi', _redirects: '/old /new 301\nthis line is nonsense\n/a /b 302\n' },
      { key },
    );
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    const warnings: string[] = out.finalize?.body.warnings;
    assert.ok(Array.isArray(warnings));
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.match(warnings[0]!, /_redirects/);
    assert.match(warnings[0]!, /line 2\b/);
  });
});

describe('PUT /api/v1/publish/:slug', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'upd@example.com');
    otherKey = await signIn(t, 'other-upd@example.com');
  });
  after(() => t.close());

  test('PUT /api/v1/publish/:slug with hashes uploads only changed files and skips the rest with hash_match', async () => {
    const first = assertPublished(await publish(t, SITE, { key }));
    const next: Files = { ...SITE, 'index.html': '<h1>Changed</h1>', 'new.txt': 'brand new' };
    const out = await update(t, key, first.slug, next);
    assert.equal(out.create.status, 200, out.create.text);
    assert.deepEqual(Object.keys(out.create.body).sort(), ['siteUrl', 'slug', 'upload']);
    assert.equal(out.create.body.slug, first.slug);
    assert.equal(out.create.body.siteUrl, `http://${first.slug}.localhost:${t.port}/`);
    assert.notEqual(out.versionId, first.versionId);
    assert.equal(out.create.body.upload.expiresInSeconds, 3600);
    assert.deepEqual(out.create.body.upload.uploads.map((u: { path: string }) => u.path).sort(), [
      'index.html',
      'new.txt',
    ]);
    assert.deepEqual(
      [...out.create.body.upload.skipped].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: 'css/site.css', reason: 'hash_match' },
        { path: 'img/logo.png', reason: 'hash_match' },
      ],
    );
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    const details = await t.api(`/api/v1/publish/${first.slug}`, { key });
    assert.equal(details.body.versionId, out.versionId);
    assert.deepEqual(
      details.body.files.map((f: { path: string; hash: string }) => [f.path, f.hash]).sort(),
      manifestOf(next)
        .map((f) => [f.path, f.hash])
        .sort(),
    );
  });

  test('PUT /api/v1/publish/:slug without hashes asks for every file', async () => {
    const first = assertPublished(await publish(t, SITE, { key }));
    const out = await update(t, key, first.slug, SITE, { hashes: false });
    assert.equal(out.create.status, 200, out.create.text);
    assert.deepEqual(out.create.body.upload.skipped, []);
    assert.equal(out.create.body.upload.uploads.length, Object.keys(SITE).length);
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
  });

  test('PUT /api/v1/publish/:slug skips a hash stored in another site of the same account', async () => {
    const shared = 'shared bytes living in another site';
    assertPublished(await publish(t, { 'other.txt': shared }, { key }));
    const site = assertPublished(await publish(t, { 'index.html': 'x' }, { key }));
    const out = await update(t, key, site.slug, { 'index.html': 'x', 'copy.txt': shared });
    assert.equal(out.create.status, 200);
    assert.deepEqual(out.create.body.upload.uploads, []);
    assert.deepEqual([...out.create.body.upload.skipped].map((s: { path: string }) => s.path).sort(), [
      'copy.txt',
      'index.html',
    ]);
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    const details = await t.api(`/api/v1/publish/${site.slug}`, { key });
    const copy = details.body.files.find((f: { path: string }) => f.path === 'copy.txt');
    assert.equal(copy.hash, sha256(shared));
    assert.equal(copy.size, Buffer.byteLength(shared));
  });

  test('PUT /api/v1/publish/:slug does not skip bytes only another account holds (proof of possession)', async () => {
    const secret = 'bytes that only the other account has';
    assertPublished(await publish(t, { 'private.txt': secret }, { key: otherKey }));
    const site = assertPublished(await publish(t, { 'index.html': 'mine' }, { key }));
    const out = await update(
      t,
      key,
      site.slug,
      { 'index.html': 'mine', 'guess.txt': secret },
      { finalize: false },
    );
    assert.equal(out.create.status, 200, out.create.text);
    assert.deepEqual(
      out.create.body.upload.uploads.map((u: { path: string }) => u.path),
      ['guess.txt'],
      'knowing the hash is not enough: the bytes must be uploaded',
    );
  });

  test('finalize clears ogImagePath when the new version no longer has that file', async () => {
    const png = { body: Buffer.from('89504e470d0a1a0a', 'hex'), contentType: 'image/png' };
    const site = assertPublished(
      await publish(t, { 'index.html': 'x', 'og.png': png }, { key, viewer: { ogImagePath: 'og.png' } }),
    );
    assert.equal((await t.api(`/api/v1/publish/${site.slug}`, { key })).body.ogImagePath, 'og.png');
    assertPublished(await update(t, key, site.slug, { 'index.html': 'y' }));
    assert.equal((await t.api(`/api/v1/publish/${site.slug}`, { key })).body.ogImagePath, null);
  });

  test('PUT /api/v1/publish/:slug of a site not owned answers 404 NOT_FOUND', async () => {
    const site = assertPublished(await publish(t, SITE, { key }));
    const res = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      body: { files: manifestOf(SITE) },
      key: otherKey,
    });
    assertError(res, 404, 'NOT_FOUND');
    const unknown = await t.api('/api/v1/publish/no-such-site-zzzzzz', {
      method: 'PUT',
      body: { files: manifestOf(SITE) },
      key,
    });
    assertError(unknown, 404, 'NOT_FOUND');
    const anonymous = await publish(t, SITE);
    const res2 = await t.api(`/api/v1/publish/${anonymous.slug}`, {
      method: 'PUT',
      body: { files: manifestOf(SITE) },
      key,
    });
    assertError(res2, 404, 'NOT_FOUND');
    const noKey = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      body: { files: manifestOf(SITE) },
    });
    assertError(noKey, 401, 'UNAUTHORIZED');
  });

  test('PUT /api/v1/publish/:slug with a stale baseVersionId answers 409 VERSION_CONFLICT, a matching one 200', async () => {
    const first = assertPublished(await publish(t, SITE, { key }));
    const second = assertPublished(await update(t, key, first.slug, { ...SITE, 'index.html': 'v2' }));
    const stale = await t.api(`/api/v1/publish/${first.slug}`, {
      method: 'PUT',
      body: { files: manifestOf(SITE), baseVersionId: first.versionId },
      key,
    });
    assertError(stale, 409, 'VERSION_CONFLICT');
    const details = await t.api(`/api/v1/publish/${first.slug}`, { key });
    assert.equal(details.body.versionId, second.versionId, 'the conflict changed nothing');
    const ok = await update(
      t,
      key,
      first.slug,
      { ...SITE, 'index.html': 'v3' },
      {
        extra: { baseVersionId: second.versionId },
      },
    );
    assert.equal(ok.create.status, 200, ok.create.text);
    assert.equal(ok.finalize?.status, 200);
  });

  test('PUT /api/v1/publish/:slug validates the manifest like create', async () => {
    const site = assertPublished(await publish(t, SITE, { key }));
    const res = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      body: { files: [{ path: '../x', size: 1, contentType: 'text/plain' }] },
      key,
    });
    assertError(res, 400, 'INVALID_PATH');
    assertError(
      await t.api(`/api/v1/publish/${site.slug}`, { method: 'PUT', body: { files: [] }, key }),
      400,
      'INVALID_REQUEST',
    );
  });
});
