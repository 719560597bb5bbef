// The sweeper: expired anonymous sites go after their grace period, stale pending versions are
// abandoned, and the garbage collector removes only blobs no version references.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BLOB_MIN_AGE_MS, FINALIZE_GRACE_MS } from '../../src/core/sweeper.js';
import { signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { assertPublished, publish, sha256, storedBlobs, update } from '../helpers/publish.js';

const HOUR_MS = 3_600_000;

describe('sweeper', () => {
  let t: TestApp;
  let key: string;
  const sweep = () => sweepNow(t);
  const hasBlob = async (content: string) => (await storedBlobs(t)).some((p) => p.endsWith(sha256(content)));

  before(async () => {
    t = await startTestApp({ ANONYMOUS_GRACE_S: '3600' });
    key = await signIn(t, 'sweeper@example.com');
  });
  after(() => t.close());

  test('an expired anonymous site is kept through its grace period, then deleted and not claimable', async () => {
    const anon = assertPublished(await publish(t, { 'index.html': 'anon site' }));
    const claimToken = anon.create.body.claimToken;
    t.clock.advance(24 * HOUR_MS + 1);
    await sweep();
    // Expired but within grace: still there, not claimable.
    const early = await t.api(`/api/v1/publish/${anon.slug}/claim`, {
      method: 'POST',
      key,
      body: { claimToken },
    });
    assert.equal(early.status, 400);
    t.clock.advance(HOUR_MS);
    const report = await sweep();
    assert.ok(report.sitesDeleted >= 1);
    const row = await t.ctx.db.kysely
      .selectFrom('sites')
      .selectAll()
      .where('slug', '=', anon.slug)
      .executeTakeFirst();
    assert.ok(row?.deleted_at, 'the slug stays as a tombstone');
    const late = await t.api(`/api/v1/publish/${anon.slug}/claim`, {
      method: 'POST',
      key,
      body: { claimToken },
    });
    assert.equal(late.status, 404);
  });

  test('a pending version whose upload window passed is abandoned; finalize then refuses it', async () => {
    const created = await t.api('/api/v1/publish', {
      method: 'POST',
      key,
      body: { files: [{ path: 'index.html', size: 3, contentType: 'text/html' }] },
    });
    assert.equal(created.status, 201);
    t.clock.advance(HOUR_MS + FINALIZE_GRACE_MS + 1);
    const report = await sweep();
    assert.ok(report.versionsAbandoned >= 1);
    const fin = await t.api(`/api/v1/publish/${created.body.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: created.body.upload.versionId },
    });
    assert.equal(fin.status, 400);
    assert.equal(fin.body.code, 'INVALID_REQUEST');
  });

  test('GC removes only unreferenced blobs, and never young ones', async () => {
    const shared = 'shared between two sites';
    const onlyA = 'only in site A';
    const oldOfB = 'first version of B';
    const a = assertPublished(await publish(t, { 'index.html': shared, 'a.txt': onlyA }, { key }));
    const b = assertPublished(await publish(t, { 'index.html': shared, 'b.txt': oldOfB }, { key }));
    // B's new version drops b.txt: the old version still references it (history), so it stays.
    assertPublished(await update(t, key, b.slug, { 'index.html': shared, 'b2.txt': 'second version of B' }));
    assert.equal((await t.api(`/api/v1/publish/${a.slug}`, { method: 'DELETE', key })).status, 200);

    // Young unreferenced bytes are spared (an upload may be about to reference them).
    await sweep();
    assert.ok(await hasBlob(onlyA), 'a young unreferenced blob is kept');

    t.clock.advance(BLOB_MIN_AGE_MS + 1);
    const report = await sweep();
    assert.ok(report.blobsDeleted >= 1);
    assert.equal(await hasBlob(onlyA), false, 'the blob only the deleted site used is gone');
    assert.ok(await hasBlob(shared), 'a blob another site uses stays');
    assert.ok(await hasBlob(oldOfB), 'a blob of an earlier version stays (restore needs it)');

    // B still serves every byte: restore of the first version works and details list its files.
    const versions = await t.api(`/api/v1/publish/${b.slug}/versions`, { key });
    const first = versions.body.versions.at(-1).versionId;
    const restored = await t.api(`/api/v1/publish/${b.slug}/versions/${first}/restore`, {
      method: 'POST',
      key,
    });
    assert.equal(restored.status, 200);
    for (const hash of [sha256(shared), sha256(oldOfB)]) assert.ok((await t.ctx.blobs.read(hash)).length > 0);
  });

  test('bytes referenced by a pending version (by manifest hash) are never collected', async () => {
    const content = 'referenced only by a pending manifest';
    const first = assertPublished(await publish(t, { 'x.txt': content }, { key }));
    await t.api(`/api/v1/publish/${first.slug}`, { method: 'DELETE', key });
    // The bytes grow old enough to collect before the pending version that names them arrives.
    t.clock.advance(BLOB_MIN_AGE_MS);
    const pending = await t.api('/api/v1/publish', {
      method: 'POST',
      key,
      body: {
        files: [{ path: 'x.txt', size: content.length, contentType: 'text/plain', hash: sha256(content) }],
      },
    });
    assert.equal(pending.status, 201);
    t.clock.advance(HOUR_MS);
    const report = await sweep();
    assert.equal(report.versionsAbandoned, 0, 'the pending version is still within its window');
    assert.ok(await hasBlob(content), 'its bytes are kept');
    // Once the pending version is abandoned, the bytes are collectable.
    t.clock.advance(FINALIZE_GRACE_MS + 1);
    await sweep();
    await sweep();
    assert.equal(await hasBlob(content), false);
  });

  test('GC walks the whole blob index a page at a time: more unreferenced blobs than a page go in one sweep', async () => {
    const kept = 'served by a live site while the collector walks past it';
    assertPublished(await publish(t, { 'index.html': kept }, { key }));
    // Index rows of 1,200 blobs no version names (their bytes were never written: delete is idempotent).
    const orphans = Array.from({ length: 1200 }, (_, i) => sha256(`orphan ${i}`));
    for (let i = 0; i < orphans.length; i += 200) {
      await t.ctx.db.kysely
        .insertInto('blobs')
        .values(orphans.slice(i, i + 200).map((hash) => ({ hash, size: 1, created_at: t.clock.now() })))
        .execute();
    }
    t.clock.advance(BLOB_MIN_AGE_MS + 1);
    const report = await sweep();
    assert.ok(report.blobsDeleted >= orphans.length, `${report.blobsDeleted} blobs deleted`);
    const left = await t.ctx.db.kysely
      .selectFrom('blobs')
      .select('hash')
      .where('hash', 'in', orphans)
      .execute();
    assert.deepEqual(left, []);
    assert.ok(await hasBlob(kept), 'a referenced blob stays');
  });
});
