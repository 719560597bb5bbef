// The management commands as a subprocess against the real app (a dns2 peer answers for custom domains):
// every --json answer is exactly one JSON document with the spec's fields; deletes need confirmation;
// `--help` works for every command.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, type CliResult, cliEnv } from '../helpers/cli.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { reachable } from '../helpers/publish.js';
import { hostRequest, siteRequest } from '../serve/site-client.js';

const TARGET = 'edge.slipway.test';

/** Asserts a --json run succeeded and printed exactly one JSON document; returns it. */
function ok(res: CliResult) {
  assert.equal(res.code, 0, `exit ${res.code}: ${res.stderr}`);
  assert.notEqual(res.json, undefined, `stdout is one JSON document: ${res.stdout}`);
  return res.json;
}

/** Asserts a --json run failed with `exit` and the error body `{error, code, status?}`; returns it. */
function failed(res: CliResult, exit: number, code: string) {
  assert.equal(res.code, exit, res.stderr);
  assert.equal(res.json?.code, code, res.stdout);
  assert.equal(typeof res.json.error, 'string');
  return res.json;
}

describe('slipway site management', () => {
  let dns: DnsPeer;
  let t: TestApp;
  let cli: CliEnv;
  let dir: string;
  let slug: string;

  before(async () => {
    dns = await startDnsPeer({ [TARGET]: { A: ['203.0.113.10'] } });
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET: TARGET });
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'manager@example.com') });
    dir = await mkdtemp(join(tmpdir(), 'slipway-manage-'));
    await writeFile(join(dir, 'index.html'), '<h1>v1</h1>');
    await writeFile(join(dir, 'og.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    slug = ok(await cli.run(['publish', dir, '--json'])).slug;
  });
  after(async () => {
    await t.close();
    await dns.close();
    await cli.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  test('list and info', async () => {
    const list = ok(await cli.run(['list', '--json']));
    assert.equal(list.total, 1);
    assert.equal(list.sites[0].slug, slug);
    assert.equal(list.sites[0].fileCount, 2);
    const human = await cli.run(['list']);
    assert.match(human.stdout, /^SLUG +STATUS +FILES +SIZE +EXPIRES +URL\n/);
    assert.ok(human.stdout.includes(slug));
    const info = ok(await cli.run(['info', slug, '--json']));
    assert.equal(info.slug, slug);
    assert.equal(info.status, 'active');
    assert.equal(info.files.length, 2);
    failed(await cli.run(['info', 'not-a-site', '--json']), 2, 'NOT_FOUND');
  });

  test('meta: title, og:image, password from stdin (never argv), expiry', async () => {
    const res = ok(
      await cli.run(['meta', slug, '--title', 'Hello', '--og-image', '/og.png', '--ttl', '600', '--json']),
    );
    assert.deepEqual(res, { slug, updated: true });
    let info = ok(await cli.run(['info', slug, '--json']));
    assert.equal(info.title, 'Hello');
    assert.equal(info.ogImagePath, 'og.png');
    assert.notEqual(info.expiresAt, null);

    ok(await cli.run(['meta', slug, '--password-stdin', '--json'], { input: 's3cret-pass\n' }));
    assert.equal((await siteRequest(t, slug, '/')).status, 401);
    ok(await cli.run(['meta', slug, '--no-password', '--no-ttl', '--title', '', '--json']));
    info = ok(await cli.run(['info', slug, '--json']));
    assert.equal(info.hasPassword, false);
    assert.equal(info.expiresAt, null);
    assert.equal(info.title, null);
    assert.equal((await siteRequest(t, slug, '/')).status, 200);

    failed(await cli.run(['meta', slug, '--json']), 1, 'INVALID_USAGE');
    failed(await cli.run(['meta', slug, '--password-prompt', '--json']), 1, 'INVALID_USAGE');
    const argv = await cli.run(['meta', slug, '--password', 'x', '--json']);
    assert.equal(argv.code, 1, 'no --password <value> option');
    assert.equal(argv.json.code, 'INVALID_USAGE');
  });

  test('versions and rollback (default: the version before the current one)', async () => {
    await writeFile(join(dir, 'index.html'), '<h1>v2</h1>');
    const v2 = ok(await cli.run(['publish', dir, '--json']));
    const versions = ok(await cli.run(['versions', slug, '--json'])).versions;
    assert.equal(versions.length, 2);
    assert.equal(versions[0].versionId, v2.versionId);
    assert.equal(versions[0].current, true);
    const back = ok(await cli.run(['rollback', slug, '--json'], { cwd: dir }));
    assert.equal(back.versionId, versions[1].versionId);
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>v1</h1>');
    // The folder's state follows the rollback, so its next publish is not a conflict.
    const state = JSON.parse(await readFile(join(dir, '.slipway', 'state.json'), 'utf8'));
    assert.equal(state.versionId, back.versionId);
    ok(await cli.run(['rollback', slug, v2.versionId, '--json']));
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>v2</h1>');
    failed(await cli.run(['rollback', slug, 'ver_nope', '--json']), 2, 'NOT_FOUND');
  });

  test('publish --preview --alias prints the preview; the live site stays until promote', async () => {
    await writeFile(join(dir, 'index.html'), '<h1>v3</h1>');
    const pre = ok(await cli.run(['publish', dir, '--preview', '--alias', 'staging', '--json']));
    assert.equal(pre.slug, slug);
    assert.match(pre.previewUrl, new RegExp(`^http://${slug}--[0-9][a-z0-9]{9}\\.localhost:${t.port}/$`));
    assert.equal(pre.aliasUrl, `http://${slug}--staging.localhost:${t.port}/`);
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>v2</h1>', 'the live site stays');
    assert.equal((await hostRequest(t, `${slug}--staging.localhost:${t.port}`, '/')).text, '<h1>v3</h1>');
    const versions = ok(await cli.run(['versions', slug, '--json'])).versions;
    assert.equal(versions[0].versionId, pre.versionId);
    assert.deepEqual(versions[0].aliases, ['staging']);
    // The folder's base stays the live version: a later plain publish is no conflict.
    const state = JSON.parse(await readFile(join(dir, '.slipway', 'state.json'), 'utf8'));
    assert.notEqual(state.versionId, pre.versionId);

    failed(await cli.run(['promote', slug, 'no-such-alias', '--json']), 1, 'NOT_FOUND');
    const promoted = ok(await cli.run(['promote', slug, 'staging', '--json'], { cwd: dir }));
    assert.equal(promoted.versionId, pre.versionId);
    assert.equal((await siteRequest(t, slug, '/')).text, '<h1>v3</h1>');
    // Back to v2 for the tests below.
    ok(await cli.run(['rollback', slug, versions[1].versionId, '--json'], { cwd: dir }));
    await writeFile(join(dir, 'index.html'), '<h1>v2</h1>');
  });

  test('vars (value from stdin) and hosts', async () => {
    const set = ok(await cli.run(['vars', 'set', slug, 'API_TOKEN', '--json'], { input: 'tok-123\n' }));
    assert.deepEqual(set, { ok: true, stored: ['API_TOKEN'] });
    const vars = ok(await cli.run(['vars', 'list', slug, '--json']));
    assert.deepEqual(
      vars.variables.map((v: { name: string }) => v.name),
      ['API_TOKEN'],
    );
    assert.ok(!JSON.stringify(vars).includes('tok-123'));
    failed(await cli.run(['vars', 'set', slug, 'EMPTY', '--json'], { input: '' }), 1, 'MISSING_INPUT');
    assert.deepEqual(ok(await cli.run(['vars', 'delete', slug, 'API_TOKEN', '--json'])), {
      ok: true,
      deleted: 'API_TOKEN',
    });

    const added = ok(await cli.run(['hosts', 'add', slug, 'api.one.example', 'api.two.example', '--json']));
    assert.deepEqual(added.stored.sort(), ['api.one.example', 'api.two.example']);
    const hosts = ok(await cli.run(['hosts', 'list', slug, '--json']));
    assert.equal(hosts.hosts.length, 2);
    assert.deepEqual(ok(await cli.run(['hosts', 'delete', slug, 'api.one.example', '--json'])), {
      ok: true,
      deleted: ['api.one.example'],
    });
    failed(await cli.run(['hosts', 'delete', slug, 'api.one.example', '--json']), 2, 'NOT_FOUND');
  });

  test('domains: add prints the DNS records, verify fails then passes once DNS has them', async () => {
    // Human output names the CLI's own next command, not the API call behind it (issue 21 walkthrough).
    const addedHuman = await cli.run(['domains', 'add', 'docs.customer.example']);
    assert.equal(addedHuman.code, 0, addedHuman.stderr);
    assert.match(addedHuman.stdout, /then run `slipway domains verify docs\.customer\.example`/);
    assert.doesNotMatch(addedHuman.stdout, /POST \/api\//);
    const pending = ok(await cli.run(['domains', 'list', '--json'])).domains[0];
    assert.equal(pending.status, 'pending');
    const txt = { name: pending.verificationTxtName, value: pending.verificationTxtValue };
    assert.equal(txt.name, '_service.docs.customer.example');

    const human = await cli.run(['domains', 'verify', 'docs.customer.example']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^Not verified yet: /);
    assert.match(
      human.stdout,
      /\nTYPE +NAME +VALUE\nTXT +_service\.docs\.customer\.example +service-verify=/,
    );

    dns.records['docs.customer.example'] = { CNAME: TARGET };
    dns.records['_service.docs.customer.example'] = { TXT: [txt.value] };
    const verifiedHuman = await cli.run(['domains', 'verify', 'docs.customer.example']);
    assert.equal(verifiedHuman.code, 0, verifiedHuman.stderr);
    assert.match(verifiedHuman.stdout, /`slipway links add <slug> --domain docs\.customer\.example`/);
    assert.doesNotMatch(verifiedHuman.stdout, /POST \/api\//);
    const verified = ok(await cli.run(['domains', 'verify', 'docs.customer.example', '--json']));
    assert.equal(verified.verified, true);
    const list = ok(await cli.run(['domains', 'list', '--json']));
    assert.equal(list.domains[0].status, 'active');

    const link = ok(await cli.run(['links', 'add', slug, '--domain', 'docs.customer.example', '--json']));
    assert.equal(link.domain, 'docs.customer.example');
    assert.equal(link.location, '/');
    assert.equal((await hostRequest(t, 'docs.customer.example', '/')).text, '<h1>v2</h1>');
    // Removing a domain removes its links: like `slipway delete`, a script must say --yes.
    failed(
      await cli.run(['domains', 'delete', 'docs.customer.example', '--json']),
      1,
      'CONFIRMATION_REQUIRED',
    );
    assert.equal((await hostRequest(t, 'docs.customer.example', '/')).text, '<h1>v2</h1>');
    assert.deepEqual(ok(await cli.run(['domains', 'delete', 'docs.customer.example', '--yes', '--json'])), {
      domain: 'docs.customer.example',
      deleted: true,
    });
    assert.deepEqual(ok(await cli.run(['links', 'list', '--json'])).links, []);
  });

  test('upgrade, handle, links on the handle, portal', async () => {
    failed(await cli.run(['handle', 'set', 'manager', '--json']), 2, 'PLAN_LIMIT');
    const checkout = ok(await cli.run(['upgrade', '--json']));
    assert.match(checkout.checkoutUrl, /^http:\/\//);
    const human = await cli.run(['upgrade']);
    assert.equal(human.stdout.trim().split('\n').length, 1, 'the checkout URL alone');
    const paid = await fetch(reachable(checkout.checkoutUrl), { method: 'POST' });
    assert.equal(paid.status, 200);
    assert.equal(ok(await cli.run(['whoami', '--json'])).plan, 'hobby');

    const handle = ok(await cli.run(['handle', 'set', 'manager', '--json']));
    assert.equal(handle.handle, 'manager');
    assert.deepEqual(ok(await cli.run(['handle', '--json'])), { handle: 'manager', url: handle.url });
    const link = ok(await cli.run(['links', 'add', slug, '--location', '/docs', '--json']));
    assert.equal(link.handle, 'manager');
    assert.equal(link.location, '/docs');
    assert.equal(ok(await cli.run(['links', 'list', '--json'])).links.length, 1);
    assert.deepEqual(ok(await cli.run(['links', 'delete', link.id, '--json'])), {
      id: link.id,
      deleted: true,
    });
    failed(await cli.run(['handle', 'delete', '--json']), 1, 'CONFIRMATION_REQUIRED');
    assert.equal(ok(await cli.run(['handle', 'delete', '--yes', '--json'])).deleted, true);

    const portal = ok(await cli.run(['portal', '--json']));
    assert.equal(typeof portal.portalUrl, 'string');
    assert.equal(portal.status, 'active');
  });

  test('duplicate, and delete: refused without a terminal unless --yes', async () => {
    const copy = ok(await cli.run(['duplicate', slug, '--json']));
    assert.equal(copy.copiedFrom, slug);
    assert.equal(copy.status, 'active');
    const refused = failed(await cli.run(['delete', copy.slug, '--json']), 1, 'CONFIRMATION_REQUIRED');
    assert.match(refused.hint, /--yes/);
    const human = await cli.run(['delete', copy.slug]);
    assert.equal(human.code, 1);
    assert.match(human.stderr, /^error CONFIRMATION_REQUIRED: refusing to delete/);
    assert.deepEqual(ok(await cli.run(['delete', copy.slug, '--yes', '--json'])), {
      slug: copy.slug,
      deleted: true,
    });
    failed(await cli.run(['info', copy.slug, '--json']), 2, 'NOT_FOUND');
  });

  test('usage errors exit 1, in JSON too', async () => {
    failed(await cli.run(['publish', '--json']), 1, 'INVALID_USAGE');
    failed(await cli.run(['no-such-command', '--json']), 1, 'INVALID_USAGE');
    failed(await cli.run(['publish', dir, '--concurrency', 'zero', '--json']), 1, 'INVALID_USAGE');
    const plain = await cli.run(['info']);
    assert.equal(plain.code, 1);
    assert.equal(plain.stdout, '');
    assert.match(plain.stderr, /missing required argument 'slug'/);
  });
});

/** Every command path, as typed after `slipway`. */
const COMMANDS = [
  'login',
  'logout',
  'whoami',
  'account',
  'publish',
  'list',
  'info',
  'delete',
  'duplicate',
  'claim',
  'meta',
  'versions',
  'rollback',
  'promote',
  'vars',
  'vars set',
  'vars list',
  'vars delete',
  'hosts',
  'hosts add',
  'hosts list',
  'hosts delete',
  'domains',
  'domains add',
  'domains verify',
  'domains list',
  'domains delete',
  'handle',
  'handle show',
  'handle set',
  'handle delete',
  'links',
  'links add',
  'links list',
  'links delete',
  'admin',
  'admin search',
  'admin takedown',
  'admin reinstate',
  'admin delete-site',
  'admin suspend',
  'admin unsuspend',
  'admin plan',
  'admin block',
  'admin blocks',
  'admin unblock',
  'admin backup',
  'admin restore',
  'admin audit',
  'stats',
  'tokens',
  'tokens create',
  'tokens list',
  'tokens revoke',
  'webhooks',
  'webhooks add',
  'webhooks list',
  'webhooks remove',
  'webhooks deliveries',
  'webhooks redeliver',
  'upgrade',
  'portal',
  'mcp',
];

test('--help works for every command and names --json and --server', async () => {
  const cli = await cliEnv('http://127.0.0.1:9');
  try {
    const top = await cli.run(['--help']);
    assert.equal(top.code, 0);
    const listed = [...top.stdout.split('Commands:')[1]!.matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1]);
    assert.deepEqual(
      listed.filter((c) => c !== 'help').sort(),
      COMMANDS.filter((c) => !c.includes(' ')).sort(),
      'the list above covers every command',
    );
    const queue = [...COMMANDS];
    const worker = async () => {
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        const res = await cli.run([...path.split(' '), '--help']);
        assert.equal(res.code, 0, `${path} --help: ${res.stderr}`);
        assert.ok(res.stdout.startsWith(`Usage: slipway ${path} `), `${path}: ${res.stdout.slice(0, 80)}`);
        assert.match(res.stdout, /--json/);
        assert.match(res.stdout, /--server <url>/);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
  } finally {
    await cli.dispose();
  }
});
