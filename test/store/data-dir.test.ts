// DATA_DIR is private to the service's user (issue 19 item 6): created 0700, every file Slipway writes in
// it 0600 (the SQLite database and its -wal/-shm, the secrets key, the dev outbox, blobs and their temp
// files), and one left looser by an older release is tightened at start-up with a warning.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { openStores, type Stores } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';

// The usual default: without the fix, files come out 0644 and directories 0755.
process.umask(0o022);

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

/** Every path under `dir` (recursively) with its mode, for one readable assertion. */
async function modesUnder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir, { recursive: true })) out[name] = modeOf(join(dir, name));
  return out;
}

async function embeddedContext(dataDir: string, logs: string[] = []): Promise<Stores> {
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  return openStores(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }), {
    logStream,
    devMailWrite: () => {},
  });
}

describe('DATA_DIR permissions', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'slipway-datadir-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('a new DATA_DIR is 0700 and everything written in it is 0600 (directories 0700)', async () => {
    const dataDir = join(root, 'new', 'data');
    const ctx = await embeddedContext(dataDir);
    try {
      await ctx.mailer.send({ to: 'someone@example.com', subject: 'code ABCD-EFGH', text: 'ABCD-EFGH' });
      const bytes = Buffer.from('a private page');
      const hash = createHash('sha256').update(bytes).digest('hex');
      await ctx.blobs.put(Readable.from([bytes]), { expectedSize: bytes.length, expectedHash: hash });
      await ctx.db.kysely.selectFrom('sites').select('slug').execute();
      assert.equal(modeOf(dataDir), '700');
      const modes = await modesUnder(dataDir);
      for (const name of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm', 'secrets.key', 'outbox.log']) {
        assert.equal(modes[name], '600', `${name}: ${JSON.stringify(modes)}`);
      }
      const blob = join('blobs', hash.slice(0, 2), hash.slice(2, 4), hash);
      assert.equal(modes[blob], '600', JSON.stringify(modes));
      for (const [name, mode] of Object.entries(modes)) {
        const isDir = statSync(join(dataDir, name)).isDirectory();
        assert.equal(mode, isDir ? '700' : '600', name);
      }
    } finally {
      await ctx.close();
    }
  });

  test('a DATA_DIR left looser is tightened at start-up and the warning says what changed', async () => {
    const dataDir = join(root, 'old');
    // The database is created by a first start, then everything loosened as an older release left it.
    await (await embeddedContext(dataDir)).close();
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'blobs'), 0o775);
    for (const name of ['slipway.db', 'secrets.key']) chmodSync(join(dataDir, name), 0o644);
    // A crash leaves the -wal and -shm files behind.
    for (const name of ['slipway.db-wal', 'slipway.db-shm', 'outbox.log']) {
      writeFileSync(join(dataDir, name), '', { mode: 0o644 });
    }
    const logs: string[] = [];
    const ctx = await embeddedContext(dataDir, logs);
    try {
      assert.equal(modeOf(dataDir), '700');
      assert.equal(modeOf(join(dataDir, 'blobs')), '700');
      for (const name of ['slipway.db', 'slipway.db-wal', 'slipway.db-shm', 'secrets.key', 'outbox.log']) {
        assert.equal(modeOf(join(dataDir, name)), '600', name);
      }
      const warning = logs.find((l) => l.includes('"level":40') && l.includes('tightened'));
      assert.ok(warning, logs.join(''));
      assert.match(warning, /"from":"755","to":"700"/);
      assert.match(warning, /slipway\.db/);
    } finally {
      await ctx.close();
    }
  });
});
