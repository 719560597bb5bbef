// `slipway mcp` driven by the MCP SDK's own client over stdio, against a real server: the tools are
// listed with their schemas, a directory is published and its files come back over HTTP, and a secret
// comes back as a tool error that tells the agent the remediation (ask the user first).

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { hostRequest } from '../serve/site-client.js';

const TOOLS = [
  'claim_site',
  'delete_site',
  'get_site',
  'get_site_analytics',
  'list_sites',
  'publish_site',
  'set_metadata',
  'set_proxy_hosts',
  'set_variables',
  'update_site',
];

type TextContent = Array<{ type: string; text: string }>;

describe('slipway mcp (Model Context Protocol over stdio)', () => {
  let t: TestApp;
  let key: string;
  let home: string;
  let client: Client;

  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'agent@example.com');
    home = await mkdtemp(join(tmpdir(), 'slipway-mcp-'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', resolve('src/cli/main.ts'), 'mcp'],
      env: {
        ...(process.env as Record<string, string>),
        SLIPWAY_URL: t.url,
        SLIPWAY_API_KEY: key,
        XDG_CONFIG_HOME: join(home, 'config'),
        HOME: home,
      },
      stderr: 'pipe',
    });
    client = new Client({ name: 'slipway-test', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await t.close();
    await rm(home, { recursive: true, force: true });
  });

  test('tools/list names every tool, each with a JSON Schema for its input', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tl) => tl.name).sort(), TOOLS);
    for (const tl of tools) {
      assert.equal(tl.inputSchema.type, 'object', tl.name);
      assert.equal(typeof tl.description, 'string');
    }
    const publish = tools.find((tl) => tl.name === 'publish_site')!;
    assert.ok('directory' in (publish.inputSchema.properties ?? {}));
    assert.ok('files' in (publish.inputSchema.properties ?? {}));
  });

  test('publish_site publishes a directory and its files are served over HTTP', async () => {
    const dir = join(home, 'site');
    await mkdir(join(dir, 'css'), { recursive: true });
    await writeFile(join(dir, 'index.html'), '<!doctype html><h1>from an agent</h1>');
    await writeFile(join(dir, 'css', 'site.css'), 'h1 { color: teal }');
    const res = await client.callTool({ name: 'publish_site', arguments: { directory: dir } });
    assert.notEqual(res.isError, true, JSON.stringify(res.content));
    const out = JSON.parse((res.content as TextContent)[0]!.text);
    assert.equal(out.status, 'active');
    assert.equal(out.uploaded, 2);
    assert.match(out.siteUrl, new RegExp(`^http://${out.slug}\\.localhost:${t.port}/$`));

    const page = await hostRequest(t, `${out.slug}.localhost:${t.port}`, '/');
    assert.equal(page.status, 200);
    assert.equal(page.text, '<!doctype html><h1>from an agent</h1>');
    assert.equal(
      (await hostRequest(t, `${out.slug}.localhost:${t.port}`, '/css/site.css')).text,
      'h1 { color: teal }',
    );

    // The same site through the other tools.
    const got = await client.callTool({ name: 'get_site', arguments: { slug: out.slug } });
    const site = JSON.parse((got.content as TextContent)[0]!.text);
    assert.deepEqual(site.files.map((f: { path: string }) => f.path).sort(), ['css/site.css', 'index.html']);
    const listed = await client.callTool({ name: 'list_sites', arguments: {} });
    assert.ok(
      JSON.parse((listed.content as TextContent)[0]!.text).sites.some(
        (s: { slug: string }) => s.slug === out.slug,
      ),
    );

    // update_site with inline files: one changed file is uploaded.
    const upd = await client.callTool({
      name: 'update_site',
      arguments: {
        slug: out.slug,
        files: [
          { path: 'index.html', content: '<!doctype html><h1>updated</h1>' },
          {
            path: 'css/site.css',
            content: Buffer.from('h1 { color: teal }').toString('base64'),
            encoding: 'base64',
          },
        ],
      },
    });
    assert.notEqual(upd.isError, true, JSON.stringify(upd.content));
    assert.equal(JSON.parse((upd.content as TextContent)[0]!.text).uploaded, 1);
    assert.equal(
      (await hostRequest(t, `${out.slug}.localhost:${t.port}`, '/')).text,
      '<!doctype html><h1>updated</h1>',
    );
  });

  test('a secret comes back as a tool error with the findings and the remediation, asking the user first', async () => {
    const res = await client.callTool({
      name: 'publish_site',
      arguments: {
        files: [
          {
            path: 'index.html',
            content: '<script>const k = "sk_live_4eC39HqLyjWDarjtT1zdp7dcQx91Lm";</script>',
          },
        ],
      },
    });
    assert.equal(res.isError, true);
    const text = (res.content as TextContent).map((c) => c.text).join('\n');
    assert.match(text, /SECRET_DETECTED/);
    assert.match(text, /index\.html:1 stripe_secret_key/);
    assert.match(text, /STRIPE_SECRET_KEY/);
    assert.match(text, /api\.stripe\.com/);
    assert.match(text, /ask the user/i);
    assert.ok(!text.includes('4eC39HqLyjWDarjtT1zdp7dcQx91Lm'), 'the secret is echoed');
    // Issue 21: the agent is told to ask once, and that this server's proxy is off (PROXY_ENABLED=false).
    const advice = (res.content as TextContent)[0]!.text;
    assert.equal(advice.match(/\bask the (user|site owner)\b/gi)?.length, 1, advice);
    assert.match(advice, /site proxy is switched off on this server/);
    assert.match(advice, /PROXY_ENABLED=true/);
  });

  test('publish_site refuses a folder holding a Slipway DATA_DIR (secrets.key, slipway.db)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'slipway-mcp-data-'));
    try {
      await mkdir(join(dir, 'data'));
      await writeFile(join(dir, 'index.html'), '<h1>checkout</h1>');
      await writeFile(join(dir, 'data', 'secrets.key'), 'a-key');
      await writeFile(join(dir, 'data', 'slipway.db'), 'SQLite format 3');
      const res = await client.callTool({ name: 'publish_site', arguments: { directory: dir } });
      assert.equal(res.isError, true, JSON.stringify(res.content));
      assert.match((res.content as TextContent)[0]!.text, /Slipway service's data \(data\/secrets\.key/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a server refusal is a tool error with the code, not a crash', async () => {
    const res = await client.callTool({ name: 'get_site', arguments: { slug: 'no-such-site-zz' } });
    assert.equal(res.isError, true);
    assert.match((res.content as TextContent)[0]!.text, /^error NOT_FOUND:/);
    // The server is still there.
    assert.equal((await client.listTools()).tools.length, TOOLS.length);
  });
});
