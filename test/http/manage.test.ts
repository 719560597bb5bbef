// Managing sites through real HTTP: details, list, delete, duplicate, claim, metadata, versions and
// account usage (spec "Sites", CONTRACT "Identity, ownership and URLs", "Versions", "Account").

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type ApiResponse, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import {
  assertPublished,
  type Files,
  manifestOf,
  publish,
  sha256,
  storedBlobs,
  update,
} from '../helpers/publish.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const SITE: Files = {
  'index.html': '<!doctype html><h1>Hello</h1>',
  'css/site.css': 'body { color: red }',
  'img/logo.png': { body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), contentType: 'image/png' },
};
const SITE_BYTES = manifestOf(SITE).reduce((n, f) => n + f.size, 0);

function assertError(res: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: unknown; code: unknown; status: unknown };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

async function blobCount(t: TestApp): Promise<number> {
  return (await storedBlobs(t)).length;
}

function siteRow(t: TestApp, slug: string) {
  return t.ctx.db.kysely.selectFrom('sites').selectAll().where('slug', '=', slug).executeTakeFirst();
}

describe('GET /api/v1/publish/:slug and DELETE /api/v1/publish/:slug', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'manager@example.com');
    otherKey = await signIn(t, 'stranger@example.com');
  });
  after(() => t.close());

  test('GET /api/v1/publish/:slug returns 200 with the site fields and its files', async () => {
    const out = assertPublished(await publish(t, SITE, { key, viewer: { title: 'Hello site' } }));
    const res = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'createdAt',
      'description',
      'expiresAt',
      'files',
      'hasPassword',
      'ogImagePath',
      'siteUrl',
      'slug',
      'status',
      'takedown',
      'title',
      'updatedAt',
      'versionId',
    ]);
    assert.equal(res.body.takedown, null, 'not taken down (docs/admin.md)');
    assert.equal(res.body.slug, out.slug);
    assert.equal(res.body.siteUrl, `http://${out.slug}.localhost:${t.port}/`);
    assert.equal(res.body.status, 'active');
    assert.equal(res.body.versionId, out.versionId);
    assert.equal(res.body.title, 'Hello site');
    assert.equal(res.body.description, null);
    assert.equal(res.body.ogImagePath, null);
    assert.equal(res.body.hasPassword, false);
    assert.equal(res.body.expiresAt, null);
    assert.match(res.body.createdAt, ISO);
    assert.match(res.body.updatedAt, ISO);
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    assert.deepEqual(
      [...res.body.files].sort(byPath),
      manifestOf(SITE)
        .map((f) => ({ path: f.path, size: f.size, contentType: f.contentType, hash: f.hash }))
        .sort(byPath),
    );
  });

  test('GET /api/v1/publish/:slug of a just created site shows status pending and its pending version', async () => {
    const out = await publish(t, SITE, { key, finalize: false });
    const res = await t.api(`/api/v1/publish/${out.slug}`, { key });
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'pending');
    assert.equal(res.body.versionId, out.versionId);
  });

  test('GET /api/v1/publish/:slug with another account key answers 404, without a key 401', async () => {
    const out = assertPublished(await publish(t, SITE, { key }));
    assertError(await t.api(`/api/v1/publish/${out.slug}`, { key: otherKey }), 404, 'NOT_FOUND');
    assertError(await t.api(`/api/v1/publish/${out.slug}`), 401, 'UNAUTHORIZED');
    assertError(await t.api('/api/v1/publish/no-such-site-zzzzzz', { key }), 404, 'NOT_FOUND');
    // An anonymous site is nobody's: 404 for any key.
    const anon = await publish(t, SITE);
    assertError(await t.api(`/api/v1/publish/${anon.slug}`, { key }), 404, 'NOT_FOUND');
  });

  test('DELETE /api/v1/publish/:slug returns {slug, deleted: true}; the site is then gone and keeps a tombstone', async () => {
    const out = assertPublished(await publish(t, SITE, { key }));
    assertError(
      await t.api(`/api/v1/publish/${out.slug}`, { method: 'DELETE', key: otherKey }),
      404,
      'NOT_FOUND',
    );
    const del = await t.api(`/api/v1/publish/${out.slug}`, { method: 'DELETE', key });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { slug: out.slug, deleted: true });
    assertError(await t.api(`/api/v1/publish/${out.slug}`, { key }), 404, 'NOT_FOUND');
    assertError(await t.api(`/api/v1/publish/${out.slug}`, { method: 'DELETE', key }), 404, 'NOT_FOUND');
    assertError(await t.api(`/api/v1/publish/${out.slug}/versions`, { key }), 404, 'NOT_FOUND');
    assertError(
      await t.api(`/api/v1/publish/${out.slug}`, { method: 'PUT', body: { files: manifestOf(SITE) }, key }),
      404,
      'NOT_FOUND',
    );
    const list = await t.api('/api/v1/publishes', { key });
    assert.ok(!list.body.sites.some((s: { slug: string }) => s.slug === out.slug));
    const row = await siteRow(t, out.slug);
    assert.ok(row, 'the row stays as a tombstone');
    assert.notEqual(row.deleted_at, null);
  });

  test('a deleted slug is never reissued', async () => {
    // Make the slug generator draw the same slug on demand: randomInt answers 0 for `forced` calls.
    const original = crypto.randomInt;
    let forced = 0;
    const fake = ((...args: unknown[]) => {
      if (forced > 0) {
        forced--;
        return 0;
      }
      return (original as (...a: unknown[]) => number)(...args);
    }) as typeof crypto.randomInt;
    crypto.randomInt = fake;
    syncBuiltinESMExports();
    try {
      forced = 8; // one slug: adjective, noun and 6 suffix characters
      const first = await t.api('/api/v1/publish', {
        method: 'POST',
        body: { files: manifestOf(SITE) },
        key,
      });
      assert.equal(first.status, 201, first.text);
      assert.equal(forced, 0, 'the create drew one slug through randomInt');
      const retired: string = first.body.slug;
      const del = await t.api(`/api/v1/publish/${retired}`, { method: 'DELETE', key });
      assert.equal(del.status, 200);
      for (const k of [key, undefined]) {
        forced = 8; // the next draw repeats the deleted slug
        const next = await t.api('/api/v1/publish', {
          method: 'POST',
          body: { files: manifestOf(SITE) },
          ...(k ? { key: k } : {}),
        });
        assert.equal(next.status, 201, next.text);
        assert.notEqual(next.body.slug, retired);
        assert.equal(forced, 0);
      }
      const row = await siteRow(t, retired);
      assert.ok(row?.deleted_at, 'the deleted row remains a tombstone');
    } finally {
      crypto.randomInt = original;
      syncBuiltinESMExports();
    }
    // And with the real generator, many new sites never get it either.
    const deleted = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const out = await t.api('/api/v1/publish', { method: 'POST', body: { files: manifestOf(SITE) }, key });
      deleted.add(out.body.slug);
      await t.api(`/api/v1/publish/${out.body.slug}`, { method: 'DELETE', key });
    }
    const created = await Promise.all(
      Array.from({ length: 40 }, () =>
        t.api('/api/v1/publish', { method: 'POST', body: { files: manifestOf(SITE) } }),
      ),
    );
    for (const c of created) {
      assert.equal(c.status, 201);
      assert.ok(!deleted.has(c.body.slug));
    }
    assert.equal(new Set(created.map((c) => c.body.slug)).size, created.length);
  });
});

