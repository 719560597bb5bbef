// `slipway publish --archive`: the folder as one tar.gz in one request, as a subprocess against the real app:
// the files a publish would send (hidden files and empty files left out, long names through pax), the same
// --json document, the state file (a second run updates the same site, skipping unchanged files), a secret
// refused with exit 3 and nothing published.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');
const LONG = `${'a-long-folder-name/'.repeat(6)}page.html`;

describe('slipway publish --archive', () => {
  let t: TestApp;
  let cli: CliEnv;
  let dir: string;

  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'archiver@example.com') });
    dir = await mkdtemp(join(tmpdir(), 'slipway-archive-'));
    await mkdir(join(dir, LONG, '..'), { recursive: true });
    await writeFile(join(dir, 'index.html'), '<h1>one request</h1>');
    await writeFile(join(dir, LONG), 'deep');
    await writeFile(join(dir, '.env'), 'SECRET=1');
    await writeFile(join(dir, 'empty.txt'), '');
  });
  after(async () => {
    await t.close();
    await cli.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  test('publishes the folder in one request; a second run updates it and skips what is unchanged', async () => {
    const first = await cli.run(['publish', dir, '--archive', '--json']);
    assert.equal(first.code, 0, first.stderr);
    const doc = first.json;
    assert.deepEqual(Object.keys(doc).sort(), [
      'anonymous',
      'siteUrl',
      'skipped',
      'slug',
      'status',
      'uploaded',
      'versionId',
    ]);
    assert.equal(doc.uploaded, 2);
    assert.equal(doc.skipped, 0);
    assert.equal(doc.anonymous, false);
    assert.equal((await siteRequest(t, doc.slug, '/')).body.toString(), '<h1>one request</h1>');
    assert.equal((await siteRequest(t, doc.slug, `/${LONG}`)).body.toString(), 'deep');
    assert.equal((await siteRequest(t, doc.slug, '/.env')).status, 404, 'hidden files stay private');

    await writeFile(join(dir, 'index.html'), '<h1>changed</h1>');
    const second = await cli.run(['publish', dir, '--archive', '--json']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.json.slug, doc.slug, 'the folder state names the site');
    assert.equal(second.json.uploaded, 1);
    assert.equal(second.json.skipped, 1);
    assert.equal((await siteRequest(t, doc.slug, '/')).body.toString(), '<h1>changed</h1>');
  });

  test('a secret: exit 3, SECRET_DETECTED, the live version unchanged', async () => {
    await writeFile(join(dir, 'app.js'), `const stripe = Stripe("sk_live_${randomKey(32)}");\n`);
    const res = await cli.run(['publish', dir, '--archive', '--json']);
    await rm(join(dir, 'app.js'));
    assert.equal(res.code, 3, res.stderr);
    assert.equal(res.json.code, 'SECRET_DETECTED');
    const slug = (await cli.run(['publish', dir, '--archive', '--json'])).json.slug;
    assert.equal((await siteRequest(t, slug, '/app.js')).status, 404);
  });
});
