// The CLI as a new user meets it (issue 21): `npm run cli` from a site folder publishes that folder and
// keeps its state there, a Slipway DATA_DIR is never published, secret fixes name CLI commands, an
// expired site says what revives it, hints name CLI commands, Ctrl-C restores the terminal, a closed
// stdout ends quietly.

import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, type CliResult, cliEnv, collect } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

const CHECKOUT = resolve('.');
const MAIN = resolve('src/cli/main.ts');
const TSX = import.meta.resolve('tsx');
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');

async function folder(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-site-'));
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), body);
  }
  return dir;
}

const readState = async (dir: string) =>
  JSON.parse(await readFile(join(dir, '.slipway', 'state.json'), 'utf8'));

/** `npm --prefix <checkout> run cli -- ...args` from `cwd`, as a user outside the checkout types it. */
function npmCli(env: CliEnv, cwd: string, args: string[], extra: Record<string, string> = {}) {
  const child = spawn('npm', ['--prefix', CHECKOUT, 'run', '--silent', 'cli', '--', ...args], {
    cwd,
    env: { ...env.env, ...extra },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const done = collect(child);
  child.stdin.end();
  return done;
}

describe('slipway for a new user (issue 21)', () => {
  let t: TestApp;
  let anon: CliEnv;
  let owned: CliEnv;
  let key: string;
  const dirs: string[] = [];
  const site = async (files: Record<string, string | Buffer>) => {
    const dir = await folder(files);
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    t = await startTestApp();
    anon = await cliEnv(t.url);
    key = await signIn(t, 'first-hour@example.com');
    owned = await cliEnv(t.url, { SLIPWAY_API_KEY: key });
  });
  after(async () => {
    await t.close();
    await anon.dispose();
    await owned.dispose();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('`npm run cli -- publish .` publishes the folder it was typed in; rollback and claim use that folder’s state', async () => {
    const dir = await site({ 'index.html': '<h1>one</h1>' });
    const first = await npmCli(owned, dir, ['publish', '.']);
    assert.equal(first.code, 0, first.stderr);
    const state = await readState(dir);
    assert.equal((await siteRequest(t, state.slug, '/')).text, '<h1>one</h1>');

    await writeFile(join(dir, 'index.html'), '<h1>two</h1>');
    assert.equal((await npmCli(owned, dir, ['publish', '.'])).code, 0);
    const rolled = await npmCli(owned, dir, ['rollback', state.slug]);
    assert.equal(rolled.code, 0, rolled.stderr);
    assert.equal((await siteRequest(t, state.slug, '/')).text, '<h1>one</h1>');
    assert.equal((await readState(dir)).versionId, state.versionId, 'rollback updated this folder’s state');
    await writeFile(join(dir, 'index.html'), '<h1>three</h1>');
    const again = await npmCli(owned, dir, ['publish', '.']);
    assert.equal(again.code, 0, `no VERSION_CONFLICT after a rollback: ${again.stderr}`);
    assert.equal((await siteRequest(t, state.slug, '/')).text, '<h1>three</h1>');

    const anonDir = await site({ 'index.html': '<h1>anonymous</h1>' });
    assert.equal((await npmCli(anon, anonDir, ['publish', '.'])).code, 0);
    const anonState = await readState(anonDir);
    assert.match(anonState.claimToken, /^clm_/);
    const claimed = await npmCli(anon, anonDir, ['claim'], { SLIPWAY_API_KEY: key });
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.equal((await readState(anonDir)).claimToken, undefined);
  });

  test('`npm run cli -- publish .` from a site folder inside the checkout publishes that folder, not the checkout', async () => {
    await mkdir(join(CHECKOUT, '.tmp'), { recursive: true });
    const dir = await mkdtemp(join(CHECKOUT, '.tmp', 'site-'));
    dirs.push(dir);
    await writeFile(join(dir, 'index.html'), '<h1>inside</h1>');
    const child = spawn('npm', ['run', '--silent', 'cli', '--', 'publish', '.', '--json'], {
      cwd: dir,
      env: owned.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const done = collect(child);
    child.stdin.end();
    const res = await done;
    assert.equal(res.code, 0, res.stderr);
    const info = await owned.run(['info', res.json.slug, '--json']);
    assert.deepEqual(
      info.json.files.map((f: { path: string }) => f.path),
      ['index.html'],
    );
    assert.equal((await readState(dir)).slug, res.json.slug);
  });

  test('a folder holding a Slipway DATA_DIR or a secrets.key is refused before any request', async () => {
    const dir = await site({
      'index.html': '<h1>checkout</h1>',
      'data/secrets.key': randomBytes(32).toString('base64'),
      'data/slipway.db': 'SQLite format 3\0',
      'data/outbox.log': 'code 123456\n',
    });
    // A server that is not there: any request would end in NETWORK_ERROR (exit 4), not exit 1.
    const closed = { SLIPWAY_URL: 'http://127.0.0.1:9' };
    const res = await anon.run(['publish', dir], { env: closed });
    assert.equal(res.code, 1, res.stderr);
    assert.match(res.stderr, /^error SERVICE_DATA: refusing to publish .*data\/secrets\.key/m);
    const json = await anon.run(['publish', dir, '--json'], { env: closed });
    assert.equal(json.code, 1);
    assert.equal(json.json.code, 'SERVICE_DATA');
    assert.match(json.json.error, /Slipway service's data/);

    const keyOnly = await site({ 'index.html': 'x', 'deep/er/secrets.key': 'k' });
    const refused = await anon.run(['publish', keyOnly, '--json'], { env: closed });
    assert.equal(refused.json?.code, 'SERVICE_DATA', refused.stdout);
  });

  test('SECRET_DETECTED prints the CLI’s own commands; the raw API calls only with --verbose', async () => {
    const stripe = `sk_live_${randomKey(32)}`;
    const dir = await site({ 'index.html': `<script>\n  const key = "${stripe}";\n</script>\n` });
    const res = await owned.run(['publish', dir]);
    assert.equal(res.code, 3, res.stderr);
    const slug = (await readState(dir)).slug as string;
    const lines = res.stderr.split('\n');
    const vars = lines.indexOf(`  slipway vars set ${slug} STRIPE_SECRET_KEY`);
    const hosts = lines.indexOf(`  slipway hosts add ${slug} api.stripe.com`);
    const republish = lines.indexOf(`  slipway publish ${dir}`);
    assert.ok(vars > 0 && hosts > vars && republish > hosts, res.stderr);
    assert.ok(
      lines.some((l) => l.includes('{{STRIPE_SECRET_KEY}}')),
      res.stderr,
    );
    // The request the page sends the proxy, and a hint that names what the terminal shows.
    assert.match(
      res.stderr,
      /JSON \{"url": "https:\/\/api\.stripe\.com\/\.\.\.", "method", "headers", "body"\}/,
    );
    assert.match(res.stderr, /^hint: Follow the steps above/m);
    assert.doesNotMatch(res.stderr, /see remediation\.steps/);
    assert.ok(!/\b(PUT|PATCH) http/.test(res.stderr), `no raw API calls without --verbose:\n${res.stderr}`);
    assert.ok(!res.stderr.includes(stripe.slice(8)));

    const verbose = await owned.run(['publish', dir, '--verbose']);
    assert.equal(verbose.code, 3);
    assert.match(verbose.stderr, /PUT http\S+\/api\/v1\/publish\/\S+\/variables/);
    assert.ok(
      verbose.stderr.indexOf('slipway vars set') < verbose.stderr.indexOf('/variables'),
      'the CLI commands come first',
    );
  });

  test('publishing to an expired owned site says how to revive it, and that works', async () => {
    const dir = await site({ 'index.html': '<h1>expiring</h1>' });
    assert.equal((await owned.run(['publish', dir])).code, 0);
    const { slug } = await readState(dir);
    assert.equal((await owned.run(['meta', slug, '--ttl', '60'])).code, 0);
    t.clock.advance(61_000);
    await writeFile(join(dir, 'index.html'), '<h1>revived</h1>');
    const res = await owned.run(['publish', dir]);
    assert.equal(res.code, 2, res.stderr);
    assert.doesNotMatch(res.stderr, /create a new one/);
    assert.ok(res.stderr.includes(`slipway meta ${slug} --no-ttl`), res.stderr);
    const json = await owned.run(['publish', dir, '--json']);
    assert.match(json.json.error, /extend or remove its expiry/);
    assert.match(json.json.hint, /ttlSeconds/);

    assert.equal((await owned.run(['meta', slug, '--no-ttl'])).code, 0);
    const revived = await owned.run(['publish', dir]);
    assert.equal(revived.code, 0, revived.stderr);
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>revived</h1>');
  });

  test('hints name CLI commands, not API calls', async () => {
    const dir = await site({ 'index.html': 'hint' });
    assert.equal((await owned.run(['publish', dir])).code, 0);
    const { slug } = await readState(dir);
    assert.equal((await owned.run(['domains', 'add', 'unverified.example'])).code, 0);
    const link = await owned.run(['links', 'add', slug, '--domain', 'unverified.example']);
    assert.equal(link.code, 2, link.stderr);
    assert.match(link.stderr, /^hint: Run `slipway domains verify unverified\.example`/m);
    const handle = await owned.run(['handle', 'set', 'newcomer']);
    assert.equal(handle.code, 2, handle.stderr);
    assert.match(handle.stderr, /^hint: .*`slipway upgrade`/m);
    assert.doesNotMatch(handle.stderr, /\/api\/billing/);
    const json = await owned.run(['handle', 'set', 'newcomer', '--json']);
    assert.match(json.json.cliHint, /slipway upgrade/);
  });

  test('`slipway publish --help` into a closed pipe ends quietly', async () => {
    const child = spawn(process.execPath, ['--import', TSX, MAIN, 'publish', '--help'], {
      env: anon.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // The reader goes away before the help is written (`| head -0`).
    child.stdout.destroy();
    const done = collect(child as ChildProcessWithoutNullStreams);
    child.stdin.end();
    const res: CliResult = await done;
    assert.equal(res.stderr, '', 'no EPIPE stack trace');
    assert.equal(res.code, 0);
  });

  test('Ctrl-C during the progress bar shows the cursor and turns wrapping back on, exit 130', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 400; i++) files[`f/${i}.bin`] = randomBytes(256 * 1024);
    const dir = await site(files);
    // `script` gives the CLI a terminal (a pseudo-TTY), as a user has; ^C through it is a real SIGINT.
    const command = [process.execPath, '--import', TSX, MAIN, 'publish', dir, '--concurrency', '1']
      .map((a) => `'${a}'`)
      .join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...owned.env, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let seen = '';
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
    await new Promise<void>((shown, failed) => {
      const timer = setTimeout(() => failed(new Error(`no progress bar:\n${seen}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        seen += c.toString('latin1');
        if (seen.includes('\x1b[?25l') && seen.includes('files |')) {
          clearTimeout(timer);
          shown();
        }
      });
    });
    child.stdin.write('\x03');
    const code = await exited;
    const afterBar = seen.slice(seen.lastIndexOf('\x1b[?25l'));
    assert.ok(afterBar.includes('\x1b[?25h'), `cursor shown again: ${JSON.stringify(afterBar.slice(-200))}`);
    assert.ok(afterBar.includes('\x1b[?7h'), 'line wrapping back on');
    assert.equal(code, 130);
  });
});
