// Issue 24's parts on two nodes sharing PostgreSQL, Redis and S3 (the scale-out set only):
// - deploy tokens: one created on node A works on node B; revoked on A, B refuses it on the next request;
// - archive deploys: a tar sent to A is served by B at once, live and at its preview and alias hosts;
// - webhooks: with two senders running, each event is delivered exactly once, and when the node holding
//   the sender stops, the other one delivers the next event.
//
// Tokens and archives run on two spawned service processes (src/server.ts, as in production). Webhooks
// cannot: a spawned node sends only to public addresses, and the one way to let a loopback test receiver
// through its filter is a compose option (ComposeOptions.webhooks.allowAddresses), deliberately not an
// environment variable. Opening the filter by environment for a test would put an SSRF switch into
// production configuration, so the webhook part instead runs two in-process services composed exactly as
// server.ts composes them, on the same cluster's PostgreSQL database, Redis prefix, S3 bucket and
// SECRETS_KEY (the spawned nodes are stopped first, or their senders would take the lease and refuse the
// receiver). Each has its own webhook sender, started as server.ts starts it; they compete for the
// `webhooks` lease in Redis and for claims in PostgreSQL just as two processes would.

import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MovableClock } from '../../src/shared/clock.js';
import { Db } from '../../src/store/db/db.js';
import type { RedisLease } from '../../src/store/lease/redis.js';
import { freePort, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import {
  type Cluster,
  postJson,
  publishOn,
  type ServiceNode,
  signInOn,
  startCluster,
} from '../helpers/cluster.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, manifestOf, publish, update } from '../helpers/publish.js';
import { connectTestRedis } from '../helpers/redis.js';
import { fileEntries, tgz } from '../helpers/tar.js';
import { makeCertificate } from '../helpers/upstream.js';

const RECEIVER = 'hooks.two-node.test';

const hostOn = (node: ServiceNode, sub: string) => `${sub}.localhost:${node.port}`;
const servedBy = async (node: ServiceNode, sub: string, path = '/') => {
  const res = await rawRequest(node.port, { host: hostOn(node, sub), path });
  return { status: res.status, body: res.body.toString() };
};

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 8000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('issue 24 on two nodes (tokens, archives, webhooks)', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let a: ServiceNode;
  let b: ServiceNode;
  let key: string;

  before(async () => {
    cluster = await startCluster({ env: { RATE_LIMIT_FREE: '100000', RATE_LIMIT_ANONYMOUS: '100000' } });
    // Started together: migrations must not race.
    [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
    key = await signInOn(a, 'two-node-ci@example.com');
  });
  after(() => cluster?.dispose());

  test('a deploy token made on A works on B; revoked on A, B refuses it on the very next request', async () => {
    const slug = await publishOn(a, key, { 'index.html': '<h1>one</h1>' });
    const made = await postJson(a, `/api/v1/publish/${slug}/tokens`, { name: 'ci' }, key);
    assert.equal(made.status, 201);
    const { id, token } = (await made.json()) as { id: string; token: string };
    const putOnB = async () => {
      const res = await fetch(`${b.url}/api/v1/publish/${slug}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ files: manifestOf({ 'index.html': '<h1>two</h1>' }) }),
      });
      return { status: res.status, body: (await res.json()) as { code?: string } };
    };
    // Used on B first (so anything B might remember about it is warm), then revoked on A.
    assert.equal((await putOnB()).status, 200);
    assert.equal((await putOnB()).status, 200);
    const revoked = await fetch(`${a.url}/api/v1/publish/${slug}/tokens/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(revoked.status, 200);
    const refused = await putOnB();
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'UNAUTHORIZED');
  });

  test('an archive deploy sent to A is served by B at once, live and at its preview and alias hosts', async () => {
    const slug = await publishOn(a, key, { 'index.html': '<h1>before</h1>' });
    assert.equal((await servedBy(b, slug)).body, '<h1>before</h1>');
    const deploy = async (files: Record<string, string>, query = '') => {
      const res = await fetch(`${a.url}/api/v1/publish/${slug}/archive${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/gzip', authorization: `Bearer ${key}` },
        body: tgz(fileEntries(files)),
      });
      const body = (await res.json()) as { previewUrl?: string; live?: boolean };
      assert.equal(res.status, 200, JSON.stringify(body));
      return body;
    };

    await deploy({ 'index.html': '<h1>archive live</h1>', 'app.js': 'console.log(1)' });
    assert.deepEqual(await servedBy(b, slug), { status: 200, body: '<h1>archive live</h1>' });
    assert.deepEqual(await servedBy(b, slug, '/app.js'), { status: 200, body: 'console.log(1)' });

    const preview = await deploy({ 'index.html': '<h1>archive preview</h1>' }, '?live=false&alias=pr-9');
    assert.equal(preview.live, false);
    const previewLabel = new URL(preview.previewUrl!).hostname.split('.')[0]!;
    assert.match(previewLabel, new RegExp(`^${slug}--[a-z0-9]+$`));
    for (const sub of [previewLabel, `${slug}--pr-9`]) {
      assert.deepEqual(await servedBy(b, sub), { status: 200, body: '<h1>archive preview</h1>' }, sub);
    }
    assert.deepEqual(await servedBy(b, slug), { status: 200, body: '<h1>archive live</h1>' });
  });

  test('webhooks: one delivery per event with two senders; the survivor delivers once the holder stops', async () => {
    // The spawned nodes would hold the `webhooks` lease and refuse the loopback receiver: stop them
    // (SIGTERM: their senders release the lease as in a rolling restart).
    await Promise.all([cluster.stopNode(a), cluster.stopNode(b)]);

    const dns: DnsPeer = await startDnsPeer({ [RECEIVER]: { A: ['127.0.0.2'] } });
    const { key: tlsKey, cert } = makeCertificate([RECEIVER]);
    const received: Array<{ id: string; body: string }> = [];
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ id: String(req.headers['webhook-id']), body: Buffer.concat(chunks).toString() });
        res.writeHead(200).end('ok');
      });
    };
    const server: Server = createServer({ key: tlsKey, cert }, onRequest);
    await new Promise<void>((r) => server.listen(0, '127.0.0.2', r));
    const rxPort = (server.address() as AddressInfo).port;

    // Two services on the cluster's database, Redis prefix, bucket and SECRETS_KEY.
    const shared = async (): Promise<TestApp> =>
      startTestApp(
        { ...cluster.env, DNS_SERVERS: dns.server },
        {
          webhooks: {
            ca: cert,
            allowAddresses: ['127.0.0.2'],
            sender: { pollMs: 50, timeoutMs: 2000, backoffBaseMs: 200, backoffMaxMs: 400 },
          },
          reuse: {
            dataDir: await mkdtemp(join(tmpdir(), 'slipway-two-node-ci-')),
            port: await freePort(),
            // The cluster owns the database and the bucket: closing an app leaves them.
            backend: {
              env: cluster.env,
              db: Db.postgres(cluster.env.DATABASE_URL!),
              dispose: async () => {},
            },
            clock: new MovableClock(),
          },
        },
      );
    const x = await shared();
    const y = await shared();
    // X's sender starts first and takes the lease on its first look; Y's then runs beside it.
    const senderX = x.service.startWebhooks();
    await senderX.poll();
    const senderY = y.service.startWebhooks();
    let stoppedX = false;
    try {
      const owner = await signIn(x, 'two-node-hooks@example.com');
      const made = await x.api('/api/v1/webhooks', {
        method: 'POST',
        key: owner,
        body: { url: `https://${RECEIVER}:${rxPort}/hook`, events: ['site.published'] },
      });
      assert.equal(made.status, 201, made.text);
      const endpoint = made.body.id as string;

      // Three events, made on both services in turn, each with both senders polling every 50 ms.
      const { slug } = assertPublished(await publish(x, { 'index.html': '1' }, { key: owner }));
      assertPublished(await update(y, owner, slug, { 'index.html': '2' }));
      await waitFor('two deliveries', () => received.length >= 2 || undefined);
      assertPublished(await update(x, owner, slug, { 'index.html': '3' }));
      await waitFor('three deliveries', () => received.length >= 3 || undefined);
      // Many more polls of both senders: nothing is sent twice.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(received.length, 3, 'one delivery per event');
      assert.equal(new Set(received.map((r) => r.id)).size, 3);
      const log = await y.api(`/api/v1/webhooks/${endpoint}/deliveries`, { key: owner });
      assert.equal(log.status, 200);
      const rows = log.body.deliveries as Array<{ status: string; attempts: number }>;
      assert.equal(rows.length, 3);
      for (const row of rows) assert.deepEqual([row.status, row.attempts], ['delivered', 1]);

      // X holds the `webhooks` lease (one sender for the cluster) ...
      const holder = async () => {
        const redis = await connectTestRedis();
        try {
          return await redis.get(`${cluster.env.REDIS_PREFIX}lease:webhooks`);
        } finally {
          redis.disconnect();
        }
      };
      const holderOf = (t: TestApp) => (t.service.services.webhookSender.lease as RedisLease).holderId;
      assert.equal(await holder(), holderOf(x));
      // ... and stops as server.ts stops on SIGTERM: its sender first, then the service.
      await senderX.stop();
      await x.close();
      stoppedX = true;
      assertPublished(await update(y, owner, slug, { 'index.html': '4' }));
      const fourth = await waitFor('the survivor delivers', () => received[3], 5000);
      assert.equal(JSON.parse(fourth.body).type, 'site.published');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(received.length, 4);
      assert.equal(await holder(), holderOf(y));
    } finally {
      if (!stoppedX) {
        await senderX.stop();
        await x.close();
      }
      await senderY.stop();
      await y.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await dns.close();
    }
  });
});