describe('GET /api/v1/publishes', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  const slugs: string[] = []; // oldest first
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'lister@example.com');
    otherKey = await signIn(t, 'other-lister@example.com');
    for (let i = 0; i < 5; i++) {
      const files: Files = { 'index.html': `site ${i}` };
      for (let j = 0; j < i; j++) files[`extra${j}.txt`] = 'x'.repeat(j + 1);
      const out = await publish(t, files, { key, viewer: { title: `Site ${i}` }, finalize: i !== 4 });
      assert.equal(out.create.status, 201);
      slugs.push(out.slug);
      t.clock.advance(1000);
    }
    assertPublished(await publish(t, SITE, { key: otherKey }));
    await publish(t, SITE); // anonymous: nobody's
  });
  after(() => t.close());

  test('GET /api/v1/publishes returns 200 with sites newest first, fileCount, totalSize and total', async () => {
    const res = await t.api('/api/v1/publishes', { key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.total, 5);
    assert.deepEqual(
      res.body.sites.map((s: { slug: string }) => s.slug),
      [...slugs].reverse(),
    );
    for (const s of res.body.sites) {
      assert.deepEqual(Object.keys(s).sort(), [
        'createdAt',
        'expiresAt',
        'fileCount',
        'siteUrl',
        'slug',
        'status',
        'title',
        'totalSize',
        'updatedAt',
      ]);
      assert.equal(s.siteUrl, `http://${s.slug}.localhost:${t.port}/`);
      assert.match(s.createdAt, ISO);
      assert.equal(s.expiresAt, null);
    }
    const [pending, ...live] = res.body.sites;
    // The newest one was never finalized: pending, with zero files.
    assert.equal(pending.status, 'pending');
    assert.equal(pending.fileCount, 0);
    assert.equal(pending.totalSize, 0);
    assert.equal(pending.title, 'Site 4');
    for (const [n, s] of live.entries()) {
      const i = 3 - n;
      assert.equal(s.status, 'active');
      assert.equal(s.title, `Site ${i}`);
      assert.equal(s.fileCount, 1 + i);
      let size = Buffer.byteLength(`site ${i}`);
      for (let j = 0; j < i; j++) size += j + 1;
      assert.equal(s.totalSize, size);
    }
  });

  test('GET /api/v1/publishes pages with ?limit= and ?cursor=', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res: ApiResponse = await t.api(`/api/v1/publishes${q}`, { key });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.sites.length <= 2);
      assert.equal(res.body.total, 5);
      seen.push(...res.body.sites.map((s: { slug: string }) => s.slug));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...slugs].reverse());
    assertError(await t.api('/api/v1/publishes?cursor=bm9wZQ', { key }), 400, 'INVALID_REQUEST');
    assertError(await t.api('/api/v1/publishes?limit=0', { key }), 400, 'INVALID_REQUEST');
  });

  test('GET /api/v1/publishes lists only the caller’s sites and needs a key', async () => {
    const other = await t.api('/api/v1/publishes', { key: otherKey });
    assert.equal(other.body.total, 1);
    assert.ok(!other.body.sites.some((s: { slug: string }) => slugs.includes(s.slug)));
    assertError(await t.api('/api/v1/publishes'), 401, 'UNAUTHORIZED');
  });
});

