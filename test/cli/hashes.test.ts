// The file hashes `slipway publish` remembers in .slipway/hashes.json (issue 23): a republish reads only
// the files whose stamp changed, a same-size write with its mtime put back is still seen, a file written
// just before a publish is read again next time (racy git), and a damaged or forged cache never ends in
// wrong bytes. Which files were read is what `--verbose` lists (`hashed <path>` on stderr).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashesPath, writeHashes } from '../../src/cli/hashes.js';
import type { LocalFile } from '../../src/client/publish.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

/**
 * An hour ago, in whole seconds (so that a Date carries the exact mtime back): files this old are past
 * the racy margin, so a publish remembers them.
 */
const anHourAgo = () => new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);

/** Writes `files` under a fresh temp folder, dated an hour ago unless `fresh`, and returns the folder. */
async function folder(files: Record<string, string | Buffer>, fresh: string[] = []): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-hashes-'));
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), body);
    if (!fresh.includes(path)) await utimes(join(dir, path), anHourAgo(), anHourAgo());
  }
  return dir;
}

const hashedIn = (stderr: string) => [...stderr.matchAll(/^hashed (.+)$/gm)].map((m) => m[1]).sort();

/** Twenty binary files and an index page. */
const siteFiles = () => {
  const files: Record<string, string | Buffer> = { 'index.html': '<h1>one</h1>' };
  for (let i = 0; i < 20; i++) files[`assets/img-${i}.bin`] = randomBytes(4096 + i);
  return files;
};

describe('slipway publish remembers file hashes', () => {
  let t: TestApp;
  let cli: CliEnv;
  const dirs: string[] = [];
  const site = async (files: Record<string, string | Buffer>, fresh: string[] = []) => {
    const dir = await folder(files, fresh);
    dirs.push(dir);
    return dir;
  };
  const publish = async (dir: string) => {
    const res = await cli.run(['publish', dir, '--json', '--verbose']);
    assert.equal(res.code, 0, res.stderr);
    return res;
  };

  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'hashes@example.com') });
  });
  after(async () => {
    await t.close();
    await cli.dispose();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a republish reads only the file that was touched or changed', async () => {
    const dir = await site(siteFiles());
    const first = await publish(dir);
    assert.equal(hashedIn(first.stderr).length, 21, 'the first publish reads every file');
    const cache = hashesPath({ dir });
    assert.equal((await stat(cache)).mode & 0o777, 0o600);
    assert.equal(await readFile(join(dir, '.slipway', '.gitignore'), 'utf8'), '*\n');

    const unchanged = await publish(dir);
    assert.deepEqual(hashedIn(unchanged.stderr), [], 'nothing is read again');
    assert.equal(unchanged.json.uploaded, 0);

    await utimes(join(dir, 'assets/img-3.bin'), new Date(), new Date());
    const touched = await publish(dir);
    assert.deepEqual(hashedIn(touched.stderr), ['assets/img-3.bin']);
    assert.equal(touched.json.uploaded, 0, 'same bytes, nothing to send');

    await writeFile(join(dir, 'index.html'), '<h1>two, longer</h1>');
    const changed = await publish(dir);
    assert.ok(hashedIn(changed.stderr).includes('index.html'), changed.stderr);
    assert.ok(hashedIn(changed.stderr).length <= 2, 'index.html and at most the file touched just before');
    assert.equal(changed.json.uploaded, 1);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>two, longer</h1>');

    // Only the files present are remembered.
    await rm(join(dir, 'assets/img-0.bin'));
    await publish(dir);
    const remembered = JSON.parse(await readFile(cache, 'utf8')).files;
    assert.equal(remembered['assets/img-0.bin'], undefined);
  });

  test('a same-size write with its mtime put back is read, and so is a file written just before a publish', async () => {
    const dir = await site(siteFiles(), ['assets/img-7.bin']);
    const first = await publish(dir);
    const again = await publish(dir);
    // img-7.bin was written within the racy margin of the first publish: not trusted, read again.
    assert.deepEqual(hashedIn(again.stderr), ['assets/img-7.bin']);

    const path = join(dir, 'index.html');
    const { atime, mtime, size } = await stat(path);
    const { mtimeNs } = await stat(path, { bigint: true });
    const handle = await open(path, 'r+');
    await handle.write(Buffer.from('<h1>TWO</h1>'), 0, size, 0);
    await handle.close();
    await utimes(path, atime, mtime);
    assert.equal((await stat(path, { bigint: true })).mtimeNs, mtimeNs, 'the mtime is back');
    const res = await publish(dir);
    assert.ok(hashedIn(res.stderr).includes('index.html'), res.stderr);
    assert.equal(res.json.uploaded, 1);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>TWO</h1>');
  });

  test('a file whose mtime is not older than the cache file is read again (racy git)', async () => {
    const dir = await site({ 'index.html': 'x' });
    await publish(dir);
    assert.deepEqual(hashedIn((await publish(dir)).stderr), [], 'remembered');
    // As if the cache had been written in the same clock tick as the file's last write.
    const { mtime } = await stat(join(dir, 'index.html'));
    await utimes(hashesPath({ dir }), mtime, mtime);
    assert.deepEqual(hashedIn((await publish(dir)).stderr), ['index.html']);
  });

  test('a damaged or unreadable cache is ignored with a note; a forged hash is refused by the service and the CLI recovers', async () => {
    const dir = await site(siteFiles());
    const first = await publish(dir);
    const cache = hashesPath({ dir });

    await writeFile(cache, '{"format":1,"sum":"00","files":{"index.html":');
    const damaged = await publish(dir);
    assert.match(damaged.stderr, /hashes\.json is damaged or was edited; hashing every file/);
    assert.equal(hashedIn(damaged.stderr).length, 21);
    assert.equal(damaged.json.uploaded, 0);

    // A hand-made cache (with a valid checksum) whose stamps match but whose hash for index.html is wrong.
    const doc = JSON.parse(await readFile(cache, 'utf8'));
    const forged = Object.entries(doc.files).map(([path, e]) => {
      const entry = e as { hash: string };
      const hash = path === 'index.html' ? randomBytes(32).toString('hex') : entry.hash;
      return { path, ...entry, hash, stamp: e } as unknown as LocalFile;
    });
    await writeHashes(cache, forged);
    const recovered = await publish(dir);
    assert.match(recovered.stderr, /INVALID_HASH|do not hash to the manifest hash/);
    assert.match(recovered.stderr, /hashing every file again/);
    assert.equal(recovered.json.slug, first.json.slug);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>one</h1>');
    const remembered = JSON.parse(await readFile(cache, 'utf8')).files['index.html'];
    assert.equal(remembered.hash, doc.files['index.html'].hash, 'the right hash is remembered again');

    // Unreadable (here a folder in its place) is damaged too, and never stops a publish.
    await rm(cache);
    await mkdir(cache);
    const blocked = await publish(dir);
    assert.match(blocked.stderr, /is damaged or was edited/);
    assert.match(blocked.stderr, /could not remember the file hashes/);
  });
});
