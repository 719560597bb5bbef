// Webhooks under attack (review of issue 24): a site owner aiming deliveries at internal addresses (URL
// forms, DNS answers in every IPv6 and IPv4 disguise, redirects), a receiver that answers slowly or with
// a huge body, and an account whose hanging endpoints would hold the sender for everyone else.
// Same set-up as webhooks.test.ts: a real HTTPS receiver on 127.0.0.2 (the one address the app lets
// through, by compose option) that also listens on 127.0.0.1, where nothing may ever arrive.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MAX_WEBHOOK_URL_CHARS } from '../../src/core/webhooks.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, publish, update } from '../helpers/publish.js';
import { makeCertificate } from '../helpers/upstream.js';

const RECEIVER = 'hooks.attack.test';
const DISGUISES: Record<string, { A?: string[]; AAAA?: string[] }> = {
  'v6-loopback.attack.test': { AAAA: ['::1'] },
  'v6-mapped.attack.test': { AAAA: ['::ffff:127.0.0.1'] },
  'v6-nat64.attack.test': { AAAA: ['64:ff9b::7f00:1'] },
  'v6-nat64-metadata.attack.test': { AAAA: ['64:ff9b::a9fe:a9fe'] },
  'v6-linklocal.attack.test': { AAAA: ['fe80::1'] },
  'v6-ula.attack.test': { AAAA: ['fd00::1'] },
  'zero.attack.test': { A: ['0.0.0.0'] },
  'cgnat.attack.test': { A: ['100.64.0.1'] },
  // One allowed answer and one loopback answer: the whole name is refused, not the allowed half used.
  'mixed.attack.test': { A: ['127.0.0.2', '127.0.0.1'] },
};
const NAMES = [RECEIVER, ...Object.keys(DISGUISES)];
const SENDER = { pollMs: 40, timeoutMs: 1500, backoffBaseMs: 60_000, backoffMaxMs: 60_000 };