describe('POST /api/v1/publish/:slug/duplicate', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'dup@example.com');
    otherKey = await signIn(t, 'other-dup@example.com');
  });
  after(() => t.close());

  test('POST /api/v1/publish/:slug/duplicate returns 201 with a new slug, versionId, copiedFrom and status active, writing no bytes', async () => {
    const src = assertPublished(await publish(t, SITE, { key, viewer: { title: 'Original' } }));
    const blobsBefore = await blobCount(t);
    const res = await t.api(`/api/v1/publish/${src.slug}/duplicate`, { method: 'POST', key });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['copiedFrom', 'siteUrl', 'slug', 'status', 'versionId']);
    assert.notEqual(res.body.slug, src.slug);
    assert.equal(res.body.siteUrl, `http://${res.body.slug}.localhost:${t.port}/`);
    assert.equal(res.body.copiedFrom, src.slug);
    assert.equal(res.body.status, 'active');
    assert.notEqual(res.body.versionId, src.versionId);
    assert.equal(await blobCount(t), blobsBefore, 'no new bytes were written');
    const copy = await t.api(`/api/v1/publish/${res.body.slug}`, { key });
    const orig = await t.api(`/api/v1/publish/${src.slug}`, { key });
    assert.equal(copy.body.status, 'active');
    assert.equal(copy.body.versionId, res.body.versionId);
    assert.equal(copy.body.title, 'Original');
    assert.deepEqual(copy.body.files, orig.body.files);
    const list = await t.api('/api/v1/publishes', { key });
    assert.ok(list.body.sites.some((s: { slug: string }) => s.slug === res.body.slug));
    // The copy lives on when the source is deleted.
    await t.api(`/api/v1/publish/${src.slug}`, { method: 'DELETE', key });
    const still = await t.api(`/api/v1/publish/${res.body.slug}`, { key });
    assert.equal(still.status, 200);
    assert.equal(still.body.files.length, 3);
  });

  test('POST /api/v1/publish/:slug/duplicate of a protected site keeps it protected', async () => {
    const src = assertPublished(await publish(t, SITE, { key }));
    await t.api(`/api/v1/publish/${src.slug}/metadata`, {
      method: 'PATCH',
      key,
      body: { password: 'hunter22' },
    });
    const res = await t.api(`/api/v1/publish/${src.slug}/duplicate`, { method: 'POST', key });
    assert.equal(res.status, 201, res.text);
    const copy = await t.api(`/api/v1/publish/${res.body.slug}`, { key });
    assert.equal(copy.body.hasPassword, true);
  });

  test('POST /api/v1/publish/:slug/duplicate of another account’s site answers 404', async () => {
    const src = assertPublished(await publish(t, SITE, { key }));
    assertError(
      await t.api(`/api/v1/publish/${src.slug}/duplicate`, { method: 'POST', key: otherKey }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await t.api('/api/v1/publish/no-such-site-zzzzzz/duplicate', { method: 'POST', key }),
      404,
      'NOT_FOUND',
    );
  });
});

