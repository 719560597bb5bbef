// The CLI's memory does not grow with file size (issue 21): hashing and the upload stream the file, so a
// large file is published within the same peak RSS as a small one. Measured with GNU time's "Maximum
// resident set size" of the real CLI process publishing to the real app.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv, collect } from '../helpers/cli.js';

const MAIN = resolve('src/cli/main.ts');
const TSX = import.meta.resolve('tsx');
const MB = 1024 * 1024;
const TIME = '/usr/bin/time';

/** A file of `size` bytes, each 4 MB chunk numbered (written, not sparse: the server stores real bytes). */
async function largeFile(path: string, size: number): Promise<void> {
  const handle = await open(path, 'w');
  const chunk = Buffer.alloc(4 * MB);
  for (let offset = 0; offset < size; offset += chunk.length) {
    chunk.writeUInt32BE(offset / chunk.length, 0);
    await handle.write(chunk, 0, Math.min(chunk.length, size - offset));
  }
  await handle.close();
}

describe('slipway publish memory', { skip: !existsSync(TIME) && `${TIME} is not installed` }, () => {
  let t: TestApp;
  let cli: CliEnv;
  let dir: string;
  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'memory@example.com') });
    dir = await mkdtemp(join(tmpdir(), 'slipway-large-'));
  });
  after(async () => {
    await t.close();
    await cli.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** Publishes `dir` and returns the CLI's peak RSS in MB. */
  async function peakRss(): Promise<number> {
    const child = spawn(TIME, ['-v', process.execPath, '--import', TSX, MAIN, 'publish', dir, '--json'], {
      env: cli.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const done = collect(child);
    child.stdin.end();
    const res = await done;
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.json.uploaded, 1, res.stdout);
    const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(res.stderr)?.[1]);
    assert.ok(kb > 0, res.stderr);
    return kb / 1024;
  }

  test('publishing a 190 MB file (the Free plan allows 200 MB) takes no more memory than a 1 MB one', async () => {
    await largeFile(join(dir, 'video.bin'), 1 * MB);
    const small = await peakRss();
    await largeFile(join(dir, 'video.bin'), 190 * MB);
    const peak = await peakRss();
    process.stdout.write(
      `# peak RSS publishing 1 MB: ${small.toFixed(0)} MB, 190 MB: ${peak.toFixed(0)} MB\n`,
    );
    // Before: 295 MB for 190 MB (fetch buffered the stream body; hashing allocated a chunk per read).
    assert.ok(
      peak - small < 32,
      `peak RSS ${peak.toFixed(0)} MB for 190 MB, ${small.toFixed(0)} MB for 1 MB`,
    );
    // The built CLI (node dist/cli/main.js, before it was bundled) peaked at 96 MB here; the tsx loader
    // of the tests adds ~20 MB (and GC timing under a loaded machine a few more).
    assert.ok(peak < 150, `peak RSS ${peak.toFixed(0)} MB`);
  });
});
