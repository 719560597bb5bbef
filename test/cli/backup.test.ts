// `slipway admin backup|restore` (issue 26): a backup taken while a running service publishes and serves,
// restored into a fresh DATA_DIR, serves every site acknowledged before the backup began, byte for byte;
// the sweeper deletes no blob while a backup holds it; a blob missing from the store fails the backup;
// restore refuses a non-empty DATA_DIR.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  BackupError,
  backupDataDir,
  BACKUP_HOLD_FILE as CLI_HOLD_FILE,
  restoreDataDir,
} from '../../src/cli/backup.js';
import { BLOB_MIN_AGE_MS } from '../../src/core/sweeper.js';
import { BACKUP_HOLD_FILE, DiskBlobStore } from '../../src/store/blob/disk.js';
import { freePort, rawRequest, signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { cliEnv } from '../helpers/cli.js';
import { assertPublished, publish, sha256 } from '../helpers/publish.js';
import { siteHost } from '../helpers/seed.js';

const siteFiles = (n: number): Record<string, Buffer | string> => ({
  'index.html': `<!doctype html><h1>site ${n}</h1>`,
  'data.bin': randomBytes(2000 + n * 37),
  [`page-${n}.txt`]: `page ${n} ${randomBytes(8).toString('hex')}`,
});

async function served(t: TestApp, slug: string, path: string) {
  return rawRequest(t.port, { host: siteHost(slug, t.port), path: `/${path}` });
}

const tmp = (prefix: string) => mkdtemp(join(tmpdir(), prefix));

// test/cli runs on the embedded set only (scripts/test.mjs): the backup's own set.
describe('admin backup and restore (embedded default)', () => {
  let t: TestApp;
  const dirs: string[] = [];
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('the CLI and the blob store name the same hold file', () => {
    assert.equal(CLI_HOLD_FILE, BACKUP_HOLD_FILE);
  });

  test('a backup during continuous publishing and serving restores every acknowledged site byte for byte', async () => {
    const acknowledged = new Map<string, Record<string, Buffer | string>>();
    for (let i = 0; i < 25; i++) {
      const files = siteFiles(i);
      const out = assertPublished(await publish(t, files));
      acknowledged.set(out.slug, files);
    }
    // Publishing and serving keep going while the backup runs.
    let stop = false;
    let publishedDuring = 0;
    let servedDuring = 0;
    const slugs = [...acknowledged.keys()];
    const publisher = (async () => {
      for (let i = 1000; !stop; i++) {
        assertPublished(await publish(t, siteFiles(i)));
        publishedDuring++;
      }
    })();
    const reader = (async () => {
      for (let i = 0; !stop; i++) {
        const res = await served(t, slugs[i % slugs.length]!, 'index.html');
        assert.equal(res.status, 200);
        servedDuring++;
      }
    })();
    // Let the loops get going, then back up.
    while (publishedDuring < 2) await new Promise((r) => setTimeout(r, 10));
    const backupDir = await tmp('slipway-backup-');
    dirs.push(backupDir);
    const [published0, served0, started] = [publishedDuring, servedDuring, Date.now()];
    // The command itself, in its own process (its own SQLite connection and file locks), as an operator runs it.
    const cli = await cliEnv(t.url);
    const ran = await cli.run(['admin', 'backup', join(backupDir, 'b'), '--data-dir', t.dataDir, '--json']);
    await cli.dispose();
    assert.equal(ran.code, 0, ran.stderr);
    const manifest = ran.json;
    const during = publishedDuring;
    // The service kept answering while the backup ran (the copy yields between blobs).
    assert.ok(servedDuring > served0, `served during the backup: ${servedDuring - served0}`);
    process.stderr.write(
      `backup: ${Date.now() - started} ms, ${manifest.blobs.count} blobs; meanwhile ${publishedDuring - published0} published, ${servedDuring - served0} served\n`,
    );
    while (publishedDuring < during + 2) await new Promise((r) => setTimeout(r, 10));
    stop = true;
    await Promise.all([publisher, reader]);
    assert.ok(
      publishedDuring >= 4 && servedDuring > 0,
      `${publishedDuring} published, ${servedDuring} served`,
    );
    assert.equal(manifest.secretsKey, 'file');
    assert.ok(manifest.blobs.count >= 25 * 3, `${manifest.blobs.count} blobs`);
    assert.equal(existsSync(join(t.dataDir, BACKUP_HOLD_FILE)), false, 'the hold is gone after the backup');

    const dataDir = await tmp('slipway-restored-');
    dirs.push(dataDir);
    await rm(dataDir, { recursive: true });
    await restoreDataDir(join(backupDir, 'b'), dataDir);
    assert.deepEqual(
      await readFile(join(dataDir, 'secrets.key')),
      await readFile(join(t.dataDir, 'secrets.key')),
    );
    // A service on the restored DATA_DIR (its own port; the first keeps running).
    const restored = await startTestApp(
      {},
      {
        reuse: {
          dataDir,
          port: await freePort(),
          backend: { env: {}, dispose: async () => {} },
          clock: t.clock,
        },
      },
    );
    try {
      for (const [slug, files] of acknowledged) {
        for (const [path, body] of Object.entries(files)) {
          const res = await served(restored, slug, path);
          assert.equal(res.status, 200, `${slug}/${path}`);
          assert.deepEqual(res.body, Buffer.from(body), `${slug}/${path} byte for byte`);
        }
      }
    } finally {
      await restored.close();
    }
  });

  test('restore refuses a non-empty DATA_DIR, changing nothing, exit code non-zero', async () => {
    const backupDir = join(await tmp('slipway-backup-'), 'b');
    dirs.push(backupDir);
    const cli = await cliEnv(t.url);
    try {
      const made = await cli.run(['admin', 'backup', backupDir, '--data-dir', t.dataDir, '--json']);
      assert.equal(made.code, 0, made.stderr);
      assert.equal(made.json.format, 'slipway-backup-1');
      const dataDir = await tmp('slipway-busy-');
      dirs.push(dataDir);
      await writeFile(join(dataDir, 'keep.txt'), 'mine');
      const res = await cli.run(['admin', 'restore', backupDir, '--data-dir', dataDir]);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /not empty/);
      assert.equal(existsSync(join(dataDir, 'slipway.db')), false);
      assert.equal(await readFile(join(dataDir, 'keep.txt'), 'utf8'), 'mine');
      // A second backup into the same (now non-empty) directory is refused too.
      const again = await cli.run(['admin', 'backup', backupDir, '--data-dir', t.dataDir]);
      assert.notEqual(again.code, 0);
      assert.match(again.stderr, /not empty/);
    } finally {
      await cli.dispose();
    }
  });

  test('a blob the database references but the store lost fails the backup loudly', async () => {
    const body = `lost ${randomBytes(8).toString('hex')}`;
    assertPublished(await publish(t, { 'lost.txt': body }));
    const lost = sha256(body);
    const blobFile = new DiskBlobStore(t.dataDir).localPath(lost);
    const saved = await readFile(blobFile);
    await unlink(blobFile);
    const dir = join(await tmp('slipway-backup-'), 'b');
    dirs.push(dir);
    try {
      await assert.rejects(backupDataDir(t.dataDir, dir), (err: Error) => {
        assert.ok(err instanceof BackupError);
        assert.match(err.message, new RegExp(lost));
        return true;
      });
      assert.equal(existsSync(join(dir, 'backup.json')), false, 'no finished-backup marker');
      assert.equal(existsSync(join(t.dataDir, BACKUP_HOLD_FILE)), false);
    } finally {
      await mkdir(join(blobFile, '..'), { recursive: true });
      await writeFile(blobFile, saved);
    }
  });

  test('a damaged backup is refused by restore, which leaves DATA_DIR empty', async () => {
    const body = `damaged ${randomBytes(8).toString('hex')}`;
    assertPublished(await publish(t, { 'damaged.txt': body }));
    const dir = join(await tmp('slipway-backup-'), 'b');
    dirs.push(dir);
    await backupDataDir(t.dataDir, dir);
    const copy = new DiskBlobStore(dir).localPath(sha256(body));
    await writeFile(copy, 'something else');
    const dataDir = join(await tmp('slipway-restored-'), 'data');
    dirs.push(dataDir);
    await assert.rejects(restoreDataDir(dir, dataDir), (err: Error) => {
      assert.ok(err instanceof BackupError);
      assert.match(err.message, new RegExp(`${sha256(body)} is damaged`));
      return true;
    });
    assert.deepEqual(await readdir(dataDir), [], 'nothing half-restored for a service to start on');
  });

  test('a second backup while one runs is refused (a fresh hold)', async () => {
    const hold = join(t.dataDir, BACKUP_HOLD_FILE);
    await writeFile(hold, 'another');
    const dir = join(await tmp('slipway-backup-'), 'b');
    dirs.push(dir);
    try {
      await assert.rejects(backupDataDir(t.dataDir, dir), /another backup/);
      assert.ok(existsSync(hold), "the running backup's hold stays");
    } finally {
      await rm(hold, { force: true });
    }
  });

  test('the sweeper deletes no blob while a backup holds them, and again once it is over', async () => {
    const key = await signIn(t, `backup-${randomBytes(4).toString('hex')}@example.com`);
    const out = assertPublished(
      await publish(t, { 'gone.txt': `gone ${randomBytes(8).toString('hex')}` }, { key }),
    );
    const del = await t.api(`/api/v1/publish/${out.slug}`, { method: 'DELETE', key });
    assert.ok(del.status < 300, del.text);
    t.clock.advance(BLOB_MIN_AGE_MS + 60_000);
    const hold = join(t.dataDir, BACKUP_HOLD_FILE);
    await writeFile(hold, 'test');
    try {
      assert.equal((await sweepNow(t)).blobsDeleted, 0, 'held: nothing deleted');
      // A hold left by a dead backup (not refreshed for minutes) holds nothing.
      const old = new Date(Date.now() - 10 * 60_000);
      await utimes(hold, old, old);
      assert.ok((await sweepNow(t)).blobsDeleted >= 1, 'a stale hold is ignored');
    } finally {
      await rm(hold, { force: true });
    }
  });

  test('a backup that starts between the row forgotten and the file deleted keeps the file and the row', async () => {
    const key = await signIn(t, `race-${randomBytes(4).toString('hex')}@example.com`);
    const body = `race ${randomBytes(8).toString('hex')}`;
    const out = assertPublished(await publish(t, { 'race.txt': body }, { key }));
    const hash = sha256(body);
    assert.ok(out.slug);
    await t.api(`/api/v1/publish/${out.slug}`, { method: 'DELETE', key });
    t.clock.advance(BLOB_MIN_AGE_MS + 60_000);
    // First look: no backup; the second (after the row is forgotten): one has begun.
    const blobs = t.ctx.blobs as DiskBlobStore;
    let calls = 0;
    blobs.deletionHeld = async () => ++calls > 1;
    try {
      assert.equal((await sweepNow(t)).blobsDeleted, 0);
    } finally {
      delete (blobs as { deletionHeld?: unknown }).deletionHeld;
    }
    assert.ok(existsSync(blobs.localPath(hash)), 'the bytes are kept');
    const row = await t.ctx.db.kysely
      .selectFrom('blobs')
      .select('hash')
      .where('hash', '=', hash)
      .executeTakeFirst();
    assert.equal(row?.hash, hash, 'the index row is back, for a later sweep');
    assert.ok((await sweepNow(t)).blobsDeleted >= 1, 'collected once no backup holds it');
  });
});

describe('admin backup on the scale-out set', () => {
  test('refuses with DATABASE_URL set, pointing at docs/operations.md', async () => {
    const cli = await cliEnv('http://127.0.0.1:1', { DATABASE_URL: 'postgres://x@127.0.0.1/x' });
    try {
      const res = await cli.run(['admin', 'backup', join(tmpdir(), 'never'), '--data-dir', tmpdir()]);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /DATABASE_URL/);
      assert.match(res.stderr, /operations\.md/);
    } finally {
      await cli.dispose();
    }
  });
});