describe('POST /api/v1/publish/:slug/claim', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'claimer@example.com');
    otherKey = await signIn(t, 'other-claimer@example.com');
  });
  after(() => t.close());

  const claim = (slug: string, claimToken: unknown, k?: string) =>
    t.api(`/api/v1/publish/${slug}/claim`, {
      method: 'POST',
      body: { claimToken },
      ...(k ? { key: k } : {}),
    });

  test('POST /api/v1/publish/:slug/claim returns 200 and the site joins the account without expiry', async () => {
    const anon = await publish(t, SITE);
    assert.equal(anon.finalize?.status, 200);
    const token: string = anon.create.body.claimToken;
    const tokenHash = sha256(token);
    const res = await claim(anon.slug, token, key);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['message', 'owner', 'siteUrl', 'slug']);
    assert.equal(res.body.slug, anon.slug);
    assert.equal(res.body.siteUrl, `http://${anon.slug}.localhost:${t.port}/`);
    assert.equal(res.body.owner, 'claimer@example.com');
    assert.equal(typeof res.body.message, 'string');
    const list = await t.api('/api/v1/publishes', { key });
    const entry = list.body.sites.find((s: { slug: string }) => s.slug === anon.slug);
    assert.ok(entry, 'the claimed site is listed');
    assert.equal(entry.expiresAt, null);
    assert.equal(entry.status, 'active');
    const details = await t.api(`/api/v1/publish/${anon.slug}`, { key });
    assert.equal(details.body.expiresAt, null);
    assert.equal(details.body.versionId, anon.versionId);
    for (const r of [anon.create, anon.finalize!, res, list, details]) {
      assert.ok(!r.text.includes(tokenHash), 'no response carries the claim token hash');
    }
    // Managed like any site now: the owner can update it.
    const next = await update(t, key, anon.slug, { ...SITE, 'index.html': 'mine now' });
    assert.equal(next.finalize?.status, 200);
  });

  test('POST /api/v1/publish/:slug/claim twice answers 400', async () => {
    const anon = await publish(t, SITE);
    const token: string = anon.create.body.claimToken;
    assert.equal((await claim(anon.slug, token, key)).status, 200);
    assertError(await claim(anon.slug, token, key), 400, 'INVALID_REQUEST');
    assertError(await claim(anon.slug, token, otherKey), 400, 'INVALID_REQUEST');
    // Still the first claimer's.
    assert.equal((await t.api(`/api/v1/publish/${anon.slug}`, { key })).status, 200);
    assertError(await t.api(`/api/v1/publish/${anon.slug}`, { key: otherKey }), 404, 'NOT_FOUND');
  });

  test('POST /api/v1/publish/:slug/claim with a wrong token answers 400 and changes nothing', async () => {
    const anon = await publish(t, SITE);
    const token: string = anon.create.body.claimToken;
    const other = await publish(t, SITE);
    assertError(await claim(anon.slug, 'clm_wrong', key), 400, 'INVALID_REQUEST');
    assertError(await claim(anon.slug, other.create.body.claimToken, key), 400, 'INVALID_REQUEST');
    assertError(await claim(anon.slug, '', key), 400, 'INVALID_REQUEST');
    assertError(await t.api(`/api/v1/publish/${anon.slug}`, { key }), 404, 'NOT_FOUND');
    assertError(await claim(anon.slug, token), 401, 'UNAUTHORIZED');
    assert.equal((await claim(anon.slug, token, key)).status, 200);
  });

  test('POST /api/v1/publish/:slug/claim of an owned site answers 400', async () => {
    const owned = assertPublished(await publish(t, SITE, { key: otherKey }));
    assertError(await claim(owned.slug, 'clm_anything', key), 400, 'INVALID_REQUEST');
    assertError(await t.api(`/api/v1/publish/${owned.slug}`, { key }), 404, 'NOT_FOUND');
  });

  test('POST /api/v1/publish/:slug/claim after the 24 h lifetime answers 400', async () => {
    const anon = await publish(t, SITE);
    const token: string = anon.create.body.claimToken;
    t.clock.advance(24 * 3_600_000 + 1000);
    const res = await claim(anon.slug, token, key);
    assertError(res, 400, 'INVALID_REQUEST');
    assert.match(res.body.error, /expired/i);
    const list = await t.api('/api/v1/publishes', { key });
    assert.ok(!list.body.sites.some((s: { slug: string }) => s.slug === anon.slug));
  });
});

