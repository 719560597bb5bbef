// The `slipway` command as `npm run build` ships it (scripts/build-cli.mjs: dist/bundle/slipway.js and
// its chunks), built into a temp folder: its version, a publish and a one-file republish (the publish
// and hashes chunks), an archive deploy (the archive chunk), a backup (better-sqlite3, left external) and
// the MCP server (the MCP chunk) work as they do from the sources, which the other CLI tests run.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { collect } from '../helpers/cli.js';
import { siteRequest } from '../serve/site-client.js';

const CHECKOUT = resolve('.');

describe('the built CLI (dist/bundle)', () => {
  let t: TestApp;
  let root: string;
  let bundle: string;
  let env: Record<string, string>;

  const run = (args: string[]) => {
    const child = spawn(process.execPath, [bundle, ...args], { cwd: root, env });
    const done = collect(child);
    child.stdin.end();
    return done;
  };

  before(async () => {
    t = await startTestApp();
    root = mkdtempSync(join(tmpdir(), 'slipway-bundle-'));
    execFileSync(process.execPath, [join(CHECKOUT, 'scripts', 'build-cli.mjs'), join(root, 'dist')]);
    writeFileSync(join(root, 'package.json'), readFileSync(join(CHECKOUT, 'package.json')));
    symlinkSync(join(CHECKOUT, 'node_modules'), join(root, 'node_modules'));
    bundle = join(root, 'dist', 'bundle', 'slipway.js');
    env = {
      ...(process.env as Record<string, string>),
      HOME: root,
      XDG_CONFIG_HOME: join(root, 'config'),
      SLIPWAY_URL: t.url,
      SLIPWAY_API_KEY: await signIn(t, 'bundle@example.com'),
    };
  });

  after(async () => {
    await t?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('--version is the package version', async () => {
    const res = await run(['--version']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout.trim(), JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')).version);
  });

  test('publish, a one-file republish and an archive deploy', async () => {
    const site = join(root, 'site');
    mkdirSync(join(site, 'css'), { recursive: true });
    writeFileSync(join(site, 'index.html'), '<h1>bundled</h1>');
    writeFileSync(join(site, 'css', 'site.css'), 'h1 { color: teal }');
    const first = await run(['publish', site, '--json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.json.uploaded, 2);

    writeFileSync(join(site, 'index.html'), '<h1>bundled, again</h1>');
    const again = await run(['publish', site, '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual([again.json.slug, again.json.uploaded, again.json.skipped], [first.json.slug, 1, 1]);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>bundled, again</h1>');

    writeFileSync(join(site, 'index.html'), '<h1>bundled, packed</h1>');
    const packed = await run(['publish', site, '--archive', '--json']);
    assert.equal(packed.code, 0, packed.stderr);
    assert.equal((await siteRequest(t, first.json.slug, '/')).text, '<h1>bundled, packed</h1>');
  });

  test('admin backup opens the database through the external better-sqlite3', async () => {
    const res = await run(['admin', 'backup', join(root, 'backup'), '--data-dir', t.dataDir, '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(existsSync(join(root, 'backup')));
  });

  test('slipway mcp answers over stdio with its tools', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bundle, 'mcp'], env });
    const client = new Client({ name: 'slipway-bundle-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'publish_site'));
    } finally {
      await client.close();
    }
  });
});
