// `slipway publish` as a subprocess against the real app: anonymous publish then login and claim, owned
// publish and one-file republish, skip rules, secret findings, an interrupted publish resumed, one file.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv, collect } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');

/** Writes `files` (path -> content) under a fresh temp folder and returns the folder. */
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

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe('slipway publish', () => {
  let t: TestApp;
  let cli: CliEnv;
  let owned: CliEnv;
  const dirs: string[] = [];
  const site = async (files: Record<string, string | Buffer>) => {
    const dir = await folder(files);
    dirs.push(dir);
    return dir;
  };

  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url);
    owned = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'owner@example.com') });
  });
  after(async () => {
    await t.close();
    await cli.dispose();
    await owned.dispose();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('anonymous publish prints the site URL, the claim URL and the 24 h warning; login then claim keeps it', async () => {
    const dir = await site({ 'index.html': '<h1>anonymous</h1>', 'css/site.css': 'body { color: red }' });
    const res = await cli.run(['publish', dir]);
    assert.equal(res.code, 0, res.stderr);
    const url = res.stdout.trim();
    assert.match(url, /^http:\/\/[a-z0-9-]+\.localhost:\d+\/$/, 'stdout is the site URL alone');
    assert.equal(res.stdout, `${url}\n`);
    const state = await readState(dir);
    assert.match(res.stderr, /24 hours/);
    assert.ok(res.stderr.includes(`/claim?slug=${state.slug}&token=${state.claimToken}`), res.stderr);
    assert.match(state.claimToken, /^clm_/);
    assert.equal((await stat(join(dir, '.slipway', 'state.json'))).mode & 0o777, 0o600);
    assert.equal((await siteRequest(t, state.slug, '/')).text, '<h1>anonymous</h1>');

    // login: the email by flag, the code from the dev mailer through stdin.
    const login = cli.spawn(['login', '--email', 'claimer@example.com']);
    const done = collect(login);
    await until('the sign-in mail', async () =>
      t.devMail.some((m) => m.includes('claimer@example.com')) ? true : undefined,
    );
    login.stdin.end(`${lastCodeFor(t, 'claimer@example.com')}\n`);
    const logged = await done;
    assert.equal(logged.code, 0, logged.stderr);
    assert.equal((await stat(cli.credentials)).mode & 0o777, 0o600);

    const claimed = await cli.run(['claim', '--json'], { cwd: dir });
    assert.equal(claimed.code, 0, claimed.stderr);
    assert.equal(claimed.json.slug, state.slug);
    assert.equal(claimed.json.owner, 'claimer@example.com');
    assert.equal((await readState(dir)).claimToken, undefined, 'the spent token is forgotten');
    const list = await cli.run(['list', '--json']);
    assert.deepEqual(
      list.json.sites.map((s: { slug: string; expiresAt: string | null }) => [s.slug, s.expiresAt]),
      [[state.slug, null]],
    );
    // The claimed site is now updated in place by the next publish from the folder.
    await writeFile(join(dir, 'index.html'), '<h1>claimed</h1>');
    const again = await cli.run(['publish', dir, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.json.slug, state.slug);
    assert.equal(again.json.anonymous, false);
    assert.equal(again.json.uploaded, 1);
  });

  test('an owned publish, then a republish after changing one file uploads exactly that file', async () => {
    const files: Record<string, string | Buffer> = { 'index.html': '<h1>v1</h1>' };
    for (let i = 0; i < 20; i++) files[`assets/img-${i}.bin`] = randomBytes(2048 + i);
    const dir = await site(files);
    const first = await owned.run(['publish', dir, '--json', '--title', 'Owned']);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(Object.keys(first.json).sort(), [
      'anonymous',
      'siteUrl',
      'skipped',
      'slug',
      'status',
      'uploaded',
      'versionId',
    ]);
    assert.equal(first.json.status, 'active');
    assert.equal(first.json.anonymous, false);
    assert.equal(first.json.uploaded, 21);
    assert.equal(first.json.skipped, 0);
    assert.equal(first.stdout.trim().startsWith('{'), true);

    await writeFile(join(dir, 'index.html'), '<h1>v2</h1>');
    const second = await owned.run(['publish', dir, '--json']);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.json.slug, first.json.slug);
    assert.equal(second.json.uploaded, 1);
    assert.equal(second.json.skipped, 20);
    assert.notEqual(second.json.versionId, first.json.versionId);
    assert.equal((await readState(dir)).versionId, second.json.versionId);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>v2</h1>');

    const info = await owned.run(['info', first.json.slug, '--json']);
    assert.equal(info.json.title, 'Owned');
    assert.equal(info.json.files.length, 21);
    assert.equal(
      info.json.files.find((f: { path: string }) => f.path === 'index.html').contentType,
      'text/html; charset=utf-8',
    );
  });

  test('a publish based on a stale version is refused with VERSION_CONFLICT (exit 2); --force replaces it', async () => {
    const dir = await site({ 'index.html': 'one' });
    const first = await owned.run(['publish', dir, '--json']);
    assert.equal(first.code, 0, first.stderr);
    // Another copy of the folder publishes in between.
    const other = await site({ 'index.html': 'two' });
    assert.equal((await owned.run(['publish', other, '--slug', first.json.slug])).code, 0);
    await writeFile(join(dir, 'index.html'), 'three');
    const stale = await owned.run(['publish', dir]);
    assert.equal(stale.code, 2);
    assert.match(stale.stderr, /^error VERSION_CONFLICT: /m);
    assert.match(stale.stderr, /^hint: .*--force/m);
    const forced = await owned.run(['publish', dir, '--force', '--json']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, 'three');
  });

  test('skip rules: .git, node_modules, hidden files and .slipwayignore are skipped; .well-known is kept', async () => {
    const dir = await site({
      'index.html': '<h1>rules</h1>',
      '.git/HEAD': 'ref: refs/heads/main',
      'node_modules/x/index.js': 'module.exports = 1',
      'lib/node_modules/y.js': 'nested too',
      '.env': 'TOKEN=1',
      '.slipwayignore': 'drafts/\n*.log\n!.htaccess\n',
      '.htaccess': 'kept by a negation',
      'drafts/wip.html': 'draft',
      'debug.log': 'log',
      '.well-known/security.txt': 'Contact: mailto:sec@example.com',
      'docs/_redirects': '/old /new 301',
      'empty.txt': '',
    });
    const res = await owned.run(['publish', dir, '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /skipping 1 empty file.*empty\.txt/);
    const info = await owned.run(['info', res.json.slug, '--json']);
    const paths = info.json.files.map((f: { path: string }) => f.path).sort();
    assert.deepEqual(paths, ['.htaccess', '.well-known/security.txt', 'docs/_redirects', 'index.html']);
    const redirects = info.json.files.find((f: { path: string }) => f.path === 'docs/_redirects');
    assert.equal(redirects.contentType, 'text/plain; charset=utf-8', 'unknown names sniffed as text');
  });

  test('a secret in a file: findings and the commands to fix it, exit 3, nothing published', async () => {
    const stripe = `sk_live_${randomKey(32)}`;
    const dir = await site({
      'index.html': `<!doctype html>\n<script>\n  const key = "${stripe}";\n</script>\n`,
    });
    const res = await owned.run(['publish', dir]);
    assert.equal(res.code, 3, res.stderr);
    assert.equal(res.stdout, '');
    const slug = (await readState(dir)).slug as string;
    const lines = res.stderr.split('\n');
    assert.ok(
      lines.some((l) => l.startsWith('error SECRET_DETECTED: ')),
      res.stderr,
    );
    assert.ok(
      lines.includes(
        'index.html:3  stripe_secret_key  -> use variable STRIPE_SECRET_KEY via host api.stripe.com',
      ),
      res.stderr,
    );
    assert.ok(lines.includes(`  slipway vars set ${slug} STRIPE_SECRET_KEY`), res.stderr);
    assert.ok(lines.includes(`  slipway hosts add ${slug} api.stripe.com`), res.stderr);
    assert.ok(
      lines.includes('(add --verbose for the API calls behind these steps)'),
      'the API calls only with --verbose',
    );
    assert.ok(!res.stderr.includes(stripe.slice(8)), 'the secret is never echoed');
    assert.equal((await siteRequest(t, slug, '/')).status, 404, 'not live');
    // Issue 21: this server's proxy is off (the default), and the CLI says so on a line of its own.
    assert.ok(
      lines.some(
        (l) => l.startsWith('The site proxy is switched off on this server') && /PROXY_ENABLED=true/.test(l),
      ),
      res.stderr,
    );

    const json = await owned.run(['publish', dir, '--json']);
    assert.equal(json.code, 3);
    assert.equal(json.json.code, 'SECRET_DETECTED');
    assert.equal(json.json.status, 400);
    assert.equal(json.json.detectedSecrets[0].suggestedVariableName, 'STRIPE_SECRET_KEY');
    assert.ok(Array.isArray(json.json.remediation.steps));
  });

  test('an interrupted publish is resumed by the rerun, which uploads only what is missing', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 120; i++) files[`f/${String(i).padStart(3, '0')}.bin`] = randomBytes(64 * 1024);
    const dir = await site(files);
    const child = owned.spawn(['publish', dir, '--concurrency', '1', '--json']);
    const exited = collect(child);
    child.stdin.end();
    // The new site is remembered as soon as the server planned it; wait for a few stored files, then kill.
    const slug = await until('the early state file', async () =>
      readState(dir).then(
        (s) => s.slug as string,
        () => undefined,
      ),
    );
    const storedCount = async () => {
      const row = await t.ctx.db.kysely
        .selectFrom('version_files')
        .innerJoin('versions', 'versions.id', 'version_files.version_id')
        .where('versions.site_slug', '=', slug)
        .where('version_files.hash', 'is not', null)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    };
    await until('a few uploads', async () => ((await storedCount()) >= 3 ? true : undefined));
    child.kill('SIGKILL');
    const killed = await exited;
    assert.equal(killed.code, null, 'killed mid-way');
    const stored = await storedCount();
    assert.ok(stored < 120, `only part was uploaded (${stored})`);

    const rerun = await owned.run(['publish', dir, '--json']);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(rerun.json.slug, slug, 'the same site');
    assert.ok(rerun.json.skipped >= stored, `skipped ${rerun.json.skipped} of ${stored} stored`);
    assert.equal(rerun.json.uploaded + rerun.json.skipped, 120);
    const info = await owned.run(['info', slug, '--json']);
    assert.equal(info.json.status, 'active');
    assert.equal(info.json.files.length, 120);
  });

  test('a single file is published under its own name and republished from its own state file', async () => {
    const dir = await site({ 'report.pdf': Buffer.from('%PDF-1.4 not really'), 'other.txt': 'x' });
    const res = await owned.run(['publish', join(dir, 'report.pdf'), '--json']);
    assert.equal(res.code, 0, res.stderr);
    const info = await owned.run(['info', res.json.slug, '--json']);
    assert.deepEqual(
      info.json.files.map((f: { path: string; contentType: string }) => [f.path, f.contentType]),
      [['report.pdf', 'application/pdf']],
    );
    const again = await owned.run(['publish', join(dir, 'report.pdf'), '--json']);
    assert.equal(again.json.slug, res.json.slug);
    assert.equal(again.json.uploaded, 0);
    assert.equal(again.json.skipped, 1);
  });

  test('--ttl sets the expiry of an owned site; errors: missing folder (exit 1), unknown site (exit 2), no server (exit 4)', async () => {
    const dir = await site({ 'index.html': 'ttl' });
    const res = await owned.run(['publish', dir, '--ttl', '3600', '--json']);
    assert.equal(res.code, 0, res.stderr);
    const left = Date.parse(res.json.expiresAt) - t.clock.now();
    assert.ok(left > 3500_000 && left <= 3600_000, `expires in ${left} ms`);

    const missing = await owned.run(['publish', join(dir, 'nope'), '--json']);
    assert.equal(missing.code, 1);
    assert.equal(missing.json.code, 'NO_SUCH_PATH');

    const unknown = await owned.run(['publish', dir, '--slug', 'no-such-site-here', '--json']);
    assert.equal(unknown.code, 2);
    assert.deepEqual(Object.keys(unknown.json).sort(), ['code', 'error', 'status']);
    assert.equal(unknown.json.code, 'NOT_FOUND');

    const down = await owned.run(['publish', dir, '--json'], { env: { SLIPWAY_URL: 'http://127.0.0.1:9' } });
    assert.equal(down.code, 4);
    assert.equal(down.json.code, 'NETWORK_ERROR');
    assert.match(down.json.error, /127\.0\.0\.1:9/);
    const human = await owned.run(['publish', dir], { env: { SLIPWAY_URL: 'http://127.0.0.1:9' } });
    assert.equal(human.code, 4);
    assert.match(human.stderr, /^error NETWORK_ERROR: cannot reach http:\/\/127\.0\.0\.1:9/m);
    assert.ok(!human.stderr.includes('    at '), 'no stack trace');
  });
});