describe('PATCH /api/v1/publish/:slug/metadata', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let slug: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'meta@example.com');
    otherKey = await signIn(t, 'other-meta@example.com');
    slug = assertPublished(await publish(t, SITE, { key })).slug;
  });
  after(() => t.close());

  const patch = (body: unknown, k = key) =>
    t.api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', body, key: k });
  const details = async () => (await t.api(`/api/v1/publish/${slug}`, { key })).body;

  test('PATCH /api/v1/publish/:slug/metadata returns {slug, updated: true} and changes only the fields sent', async () => {
    const res = await patch({ title: 'New title', description: 'New description' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { slug, updated: true });
    let d = await details();
    assert.equal(d.title, 'New title');
    assert.equal(d.description, 'New description');
    assert.equal((await patch({ title: 'Other title' })).status, 200);
    d = await details();
    assert.equal(d.title, 'Other title');
    assert.equal(d.description, 'New description', 'an absent field stays');
    assert.equal((await patch({ description: null })).status, 200);
    d = await details();
    assert.equal(d.title, 'Other title');
    assert.equal(d.description, null, 'null clears');
  });

  test('PATCH /api/v1/publish/:slug/metadata ogImagePath must be an image file of the site', async () => {
    assertError(await patch({ ogImagePath: 'img/missing.png' }), 400, 'INVALID_REQUEST');
    assertError(await patch({ ogImagePath: 'index.html' }), 400, 'INVALID_REQUEST');
    assert.equal((await details()).ogImagePath, null);
    assert.equal((await patch({ ogImagePath: 'img/logo.png' })).status, 200);
    assert.equal((await details()).ogImagePath, 'img/logo.png');
    assert.equal((await patch({ ogImagePath: null })).status, 200);
    assert.equal((await details()).ogImagePath, null);
  });

  test('PATCH /api/v1/publish/:slug/metadata password sets hasPassword and is never returned', async () => {
    const password = 'correct horse battery staple';
    const res = await patch({ password });
    assert.equal(res.status, 200, res.text);
    const detailsRes = await t.api(`/api/v1/publish/${slug}`, { key });
    assert.equal(detailsRes.body.hasPassword, true);
    const list = await t.api('/api/v1/publishes', { key });
    const row = await t.ctx.db.kysely
      .selectFrom('sites')
      .select('password_hash')
      .where('slug', '=', slug)
      .executeTakeFirstOrThrow();
    assert.ok(row.password_hash, 'the hash is stored');
    for (const r of [res, detailsRes, list]) {
      assert.ok(!r.text.includes(password), 'the password is never returned');
      assert.ok(!r.text.includes(row.password_hash), 'the password hash is never returned');
      assert.ok(!/password_?hash|scrypt/i.test(r.text));
    }
    assert.equal((await patch({ password: null })).status, 200);
    assert.equal((await details()).hasPassword, false);
    assertError(await patch({ password: '' }), 400, 'INVALID_REQUEST');
  });

  for (const ttlSeconds of [0, -1, 1.5, '10']) {
    test(`PATCH /api/v1/publish/:slug/metadata refuses ttlSeconds ${JSON.stringify(ttlSeconds)} with 400`, async () => {
      const before = (await details()).expiresAt;
      assertError(await patch({ ttlSeconds }), 400, 'INVALID_REQUEST');
      assert.equal((await details()).expiresAt, before);
    });
  }

  test('PATCH /api/v1/publish/:slug/metadata ttlSeconds sets expiresAt; past it the site is expired; null makes it permanent', async () => {
    const res = await patch({ ttlSeconds: 60 });
    assert.equal(res.status, 200, res.text);
    let d = await details();
    assert.match(d.expiresAt, ISO);
    assert.ok(Math.abs(Date.parse(d.expiresAt) - (t.clock.now() + 60_000)) < 5000);
    assert.equal(d.status, 'active');
    t.clock.advance(61_000);
    d = await details();
    assert.equal(d.status, 'expired');
    const list = await t.api('/api/v1/publishes', { key });
    assert.equal(list.body.sites.find((s: { slug: string }) => s.slug === slug).status, 'expired');
    assert.equal((await patch({ ttlSeconds: null })).status, 200);
    d = await details();
    assert.equal(d.expiresAt, null);
    assert.equal(d.status, 'active');
  });

  test('PATCH /api/v1/publish/:slug/metadata of another account’s site answers 404', async () => {
    assertError(await patch({ title: 'hijack' }, otherKey), 404, 'NOT_FOUND');
    assert.notEqual((await details()).title, 'hijack');
  });
});

