// `slipway stats <slug>` and the MCP tool `get_site_analytics` (issue 25), as subprocesses against the real
// app: the counts the site server made, as a table and as the endpoint's JSON; another account's site is
// not found.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';

describe('slipway stats and get_site_analytics', () => {
  let t: TestApp;
  let owner: CliEnv;
  let other: CliEnv;
  let dir: string;
  let slug: string;
  let key: string;

  before(async () => {
    t = await startTestApp({ ANALYTICS_FLUSH_S: '3600' });
    key = await signIn(t, 'cli-stats@example.com');
    owner = await cliEnv(t.url, { SLIPWAY_API_KEY: key });
    other = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'cli-stats-other@example.com') });
    dir = await mkdtemp(join(tmpdir(), 'slipway-stats-'));
    await writeFile(join(dir, 'index.html'), '<h1>v1</h1>');
    await writeFile(join(dir, 'about.html'), '<h1>about</h1>');
    const published = await owner.run(['publish', dir, '--json']);
    slug = published.json.slug;
    const host = `${slug}.${t.ctx.config.siteHost}`;
    for (const path of ['/', '/', '/about.html', '/nope'])
      await rawRequest(t.port, {
        host,
        path,
        headers: { 'user-agent': BROWSER, referer: 'https://search.example/' },
      });
    await t.service.analytics!.flush();
  });
  after(async () => {
    await t.close();
    await owner.dispose();
    await other.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  test('stats --json is the endpoint answer; the table shows totals, days, pages, referrers and 404s', async () => {
    const json = await owner.run(['stats', slug, '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.json.totals.pageViews, 3);
    assert.equal(json.json.totals.visitors, 1);
    assert.equal(json.json.granularity, 'day');
    assert.equal(json.json.series.length, 8);

    const human = await owner.run(['stats', slug]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, new RegExp(`^${slug}: 3 page views, 1 visitors, 1 not found`));
    assert.match(human.stdout, /DAY \(UTC\)\s+PAGE VIEWS\s+VISITORS/);
    assert.match(human.stdout, /\n\/\s+2\n/);
    assert.match(human.stdout, /search\.example\s+3/);
    assert.match(human.stdout, /\/nope\s+1/);

    const hourly = await owner.run(['stats', slug, '--hours', '3', '--json']);
    assert.equal(hourly.json.granularity, 'hour');
    assert.equal(hourly.json.totals.pageViews, 3);

    const refused = await other.run(['stats', slug, '--json']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.json.code, 'NOT_FOUND');
  });

  test('the MCP tool get_site_analytics answers the same counts', async () => {
    const home = await mkdtemp(join(tmpdir(), 'slipway-stats-mcp-'));
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
    const client = new Client({ name: 'slipway-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'get_site_analytics', arguments: { slug } });
      const text = (res.content as Array<{ type: string; text: string }>)[0]!.text;
      const body = JSON.parse(text);
      assert.equal(body.totals.pageViews, 3);
      assert.deepEqual(body.topPaths, [
        { path: '/', pageViews: 2 },
        { path: '/about.html', pageViews: 1 },
      ]);
    } finally {
      await client.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
