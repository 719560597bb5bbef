// `slipway tokens create | list | revoke` and CI publishes with SLIPWAY_TOKEN, as subprocesses against the
// real app (issue 24 part 1): the token is printed once (stdout, with a warning on stderr), never listed;
// a CI environment holding only SLIPWAY_TOKEN updates its site, is refused everything else, and stops at
// once when the token is revoked. `slipway mcp` takes SLIPWAY_TOKEN the same way.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, type CliResult, cliEnv } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

function ok(res: CliResult) {
  assert.equal(res.code, 0, `exit ${res.code}: ${res.stderr}`);
  assert.notEqual(res.json, undefined, `stdout is one JSON document: ${res.stdout}`);
  return res.json;
}

function failed(res: CliResult, exit: number, code: string) {
  assert.equal(res.code, exit, res.stderr);
  assert.equal(res.json?.code, code, res.stdout);
  return res.json;
}

describe('slipway tokens and SLIPWAY_TOKEN', () => {
  let t: TestApp;
  let owner: CliEnv;
  let dir: string;
  let slug: string;
  let token: string;
  let tokenId: string;

  before(async () => {
    t = await startTestApp();
    owner = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'cli-tokens@example.com') });
    dir = await mkdtemp(join(tmpdir(), 'slipway-tokens-'));
    await writeFile(join(dir, 'index.html'), '<h1>v1</h1>');
    slug = ok(await owner.run(['publish', dir, '--json'])).slug;
  });
  after(async () => {
    await t.close();
    await owner.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  test('tokens create prints the token once with a warning; tokens list never shows it', async () => {
    const created = ok(await owner.run(['tokens', 'create', slug, '--name', 'GitHub Actions', '--json']));
    assert.match(created.token, /^svc_site_[0-9a-f]{32}$/);
    token = created.token;
    tokenId = created.id;

    const human = await owner.run(['tokens', 'create', slug, '--name', 'second', '--expires', '7']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^svc_site_[0-9a-f]{32}\n$/, 'stdout is the token alone');
    assert.match(human.stderr, /only this once/);
    assert.match(human.stderr, /SLIPWAY_TOKEN/);

    const listed = ok(await owner.run(['tokens', 'list', slug, '--json']));
    assert.deepEqual(listed.tokens.map((x: { name: string }) => x.name).sort(), ['GitHub Actions', 'second']);
    const table = await owner.run(['tokens', 'list', slug]);
    assert.match(table.stdout, /^ID +NAME +EXPIRES +LAST USED\n/);
    for (const out of [JSON.stringify(listed), table.stdout, table.stderr]) {
      assert.ok(!out.includes(token.slice(9)), 'the secret is never listed');
    }
    failed(
      await owner.run(['tokens', 'create', slug, '--name', 'x', '--expires', '400', '--json']),
      2,
      'INVALID_REQUEST',
    );
  });

  test('a CI job with only SLIPWAY_TOKEN publishes its site, and nothing else', async () => {
    const ci = await cliEnv(t.url, { SLIPWAY_TOKEN: token });
    const build = await mkdtemp(join(tmpdir(), 'slipway-ci-'));
    try {
      await writeFile(join(build, 'index.html'), '<h1>from CI</h1>');
      const published = ok(await ci.run(['publish', build, '--slug', slug, '--json']));
      assert.equal(published.slug, slug);
      assert.equal(published.anonymous, false);
      assert.equal((await siteRequest(t, slug, '/')).body.toString(), '<h1>from CI</h1>');

      // Without --slug a token has no site to create: refused before anything is sent.
      await writeFile(join(build, 'index.html'), '<h1>again</h1>');
      const fresh = await mkdtemp(join(tmpdir(), 'slipway-ci-'));
      await writeFile(join(fresh, 'index.html'), '<h1>new</h1>');
      failed(await ci.run(['publish', fresh, '--json']), 1, 'NEEDS_SLUG');
      failed(await ci.run(['publish', build, '--slug', slug, '--title', 'x', '--json']), 1, 'NEEDS_KEY');
      await rm(fresh, { recursive: true, force: true });
      // The folder remembers its site: a second publish needs no --slug.
      assert.equal(ok(await ci.run(['publish', build, '--json'])).slug, slug);

      // Everything else answers 403 FORBIDDEN (exit 2: the server refused).
      failed(await ci.run(['list', '--json']), 2, 'FORBIDDEN');
      failed(await ci.run(['tokens', 'create', slug, '--name', 'more', '--json']), 2, 'FORBIDDEN');
      failed(await ci.run(['vars', 'list', slug, '--json']), 2, 'FORBIDDEN');

      // A key, when there is one, wins over the token.
      const both = await ci.run(['list', '--json'], { env: { SLIPWAY_API_KEY: owner.env.SLIPWAY_API_KEY! } });
      assert.equal(ok(both).sites[0].slug, slug);

      // Revoked: the next CI publish is refused as an unknown key.
      assert.deepEqual(ok(await owner.run(['tokens', 'revoke', slug, tokenId, '--json'])), {
        id: tokenId,
        deleted: true,
      });
      await writeFile(join(build, 'index.html'), '<h1>after revoke</h1>');
      failed(await ci.run(['publish', build, '--slug', slug, '--json']), 2, 'UNAUTHORIZED');
      assert.equal((await siteRequest(t, slug, '/')).body.toString(), '<h1>again</h1>');
    } finally {
      await ci.dispose();
      await rm(build, { recursive: true, force: true });
    }
  });

  test('slipway mcp with SLIPWAY_TOKEN: update_site publishes the site, other tools are refused', async () => {
    const created = ok(await owner.run(['tokens', 'create', slug, '--name', 'agent', '--json']));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', resolve('src/cli/main.ts'), 'mcp'],
      env: {
        ...(Object.fromEntries(
          Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith('SLIPWAY_')),
        ) as Record<string, string>),
        SLIPWAY_URL: t.url,
        SLIPWAY_TOKEN: created.token,
        HOME: owner.home,
        XDG_CONFIG_HOME: join(owner.home, 'mcp-config'),
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'slipway-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({
        name: 'update_site',
        arguments: { slug, files: [{ path: 'index.html', content: '<h1>from an agent in CI</h1>' }] },
      });
      assert.notEqual(res.isError, true, JSON.stringify(res.content));
      assert.equal((await siteRequest(t, slug, '/')).body.toString(), '<h1>from an agent in CI</h1>');
      const refused = await client.callTool({ name: 'delete_site', arguments: { slug } });
      assert.equal(refused.isError, true);
      assert.match((refused.content as Array<{ text: string }>)[0]!.text, /FORBIDDEN/);
    } finally {
      await client.close();
    }
  });
});