describe('GET /api/v1/publish/:slug/versions and restore', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'versions@example.com');
    otherKey = await signIn(t, 'other-versions@example.com');
  });
  after(() => t.close());

  test('GET /api/v1/publish/:slug/versions lists finalized versions newest first; restore makes an earlier one current', async () => {
    const v1Files: Files = { 'index.html': 'version one', 'old.txt': 'only in v1' };
    const v2Files: Files = { 'index.html': 'version two' };
    const v3Files: Files = { 'index.html': 'version three', 'new.txt': 'v3' };
    const v1 = assertPublished(await publish(t, v1Files, { key }));
    t.clock.advance(1000);
    const v2 = assertPublished(await update(t, key, v1.slug, v2Files));
    t.clock.advance(1000);
    const v3 = assertPublished(await update(t, key, v1.slug, v3Files));
    t.clock.advance(1000);
    const pendingOnly = await update(
      t,
      key,
      v1.slug,
      { 'index.html': 'never finalized' },
      { finalize: false },
    );
    assert.equal(pendingOnly.create.status, 200);

    const res = await t.api(`/api/v1/publish/${v1.slug}/versions`, { key });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.versions.map((v: { versionId: string }) => v.versionId),
      [v3.versionId, v2.versionId, v1.versionId],
    );
    assert.deepEqual(
      res.body.versions.map((v: { current: boolean }) => v.current),
      [true, false, false],
    );
    assert.equal(res.body.versions[2].fileCount, 2);

    const restore = await t.api(`/api/v1/publish/${v1.slug}/versions/${v1.versionId}/restore`, {
      method: 'POST',
      key,
    });
    assert.equal(restore.status, 200, restore.text);
    assert.equal(restore.body.slug, v1.slug);
    assert.equal(restore.body.versionId, v1.versionId);
    assert.equal(restore.body.status, 'active');
    const d = await t.api(`/api/v1/publish/${v1.slug}`, { key });
    assert.equal(d.body.versionId, v1.versionId);
    assert.deepEqual(
      d.body.files.map((f: { path: string; hash: string }) => [f.path, f.hash]).sort(),
      manifestOf(v1Files)
        .map((f) => [f.path, f.hash])
        .sort(),
    );
    const after = await t.api(`/api/v1/publish/${v1.slug}/versions`, { key });
    assert.equal(after.body.versions.length, 3);
    assert.equal(after.body.versions.find((v: { current: boolean }) => v.current).versionId, v1.versionId);
  });

  test('POST /api/v1/publish/:slug/versions/:versionId/restore of an unknown version answers 404', async () => {
    const a = assertPublished(await publish(t, SITE, { key }));
    const b = assertPublished(await publish(t, SITE, { key }));
    const restore = (slug: string, versionId: string, k = key) =>
      t.api(`/api/v1/publish/${slug}/versions/${versionId}/restore`, { method: 'POST', key: k });
    assertError(await restore(a.slug, 'ver_unknown'), 404, 'NOT_FOUND');
    assertError(await restore(a.slug, b.versionId), 404, 'NOT_FOUND');
    assertError(await restore(a.slug, a.versionId, otherKey), 404, 'NOT_FOUND');
    assertError(await t.api(`/api/v1/publish/${a.slug}/versions`, { key: otherKey }), 404, 'NOT_FOUND');
    const pendingOnly = await update(t, key, a.slug, { 'index.html': 'pending' }, { finalize: false });
    assertError(await restore(a.slug, pendingOnly.versionId), 404, 'NOT_FOUND');
  });
});

