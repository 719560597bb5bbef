// Visitor analytics across two service processes (issue 25) on the scale-out set: each node counts what
// it answers and flushes on its own; the counts add up exactly, and the visitors seen by both nodes are
// counted once (the day's salt is shared through the database). A node killed with SIGKILL loses at most
// what it counted since its last flush, never more, and its restart counts nothing twice.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from '../helpers/app.js';
import { type Cluster, publishOn, signInOn, startCluster } from '../helpers/cluster.js';

const UA = (n: number) => `Mozilla/5.0 (X11; Linux x86_64) Firefox/12${n}.0`;
const FLUSH_S = 1;

describe('analytics on two nodes', { timeout: 120_000 }, () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await startCluster({ env: { ANALYTICS_FLUSH_S: String(FLUSH_S), TRUST_PROXY: 'true' } });
  });
  after(() => cluster?.dispose());

  test('exact page views and merged visitors over two nodes; SIGKILL loses at most one interval', async () => {
    const [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
    const key = await signInOn(a, 'two-node-stats@example.com');
    const slug = await publishOn(a, key, { 'index.html': '<h1>hi</h1>', 'app.js': '1' });
    const visit = (port: number, v: number, path = '/') =>
      rawRequest(port, {
        host: `${slug}.localhost:${port}`,
        path,
        // Visitor v comes from its own address (TRUST_PROXY=true: the test stands in for a proxy).
        headers: { 'user-agent': UA(v % 3), 'x-forwarded-for': `198.51.100.${v}` },
      });
    // 20 visitors: 0-9 on A, 10-19 on B, and 0-4 on B too (the same people: not new visitors).
    for (let v = 0; v < 10; v++) await visit(a.port, v);
    for (let v = 10; v < 20; v++) await visit(b.port, v);
    for (let v = 0; v < 5; v++) await visit(b.port, v);
    for (let v = 0; v < 7; v++) await visit(a.port, v, '/app.js');
    const report = async () => {
      const res = await fetch(`${a.url}/api/v1/publish/${slug}/analytics`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.status, 200);
      return (await res.json()) as { totals: { pageViews: number; visitors: number } };
    };
    /** The report once its page views reach `n` (flushes are due every FLUSH_S; a loaded machine is slower). */
    const reach = async (n: number) => {
      const until = Date.now() + 15_000;
      let r = await report();
      while (r.totals.pageViews < n && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 250));
        r = await report();
      }
      await new Promise((res) => setTimeout(res, (FLUSH_S + 0.5) * 1000)); // one more interval: nothing doubles
      return report();
    };
    const first = await reach(25);
    assert.equal(first.totals.pageViews, 25);
    // 20 visitors in 1024 registers: each pair sharing one (random: the day's salt is) counts one less; 190
    // pairs share a register with 17 % chance, four or more with 0.005 %. Never more than 20: the same
    // people on the other node are not new visitors.
    assert.ok(
      first.totals.visitors >= 17 && first.totals.visitors <= 20,
      `visitors ${first.totals.visitors}`,
    );

    // B answers 30 more and is killed at once: what it had not flushed is lost, nothing else.
    for (let v = 0; v < 30; v++) await visit(b.port, 100 + v);
    await cluster.stopNode(b, 'SIGKILL');
    await new Promise((r) => setTimeout(r, (FLUSH_S + 1) * 1000));
    const killed = await report();
    assert.ok(killed.totals.pageViews >= 25, `${killed.totals.pageViews}`);
    assert.ok(killed.totals.pageViews <= 55, `never more than were answered: ${killed.totals.pageViews}`);

    // A restarted B counts from zero: the counts already stored are not written again.
    const b2 = await cluster.startNode();
    await visit(b2.port, 200);
    const after2 = await reach(killed.totals.pageViews + 1);
    assert.equal(after2.totals.pageViews, killed.totals.pageViews + 1);

    // A graceful stop flushes: A's last views arrive without waiting for its timer.
    for (let v = 0; v < 3; v++) await visit(a.port, 300 + v);
    await cluster.stopNode(a, 'SIGTERM');
    const res = await fetch(`${b2.url}/api/v1/publish/${slug}/analytics`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const last = (await res.json()) as { totals: { pageViews: number } };
    assert.equal(last.totals.pageViews, after2.totals.pageViews + 3);
  });
});