interface Received {
  path: string;
  local: string;
  id: string;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 8000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('webhooks under attack', { timeout: 120_000 }, () => {
  let dns: DnsPeer;
  let t: TestApp;
  let sender: ReturnType<TestApp['service']['startWebhooks']>;
  let servers: Server[];
  let port: number;
  const received: Received[] = [];
  let handle: (r: Received, req: IncomingMessage, res: ServerResponse) => void = (_r, _q, res) =>
    res.writeHead(200).end('ok');

  before(async () => {
    dns = await startDnsPeer({ [RECEIVER]: { A: ['127.0.0.2'] }, ...DISGUISES });
    const { key, cert } = makeCertificate(NAMES);
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        const r = {
          path: req.url ?? '',
          local: req.socket.localAddress ?? '',
          id: String(req.headers['webhook-id']),
        };
        received.push(r);
        handle(r, req, res);
      });
    };
    servers = [createServer({ key, cert }, onRequest), createServer({ key, cert }, onRequest)];
    await new Promise<void>((r) => servers[0]!.listen(0, '127.0.0.2', r));
    port = (servers[0]!.address() as AddressInfo).port;
    await new Promise<void>((r) => servers[1]!.listen(port, '127.0.0.1', r));
    t = await startTestApp(
      { DNS_SERVERS: dns.server },
      { webhooks: { ca: cert, allowAddresses: ['127.0.0.2'], sender: SENDER } },
    );
    sender = t.service.startWebhooks();
  });
  after(async () => {
    await sender?.stop();
    await t?.close();
    for (const s of servers ?? []) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
    await dns?.close();
  });

  const url = (path: string, host = RECEIVER) => `https://${host}:${port}${path}`;
  /** Every secret handed out, with the key and endpoint it belongs to. */
  const secrets: Array<{ key: string; id: string; secret: string }> = [];
  const create = async (k: string, body: unknown) => {
    const res = await t.api('/api/v1/webhooks', { method: 'POST', key: k, body });
    if (res.status === 201) secrets.push({ key: k, id: res.body.id, secret: res.body.secret });
    return res;
  };
  const deliveries = async (k: string, id: string) =>
    (await t.api(`/api/v1/webhooks/${id}/deliveries`, { key: k })).body.deliveries as Array<
      Record<string, unknown>
    >;
  const firstAttempt = (k: string, id: string, ms = 8000) =>
    waitFor(
      'an attempt',
      async () => {
        const [d] = await deliveries(k, id);
        return d && (d.attempts as number) >= 1 ? d : undefined;
      },
      ms,
    );

  test('URL forms of internal addresses are refused when the endpoint is added', async () => {
    const k = await signIn(t, 'forms@example.com');
    for (const bad of [
      'https://0.0.0.0/x',
      'https://[::]/x',
      'https://2130706433/x',
      'https://0177.0.0.1/x',
      'https://0x7f000001/x',
      'https://127.1/x',
      'https://[0:0:0:0:0:ffff:7f00:1]/x',
      'https://[64:ff9b::a9fe:a9fe]/x',
      'https://[64:ff9b:1::7f00:1]/x',
      'https://[fe80::1]/x',
      'https://[fd00::1]/x',
      'https://100.100.100.200/x',
      'https://metadata.google.internal/x',
      'https://localhost./x',
      'https://a.localhost/x',
      'https://printer.local/x',
      'https://hooks.example.com:0/x',
      'https://hooks.example.com:25/x',
      'https://hooks.example.com/x#',
    ]) {
      const res = await create(k, { url: bad, events: ['site.published'] });
      assert.equal(res.status, 400, `${bad}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_REQUEST');
    }
  });

  test('the URL as stored and shown back is within the length limit, whatever it grew to', async () => {
    const k = await signIn(t, 'length@example.com');
    // 2000 characters as sent, six times as many once percent-encoded.
    const long = `https://hooks.example.com/${'ä'.repeat(2000)}`;
    assert.ok(long.length <= MAX_WEBHOOK_URL_CHARS);
    const res = await create(k, { url: long, events: ['site.published'] });
    if (res.status === 201) {
      assert.ok(
        (res.body.url as string).length <= MAX_WEBHOOK_URL_CHARS,
        `stored ${(res.body.url as string).length} characters`,
      );
    } else assert.equal(res.status, 400, res.text);
  });

  test('names resolving to loopback, NAT64, mapped, link-local, ULA, 0.0.0.0 or CGNAT addresses are refused at delivery', async () => {
    const k = await signIn(t, 'disguise@example.com');
    const ids: Array<[string, string]> = [];
    for (const host of Object.keys(DISGUISES)) {
      const made = await create(k, { url: url(`/disguise/${host}`, host), events: ['site.published'] });
      assert.equal(made.status, 201, made.text);
      ids.push([host, made.body.id]);
    }
    assertPublished(await publish(t, { 'index.html': 'x' }, { key: k }));
    for (const [host, id] of ids) {
      const d = await firstAttempt(k, id);
      assert.equal(d.status, 'pending', host);
      assert.equal(d.lastStatusCode, null, host);
      assert.match(String(d.lastError), /address refused/, host);
    }
    assert.deepEqual(
      received.filter((r) => r.path.startsWith('/disguise/')),
      [],
      'nothing reached the receiver',
    );
  });

  test('a redirect is not followed, even to an allowed address', async () => {
    const k = await signIn(t, 'redirect@example.com');
    handle = (r, _q, res) => {
      if (r.path === '/redirect') res.writeHead(307, { location: url('/redirect-target') }).end();
      else res.writeHead(200).end('ok');
    };
    try {
      const made = await create(k, { url: url('/redirect'), events: ['site.published'] });
      assertPublished(await publish(t, { 'index.html': 'x' }, { key: k }));
      const d = await firstAttempt(k, made.body.id);
      assert.equal(d.lastStatusCode, 307);
      assert.equal(d.status, 'pending');
      assert.match(String(d.lastError), /redirects are not followed/);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(received.filter((r) => r.path === '/redirect-target').length, 0);
    } finally {
      handle = (_r, _q, res) => res.writeHead(200).end('ok');
    }
  });

  test('a huge answer is not read, a trickled one is cut off at the timeout; the sender moves on', async () => {
    const k = await signIn(t, 'body@example.com');
    let hugeWritten = 0;
    const trickles: ServerResponse[] = [];
    handle = (r, _q, res) => {
      if (r.path === '/huge') {
        // 64 MiB as fast as the socket takes it.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        const pump = () => {
          while (hugeWritten < 64 * 1024 * 1024) {
            hugeWritten += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => {});
        pump();
      } else if (r.path === '/trickle') {
        // Headers at once, then a byte every 100 ms for ever.
        res.writeHead(200);
        trickles.push(res);
        const timer = setInterval(() => res.write('.'), 100);
        res.on('close', () => clearInterval(timer));
      } else res.writeHead(200).end('ok');
    };
    try {
      const huge = await create(k, { url: url('/huge'), events: ['site.published'] });
      const trickle = await create(k, { url: url('/trickle'), events: ['site.published'] });
      const started = Date.now();
      assertPublished(await publish(t, { 'index.html': 'x' }, { key: k }));
      const h = await firstAttempt(k, huge.body.id);
      assert.equal(h.status, 'delivered');
      const tr = await firstAttempt(k, trickle.body.id, SENDER.timeoutMs + 4000);
      const took = Date.now() - started;
      assert.ok(took < SENDER.timeoutMs + 2000, `the trickled attempt ended after ${took} ms`);
      // The trickling connection was closed by the sender.
      await waitFor('the trickle closed', () => trickles.every((res) => res.destroyed || res.writableEnded));
      assert.ok(['delivered', 'pending'].includes(String(tr.status)));
      assert.ok(hugeWritten < 16 * 1024 * 1024, `${hugeWritten} bytes were pushed at the sender`);
    } finally {
      handle = (_r, _q, res) => res.writeHead(200).end('ok');
      for (const res of trickles) res.destroy();
    }
  });

  test("one account's hanging endpoints cannot hold every sending slot: another account is served at once", async () => {
    const attacker = await signIn(t, 'hog@example.com');
    const victim = await signIn(t, 'victim@example.com');
    const hanging: ServerResponse[] = [];
    handle = (r, _q, res) => {
      if (r.path.startsWith('/hog/')) hanging.push(res);
      else res.writeHead(200).end('ok');
    };
    try {
      // 5 endpoints x 2 attempts each would fill the 8 slots of the sender.
      for (let i = 0; i < 5; i++)
        assert.equal(
          (await create(attacker, { url: url(`/hog/${i}`), events: ['site.published'] })).status,
          201,
        );
      const { slug } = assertPublished(await publish(t, { 'index.html': '1' }, { key: attacker }));
      for (let i = 2; i <= 3; i++)
        assertPublished(await update(t, attacker, slug, { 'index.html': String(i) }));
      await waitFor('the hog holding attempts', () => hanging.length >= 4, 3000);
      await new Promise((r) => setTimeout(r, 200));
      const made = await create(victim, { url: url('/victim'), events: ['site.published'] });
      const started = Date.now();
      assertPublished(await publish(t, { 'index.html': 'v' }, { key: victim }));
      await waitFor('the victim served', () => received.find((r) => r.path === '/victim'), 5000);
      const took = Date.now() - started;
      assert.ok(
        took < SENDER.timeoutMs * 0.6,
        `the other account waited ${took} ms (${hanging.length} attempts hanging)`,
      );
      assert.ok(made.status === 201);
    } finally {
      for (const res of hanging) res.socket?.destroy();
      handle = (_r, _q, res) => res.writeHead(200).end('ok');
    }
  });

  test('at most 20 endpoints even when 30 are added at once', async () => {
    const k = await signIn(t, 'race@example.com');
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(k, { url: url(`/race/${i}`), events: ['site.deleted'] })),
    );
    assert.equal(made.filter((r) => r.status === 201).length, 20);
    assert.equal(made.filter((r) => r.status === 400).length, 10);
    assert.equal((await t.api('/api/v1/webhooks', { key: k })).body.webhooks.length, 20);
  });

  test('after all of the above (refused, redirected, timed out), no secret is in a log line or an answer', async () => {
    assert.ok(secrets.length > 20);
    for (const { key: k, id, secret } of secrets) {
      const raw = secret.slice('whsec_'.length);
      assert.ok(!t.logs.some((l) => l.includes(raw)), `a log line holds the secret of ${id}`);
      const list = await t.api('/api/v1/webhooks', { key: k });
      assert.ok(!list.text.includes(raw));
      const log = await t.api(`/api/v1/webhooks/${id}/deliveries`, { key: k });
      assert.equal(log.status, 200);
      assert.ok(!log.text.includes(raw));
    }
    assert.ok(
      t.logs.some((l) => l.includes('webhook delivery attempt failed')),
      'failures were logged',
    );
  });
});