describe('GET /api/v1/account usage', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'usage@example.com');
  });
  after(() => t.close());

  const usage = async () => (await t.api('/api/v1/account', { key })).body.usage;

  test('GET /api/v1/account counts sites and the storage of current versions', async () => {
    assert.deepEqual((await usage()).sites.used, 0);
    const a = assertPublished(await publish(t, SITE, { key }));
    const b = assertPublished(await publish(t, { 'b.txt': 'b'.repeat(100) }, { key }));
    await publish(t, { 'c.txt': 'c'.repeat(1000) }, { key, finalize: false }); // pending: no bytes yet
    await publish(t, { 'anon.txt': 'a'.repeat(5000) }); // anonymous: nobody's
    let u = await usage();
    assert.equal(u.sites.used, 3);
    assert.equal(u.storage.usedBytes, SITE_BYTES + 100);
    assert.equal(typeof u.storage.used, 'string');

    // A pending update does not count; once live, the new version replaces the old one.
    const next = await update(t, key, b.slug, { 'b.txt': 'b'.repeat(300) }, { finalize: false });
    assert.equal((await usage()).storage.usedBytes, SITE_BYTES + 100);
    const fin = await t.api(`/api/v1/publish/${b.slug}/finalize`, {
      method: 'POST',
      body: { versionId: next.versionId },
      key,
    });
    assert.equal(fin.status, 200);
    assert.equal((await usage()).storage.usedBytes, SITE_BYTES + 300);

    // A duplicate shares bytes but counts twice.
    const dup = await t.api(`/api/v1/publish/${a.slug}/duplicate`, { method: 'POST', key });
    assert.equal(dup.status, 201);
    u = await usage();
    assert.equal(u.sites.used, 4);
    assert.equal(u.storage.usedBytes, 2 * SITE_BYTES + 300);

    await t.api(`/api/v1/publish/${a.slug}`, { method: 'DELETE', key });
    u = await usage();
    assert.equal(u.sites.used, 3);
    assert.equal(u.storage.usedBytes, SITE_BYTES + 300);
  });
});
