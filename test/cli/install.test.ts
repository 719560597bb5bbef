// `slipway` as the README installs it: `npm install -g <checkout>` (what `npm link` does, into a temp
// prefix here), then `slipway publish .` from a site folder. The bin works from a checkout whether or
// not it was built (bin/slipway.mjs: dist/ when fresh, else the source through tsx).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv, collect } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

const CHECKOUT = resolve('.');

function run(command: string, args: string[], cwd: string, env: Record<string, string>) {
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const done = collect(child);
  child.stdin.end();
  return done;
}

describe('slipway installed from the checkout', () => {
  let t: TestApp;
  let cli: CliEnv;
  let prefix: string;
  let dir: string;
  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'installed@example.com') });
    prefix = await mkdtemp(join(tmpdir(), 'slipway-prefix-'));
    dir = await mkdtemp(join(tmpdir(), 'slipway-site-'));
  });
  after(async () => {
    await t.close();
    await cli.dispose();
    await rm(prefix, { recursive: true, force: true });
    await rm(dir, { recursive: true, force: true });
  });

  test('`npm install -g <checkout>` gives a `slipway` that publishes the folder it runs in', async () => {
    const install = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', CHECKOUT],
      dir,
      cli.env,
    );
    assert.equal(install.code, 0, install.stderr);
    const slipway = join(prefix, 'bin', 'slipway');
    const version = await run(slipway, ['--version'], dir, cli.env);
    assert.equal(version.code, 0, version.stderr);
    const pkg = JSON.parse(await readFile(join(CHECKOUT, 'package.json'), 'utf8'));
    assert.equal(version.stdout.trim(), pkg.version);

    await writeFile(join(dir, 'index.html'), '<h1>installed</h1>');
    const published = await run(slipway, ['publish', '.', '--json'], dir, cli.env);
    assert.equal(published.code, 0, published.stderr);
    assert.equal((await siteRequest(t, published.json.slug, '/')).text, '<h1>installed</h1>');
  });
});
