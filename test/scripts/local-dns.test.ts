// scripts/local-dns.mjs (docs/custom-domains.md): the records given on its command line answered over
// UDP, bad arguments refused, and the local custom-domain walkthrough of the doc end to end: the service
// started with DNS_SERVERS pointing at it, a domain added, its two records served, verify -> active, a
// link, and the site served for `Host: www.example.test`.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { hostRequest } from '../serve/site-client.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/local-dns.mjs', import.meta.url));
const running: ChildProcess[] = [];

/** Starts the script; resolves with its `ip:port` once it says it listens. */
async function startLocalDns(args: string[]): Promise<string> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const m = /DNS_SERVERS=(\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr!.on('data', (chunk) => {
      out += String(chunk);
    });
    child.on('exit', (code) => reject(new Error(`local-dns exited ${code}: ${out}`)));
  });
}

after(() => {
  for (const child of running) child.kill('SIGTERM');
});

describe('scripts/local-dns.mjs', () => {
  test('answers CNAME, TXT, A (also through a local CNAME) and AAAA, localhost as loopback; an unknown name is NXDOMAIN with --no-forward', async () => {
    const server = await startLocalDns([
      '--port',
      '0',
      '--no-forward',
      'www.example.test',
      'CNAME',
      'app.example.test',
      'APP.example.test.',
      'A',
      '127.0.0.1',
      '_service.www.example.test',
      'TXT',
      'service-verify=abc',
      'v6.example.test',
      'AAAA',
      '::1',
    ]);
    const r = new Resolver({ timeout: 2000, tries: 1 });
    r.setServers([server]);
    assert.deepEqual(await r.resolveCname('WWW.example.test'), ['app.example.test']);
    assert.deepEqual(await r.resolveTxt('_service.www.example.test'), [['service-verify=abc']]);
    assert.deepEqual(await r.resolve4('app.example.test'), ['127.0.0.1']);
    assert.deepEqual(await r.resolve4('www.example.test'), ['127.0.0.1'], 'through the CNAME');
    assert.deepEqual(await r.resolve6('v6.example.test'), ['::1']);
    await assert.rejects(r.resolve4('unknown.example.test'), { code: 'ENOTFOUND' });
    // localhost is the loopback (RFC 6761): an apex is checked against CNAME_TARGET's addresses.
    assert.deepEqual(await r.resolve4('localhost'), ['127.0.0.1']);
    assert.deepEqual(await r.resolve6('localhost'), ['::1']);
  });

  test('bad arguments: exit 2 with the usage', () => {
    for (const args of [
      [],
      ['www.example.test', 'CNAME'],
      ['a.test', 'MX', 'x'],
      ['a.test', 'A', 'not-an-ip'],
    ]) {
      const run = spawnSync(process.execPath, [SCRIPT, '--port', '0', ...args], { encoding: 'utf8' });
      assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /usage: node scripts\/local-dns\.mjs/);
    }
  });
});

describe('the local custom-domain walkthrough (docs/custom-domains.md)', () => {
  let t: TestApp | undefined;
  after(() => t?.close());

  test('DNS_SERVERS at the script: add www.example.test, serve its records, verify -> active, link, curl -H Host', async () => {
    const port = await freePort();
    t = await startTestApp({ DNS_SERVERS: `127.0.0.1:${port}` });
    const key = await signIn(t, 'local-domain@example.com');
    const site = assertPublished(await publish(t, { 'index.html': '<h1>on my own domain</h1>' }, { key }));
    const added = await t.api('/api/v1/domains', {
      method: 'POST',
      key,
      body: { domain: 'www.example.test' },
    });
    assert.equal(added.status, 201, added.text);
    const records = added.body.dns.records as Array<{ type: string; name: string; value: string }>;
    assert.deepEqual(
      records.map((r) => [r.type, r.name]),
      [
        ['CNAME', 'www.example.test'],
        ['TXT', '_service.www.example.test'],
      ],
    );
    // Before the records exist, verify says what is missing.
    await startLocalDns(['--port', String(port), '--no-forward', 'other.test', 'A', '127.0.0.1']).then(
      async () => {
        const early = await t!.api('/api/v1/domains/www.example.test/verify', { method: 'POST', key });
        assert.equal(early.body.verified, false, early.text);
        running.pop()!.kill('SIGTERM');
      },
    );
    await new Promise((r) => setTimeout(r, 200));
    await startLocalDns(['--port', String(port), ...records.flatMap((r) => [r.name, r.type, r.value])]);
    const verified = await t.api('/api/v1/domains/www.example.test/verify', { method: 'POST', key });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.verified, true, verified.text);
    const link = await t.api('/api/v1/links', {
      method: 'POST',
      key,
      body: { slug: site.slug, domain: 'www.example.test' },
    });
    assert.equal(link.status, 201, link.text);
    const page = await hostRequest(t, 'www.example.test', '/');
    assert.equal(page.status, 200);
    assert.equal(page.text, '<h1>on my own domain</h1>');
  });
});
