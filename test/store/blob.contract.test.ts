// Runs the BlobStore contract against DiskBlobStore, plus the disk-only guarantees (layout, temp cleanup).

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MovableClock } from '../../src/shared/clock.js';
import { DiskBlobStore, STALE_TMP_AGE_MS } from '../../src/store/blob/disk.js';
import { bodyOf, runBlobStoreContract, sha256 } from './blob-contract.js';

const MINUTE_MS = 60 * 1000;

async function freshRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'slipway-blob-'));
}

runBlobStoreContract('DiskBlobStore', async () => {
  const root = await freshRoot();
  const store = new DiskBlobStore(root);
  await store.init();
  return {
    store,
    listTemp: () => readdir(join(root, 'blobs', 'tmp')),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
});

describe('DiskBlobStore specifics', () => {
  async function withRoot(fn: (root: string) => Promise<void>): Promise<void> {
    const root = await freshRoot();
    try {
      await fn(root);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  it('lays blobs out as <root>/blobs/ab/cd/<sha256> and exposes that path', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(root);
      await store.init();
      const bytes = Buffer.from('layout');
      const hash = sha256(bytes);
      await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      const expected = join(root, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash);
      assert.equal(store.localPath(hash), expected);
      assert.equal((await stat(expected)).size, bytes.length);
    }));

  it('works without init() (directories are created on first put)', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(join(root, 'nested', 'store'));
      const bytes = Buffer.from('lazy');
      const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      assert.deepEqual(await store.read(hash), bytes);
    }));

  it('leaves one file, intact, after several concurrent puts of the same content', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(root);
      await store.init();
      const bytes = Buffer.alloc(512 * 1024, 5);
      await Promise.all(
        Array.from({ length: 8 }, () => store.put(bodyOf(bytes, 8 * 1024), { expectedSize: bytes.length })),
      );
      assert.deepEqual(await store.read(sha256(bytes)), bytes);
      assert.deepEqual(await readdir(join(root, 'blobs', 'tmp')), []);
    }));

  it('init() removes temp files older than an hour and keeps fresh ones', () =>
    withRoot(async (root) => {
      const clock = new MovableClock();
      const store = new DiskBlobStore(root, { clock });
      await store.init();
      const tmp = join(root, 'blobs', 'tmp');
      await writeFile(join(tmp, 'crashed.tmp'), 'half a blob');
      await store.init();
      assert.deepEqual(await readdir(tmp), ['crashed.tmp']);
      clock.advance(STALE_TMP_AGE_MS + MINUTE_MS);
      await store.init();
      assert.deepEqual(await readdir(tmp), []);
    }));

  it('list() ignores temp files and foreign files in the tree', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(root);
      await store.init();
      const bytes = Buffer.from('real');
      const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      const dir = join(root, 'blobs', hash.slice(0, 2), hash.slice(2, 4));
      await writeFile(join(dir, 'notes.txt'), 'x');
      await writeFile(join(dir, sha256('misplaced')), 'x'); // valid name in the wrong fan-out dir
      await writeFile(join(root, 'blobs', 'tmp', `${sha256('tmp')}`), 'x');
      await mkdir(join(root, 'blobs', 'zz', 'yy'), { recursive: true });
      const listed: string[] = [];
      for await (const h of store.list()) listed.push(h);
      assert.deepEqual(listed, [hash]);
    }));

  it('ping() fails when the store directory is gone', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(root);
      await store.init();
      await store.ping();
      await rm(join(root, 'blobs'), { recursive: true });
      await assert.rejects(store.ping());
    }));
  it('a batch: its blobs are invisible until commit, then stored; discard and refusals leave nothing', () =>
    withRoot(async (root) => {
      const store = new DiskBlobStore(root);
      await store.init();
      const tmp = () => readdir(join(root, 'blobs', 'tmp'));
      // Enough blobs for one filesystem flush (and a few that share nothing with them).
      const files = Array.from({ length: 40 }, (_, i) => Buffer.from(`batch file ${i}\n`.repeat(i + 1)));
      const batch = store.batch();
      for (const bytes of files) {
        const put = await batch.put(bodyOf(bytes, 7), { expectedSize: bytes.length });
        assert.equal(put.hash, sha256(bytes));
      }
      // A refused put (wrong size) keeps nothing and does not spoil the batch.
      await assert.rejects(batch.put(bodyOf(Buffer.from('short')), { expectedSize: 99 }));
      assert.equal(await store.has(sha256(files[0]!)), false, 'visible before commit');
      assert.equal((await tmp()).length, files.length);
      await batch.commit();
      for (const bytes of files) assert.deepEqual(await store.read(sha256(bytes)), bytes);
      assert.deepEqual(await tmp(), []);
      await assert.rejects(batch.put(bodyOf(files[0]!), { expectedSize: files[0]!.length }));

      // A small batch (fewer files than one filesystem flush is worth) is made durable file by file.
      const small = [Buffer.from('small batch one'), Buffer.from('small batch two')];
      const few = store.batch();
      for (const bytes of small) await few.put(bodyOf(bytes), { expectedSize: bytes.length });
      assert.equal(await store.has(sha256(small[0]!)), false, 'visible before commit');
      await few.commit();
      for (const bytes of small) assert.deepEqual(await store.read(sha256(bytes)), bytes);
      assert.deepEqual(await tmp(), []);

      const dropped = Buffer.from('never committed');
      const other = store.batch();
      await other.put(bodyOf(dropped), { expectedSize: dropped.length });
      await other.discard();
      assert.equal(await store.has(sha256(dropped)), false);
      assert.deepEqual(await tmp(), []);
    }));
});
