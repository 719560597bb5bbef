// Serving across a site's life: pending versions are never served, updates go live on finalize only,
// expiry answers 410 without any event, deletion answers 404, and the caches follow change events.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest, startTestApp, type TestApp } from '../helpers/app.js';
import {
  addPendingVersion,
  deleteSite,
  finalizeVersion,
  randomSlug,
  seedSite,
  seedVersion,
  setMetadata,
} from '../helpers/seed.js';
import { siteRequest } from './site-client.js';

describe('site lifecycle', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a site whose only version is pending answers 404', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'not yet' }, pending: true });
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 404);
    assert.doesNotMatch(res.text, /not yet/);
  });

  test('while an update is pending the previous version is served; after finalize the new one', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'v1', 'old.txt': 'old' } });
    assert.equal((await siteRequest(t, slug, '/')).text, 'v1');
    const pending = await addPendingVersion(t.ctx, slug, { 'index.html': 'v2', 'new.txt': 'new' });
    assert.equal((await siteRequest(t, slug, '/')).text, 'v1');
    assert.equal((await siteRequest(t, slug, '/new.txt')).status, 404);
    await finalizeVersion(t.ctx, slug, pending);
    assert.equal((await siteRequest(t, slug, '/')).text, 'v2');
    assert.equal((await siteRequest(t, slug, '/new.txt')).text, 'new');
    assert.equal((await siteRequest(t, slug, '/old.txt')).status, 404);
  });

  test('after a new version is published the next request serves the new bytes and ETag', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'first' } });
    const before1 = await siteRequest(t, slug, '/');
    // Warm every cache, including a compressed variant.
    await siteRequest(t, slug, '/', { headers: { 'accept-encoding': 'br' } });
    await seedVersion(t.ctx, slug, { 'index.html': 'second' });
    const after1 = await siteRequest(t, slug, '/');
    assert.equal(after1.text, 'second');
    assert.notEqual(after1.header('etag'), before1.header('etag'));
    // The old validator no longer matches.
    const revalidate = await siteRequest(t, slug, '/', {
      headers: { 'if-none-match': before1.header('etag')! },
    });
    assert.equal(revalidate.status, 200);
    assert.equal(revalidate.text, 'second');
  });

  test('a site created after its host was looked up is served at once (negative cache invalidated)', async () => {
    const slug = randomSlug();
    assert.equal((await siteRequest(t, slug, '/')).status, 404);
    await seedSite(t.ctx, { slug, files: { 'index.html': 'now here' } });
    const res = await siteRequest(t, slug, '/');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'now here');
  });

  test('an expired site answers 410 once the clock passes expires_at, with no event', async () => {
    const expiresAt = t.clock.now() + 60_000;
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'short lived' }, expiresAt });
    assert.equal((await siteRequest(t, slug, '/')).status, 200);
    t.clock.advance(61_000);
    try {
      for (const path of ['/', '/index.html', '/missing']) {
        const res = await siteRequest(t, slug, path);
        assert.equal(res.status, 410, path);
        assert.doesNotMatch(res.text, /short lived/);
      }
    } finally {
      t.clock.advance(-61_000);
    }
  });

  test('extending the expiry serves the site again', async () => {
    const { slug } = await seedSite(t.ctx, {
      files: { 'index.html': 'renewed' },
      expiresAt: t.clock.now() - 1,
    });
    assert.equal((await siteRequest(t, slug, '/')).status, 410);
    await setMetadata(t.ctx, slug, { expiresAt: null });
    assert.equal((await siteRequest(t, slug, '/')).text, 'renewed');
  });

  test('a deleted site answers 404 and never its old files', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'doomed', 'a.txt': 'aaa' } });
    assert.equal((await siteRequest(t, slug, '/a.txt')).text, 'aaa');
    await deleteSite(t.ctx, slug);
    for (const path of ['/', '/a.txt']) {
      const res = await siteRequest(t, slug, path);
      assert.equal(res.status, 404);
      assert.doesNotMatch(res.text, /doomed|aaa/);
    }
  });

  test('concurrent first requests for one site share the loads and all get the file', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'together' } });
    const answers = await Promise.all(Array.from({ length: 20 }, () => siteRequest(t, slug, '/')));
    for (const res of answers) {
      assert.equal(res.status, 200);
      assert.equal(res.text, 'together');
    }
  });
});

describe('site cache bound (SERVE_CACHE_MB=1)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ SERVE_CACHE_MB: '1' });
  });
  after(() => t.close());

  test('serving many files keeps the caches within the budget and every answer correct', async () => {
    const sites: Array<{ slug: string; files: Record<string, Buffer> }> = [];
    for (let s = 0; s < 4; s++) {
      const files: Record<string, Buffer> = {};
      for (let i = 0; i < 12; i++) {
        // 100 KiB and 20 KiB (small enough for the fast path's response memo), distinct bytes: 2.9 MB in
        // total, far over the 1 MB budget.
        files[`f${i}.bin`] = Buffer.alloc((i % 2 === 0 ? 100 : 20) * 1024, `${s}-${i}-`);
      }
      const { slug } = await seedSite(t.ctx, { files });
      sites.push({ slug, files });
    }
    for (let round = 0; round < 2; round++) {
      for (const { slug, files } of sites) {
        for (const [name, bytes] of Object.entries(files)) {
          const res = await siteRequest(t, slug, `/${name}`);
          assert.equal(res.status, 200);
          assert.ok(res.body.equals(bytes), `${slug}/${name}`);
        }
      }
    }
    const metrics = await t.api('/metrics');
    const bytes = (cache: string) =>
      Number(new RegExp(`slipway_site_cache_bytes\\{cache="${cache}"\\} (\\d+)`).exec(metrics.text)?.[1]);
    const limit = bytes('limit');
    const memo = Number(/slipway_site_fast_path_memo_bytes (\d+)/.exec(metrics.text)?.[1]);
    assert.ok(memo > 0, 'the memo holds the small files');
    assert.equal(bytes('responses'), memo, 'the memo is part of the serving budget');
    const used = bytes('hosts') + bytes('sites') + bytes('bodies') + bytes('responses');
    assert.equal(limit, 1024 * 1024);
    assert.ok(used > 0 && used <= limit, `caches and memo hold ${used} bytes of SERVE_CACHE_MB=1`);
  });

  test('a flood of random site names caches no site state: the real sites keep theirs', async () => {
    // A label host's miss reads the site's record first (its own host needs no lookup apart): a label no
    // site has must not leave a state behind, or 600 names (2 KB of budget each) would flush real sites.
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': '<h1>real</h1>' } });
    assert.equal((await siteRequest(t, slug, '/')).status, 200);
    const sitesBytes = async () => {
      const metrics = await t.api('/metrics');
      return Number(/slipway_site_cache_bytes\{cache="sites"\} (\d+)/.exec(metrics.text)?.[1]);
    };
    const before = await sitesBytes();
    for (let i = 0; i < 600; i++) {
      const res = await rawRequest(t.port, { host: `flood-${i}.${t.ctx.config.siteHost}`, path: '/' });
      assert.equal(res.status, 404);
    }
    assert.equal(await sitesBytes(), before);
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>real</h1>');
  });
});
