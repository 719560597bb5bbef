// Visitor analytics with WORKERS=2 (issue 25): each worker process counts what it answers and flushes on
// its own into the one database (SQLite on the embedded set); the page views add up exactly and a visitor
// served by both workers is one visitor.

import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { rawRequest, TEST_BACKEND } from '../helpers/app.js';
import {
  type Cluster,
  publishOn,
  type ServiceNode,
  signInOn,
  spawnNode,
  startCluster,
} from '../helpers/cluster.js';

const ENV = { WORKERS: '2', ANALYTICS_FLUSH_S: '1', TRUST_PROXY: 'true', RATE_LIMIT_FREE: '100000' };

describe(`analytics with WORKERS=2 on the ${TEST_BACKEND} set`, { timeout: 120_000 }, () => {
  let cluster: Cluster | undefined;
  let node: ServiceNode;

  before(async () => {
    if (TEST_BACKEND === 'scaleout') {
      cluster = await startCluster({ env: ENV });
      node = await cluster.startNode();
    } else {
      node = await spawnNode(ENV);
    }
  });
  after(async () => {
    if (cluster) await cluster.dispose();
    else if (node) {
      node.child.kill('SIGKILL');
      await rm(node.dataDir, { recursive: true, force: true });
    }
  });

  test('page views add up exactly over the workers; visitors are merged', async () => {
    const key = await signInOn(node, 'workers-stats@example.com');
    const slug = await publishOn(node, key, { 'index.html': '<h1>w</h1>' });
    // 20 visitors, twice each, every request on a connection of its own (node:cluster deals them out).
    for (let round = 0; round < 2; round++) {
      for (let v = 0; v < 20; v++) {
        const res = await rawRequest(node.port, {
          host: `${slug}.localhost:${node.port}`,
          path: '/',
          headers: {
            connection: 'close',
            'user-agent': `Mozilla/5.0 (X11; Linux x86_64) Firefox/12${v % 4}.0`,
            'x-forwarded-for': `203.0.113.${v}`,
          },
        });
        assert.equal(res.status, 200);
      }
    }
    const read = async () => {
      const res = await fetch(`${node.url}/api/v1/publish/${slug}/analytics`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return (await res.json()) as { totals: { pageViews: number; visitors: number } };
    };
    // Within ANALYTICS_FLUSH_S plus a second, give or take a loaded test machine; then one more interval
    // to see that nothing is added twice.
    const until = Date.now() + 15_000;
    while ((await read()).totals.pageViews < 40 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 250));
    await new Promise((r) => setTimeout(r, 1500));
    const body = await read();
    assert.equal(body.totals.pageViews, 40);
    // 20 visitors in 1024 registers: each pair sharing a register counts one less. The day's salt is random,
    // so the pairs are too: 190 pairs share one with 17 % chance, three or more with 0.1 %, four or more with
    // 0.005 % (a first version allowed one: it failed CI with 18). One more is a visitor hashed under a
    // worker's local salt before the day's shared one arrived.
    assert.ok(body.totals.visitors >= 17 && body.totals.visitors <= 21, `visitors ${body.totals.visitors}`);
  });
});
