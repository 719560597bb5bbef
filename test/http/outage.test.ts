// A backing service going away under traffic (issue 9 part 0): service processes reach PostgreSQL, Redis
// and S3 through TCP relays; each is cut for 5 s (every connection reset, new ones refused), on one node
// and on two. The nodes must stay up; sites already in memory keep answering 200; a site that needs the
// missing service answers 503 (never 404); the API answers 503 with the spec's body within seconds;
// nothing floods the log; after the service returns everything recovers by itself, a publish whose upload
// failed during the outage completes on retry, and no acknowledged change is lost.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from '../helpers/app.js';
import {
  type Cluster,
  createVersion,
  finalizeOn,
  publishOn,
  type ServiceNode,
  signInOn,
  startCluster,
  uploadFile,
} from '../helpers/cluster.js';

const OUTAGE_MS = 5_000;
/** An API answer during the outage must come within this (connect timeouts are set well below it). */
const MAX_ANSWER_MS = 6_000;
/** After the service returns, every node's API must answer 2xx within this. */
const MAX_RECOVERY_MS = 10_000;
/** Warnings and errors a node may log over one outage (throttled: one line per interval and source). */
const MAX_WARN_LINES = 25;

type Backend = 'postgres' | 'redis' | 's3';

/** What each cut must look like from outside. */
const EXPECT: Record<
  Backend,
  { coldSite: number; api: number; ready: number; upload: number; finalize: number }
> = {
  // Site records and the API need the database; a site never loaded cannot be found.
  postgres: { coldSite: 503, api: 503, ready: 503, upload: 503, finalize: 503 },
  // Sites and uploads do not need Redis; the API's shared rate limiter fails closed.
  redis: { coldSite: 200, api: 503, ready: 200, upload: 200, finalize: 503 },
  // Bytes not in memory are in S3; the account endpoint and finalize need only the database.
  s3: { coldSite: 503, api: 200, ready: 503, upload: 503, finalize: 200 },
};

const count = (xs: number[]) =>
  xs.reduce<Record<string, number>>((acc, s) => {
    acc[s] = (acc[s] ?? 0) + 1;
    return acc;
  }, {});

const siteGet = (node: ServiceNode, slug: string) =>
  rawRequest(node.port, { host: `${slug}.localhost:${node.port}`, path: '/' });

/** Log lines at warn (40) or above that a node wrote since `from` (an index into its output chunks). */
function warnLines(node: ServiceNode, from: number): string[] {
  return node.output
    .slice(from)
    .join('')
    .split('\n')
    .filter((l) => /"level":(4|5|6)0/.test(l));
}

for (const nodeCount of [1, 2]) {
  describe(`outage of a backing service, ${nodeCount} node${nodeCount > 1 ? 's' : ''}`, {
    timeout: 300_000,
  }, () => {
    let cluster: Cluster;
    let nodes: ServiceNode[];
    let key: string;
    let warmSlug: string;
    const acknowledged: Array<{ slug: string; body: string }> = [];

    before(async () => {
      cluster = await startCluster({ relays: true, env: { LOG_LEVEL: 'info', RATE_LIMIT_FREE: '1000000' } });
      nodes = await Promise.all(Array.from({ length: nodeCount }, () => cluster.startNode()));
      key = await signInOn(nodes[0]!, `outage-${nodeCount}@example.com`);
      warmSlug = await publishOn(nodes[0]!, key, { 'index.html': '<h1>warm</h1>' });
      acknowledged.push({ slug: warmSlug, body: '<h1>warm</h1>' });
    });
    after(() => cluster?.dispose());

    for (const backend of ['postgres', 'redis', 's3'] as const) {
      test(`${backend} cut for ${OUTAGE_MS / 1000} s: nodes stay up, serve from memory, answer 503, recover`, async (t) => {
        const relay = cluster.relays![backend];
        const expected = EXPECT[backend];
        // Warm: every node has the warm site in memory. Cold: published, never requested anywhere.
        for (const node of nodes) assert.equal((await siteGet(node, warmSlug)).status, 200);
        const coldBody = `<h1>cold ${backend}</h1>`;
        const coldSlug = await publishOn(nodes[0]!, key, { 'index.html': coldBody });
        acknowledged.push({ slug: coldSlug, body: coldBody });
        // Two publishes under way: one created before the cut and uploaded during it, one uploaded before
        // the cut and finalized during it; each failed step is retried after.
        const pendingBody = `<h1>published across a ${backend} outage</h1>`;
        const pending = await createVersion(nodes[0]!, key, { 'index.html': pendingBody });
        const finalizingBody = `<h1>finalized across a ${backend} outage</h1>`;
        const finalizing = await createVersion(nodes[0]!, key, { 'index.html': finalizingBody });
        assert.equal(await uploadFile(finalizing, 'index.html', finalizingBody), 200);
        const logMarks = nodes.map((n) => n.output.length);

        await relay.cut();
        const cutAt = Date.now();
        const site: number[] = [];
        const cold: number[] = [];
        const api: number[] = [];
        let slowestApiMs = 0;
        const badBodies: string[] = [];
        let i = 0;
        while (Date.now() - cutAt < OUTAGE_MS) {
          const node = nodes[i++ % nodes.length]!;
          site.push((await siteGet(node, warmSlug)).status);
          const c = await siteGet(node, coldSlug);
          cold.push(c.status);
          const started = Date.now();
          const res = await fetch(`${node.url}/api/v1/account`, {
            headers: { authorization: `Bearer ${key}` },
          });
          slowestApiMs = Math.max(slowestApiMs, Date.now() - started);
          api.push(res.status);
          if (res.status !== 200) {
            const body = (await res.json()) as { error?: unknown; code?: unknown; status?: unknown };
            if (
              typeof body.error !== 'string' ||
              body.code !== 'SERVICE_UNAVAILABLE' ||
              body.status !== res.status
            )
              badBodies.push(JSON.stringify(body));
            if (!res.headers.get('retry-after')) badBodies.push('no Retry-After');
          } else await res.arrayBuffer();
        }
        const readiness = await Promise.all(nodes.map((n) => fetch(`${n.url}/readyz`).then((r) => r.status)));
        const uploadDuring = await uploadFile(pending, 'index.html', pendingBody);
        const finalizeDuring = await finalizeOn(nodes[0]!, key, finalizing);
        const alive = nodes.map((n) => n.child.exitCode === null && n.child.signalCode === null);

        await relay.restore();
        const restoredAt = Date.now();
        const recovered = await Promise.all(
          nodes.map(async (n) => {
            while (Date.now() - restoredAt < 30_000) {
              const res = await fetch(`${n.url}/api/v1/account`, {
                headers: { authorization: `Bearer ${key}` },
              });
              await res.arrayBuffer();
              if (res.status === 200) return Date.now() - restoredAt;
              await new Promise((r) => setTimeout(r, 50));
            }
            return Number.POSITIVE_INFINITY;
          }),
        );
        const warnings = nodes.map((n, k) => warnLines(n, logMarks[k]!));

        t.diagnostic(
          `${backend} x${nodeCount}: ${site.length} warm-site requests ${JSON.stringify(count(site))}, ` +
            `cold site ${JSON.stringify(count(cold))}, API ${JSON.stringify(count(api))} ` +
            `(slowest ${slowestApiMs} ms), /readyz ${readiness}, upload ${uploadDuring}, finalize ${finalizeDuring}, ` +
            `recovered in ${recovered.map((ms) => (ms / 1000).toFixed(2)).join(' / ')} s, ` +
            `warn+error lines ${warnings.map((w) => w.length)}`,
        );

        assert.deepEqual(
          alive,
          nodes.map(() => true),
          'every node survived the outage',
        );
        assert.ok(site.length >= 5 * nodeCount, 'traffic ran through the outage');
        assert.deepEqual(count(site), { 200: site.length }, 'sites in memory answer 200 throughout');
        assert.deepEqual(count(cold), { [expected.coldSite]: cold.length }, 'a site not in memory');
        assert.deepEqual(count(api), { [expected.api]: api.length }, 'API answers');
        assert.deepEqual(badBodies, [], 'every 503 carries the spec body and Retry-After');
        assert.ok(
          slowestApiMs < MAX_ANSWER_MS,
          `API answered within ${MAX_ANSWER_MS} ms (slowest ${slowestApiMs})`,
        );
        assert.deepEqual(
          readiness,
          nodes.map(() => expected.ready),
          '/readyz',
        );
        assert.equal(uploadDuring, expected.upload, 'an upload during the outage');
        assert.equal(finalizeDuring, expected.finalize, 'a finalize during the outage');
        for (const w of warnings)
          assert.ok(w.length <= MAX_WARN_LINES, `log flood: ${w.length} lines\n${w.slice(0, 5).join('\n')}`);
        assert.ok(Math.max(...recovered) < MAX_RECOVERY_MS, `recovered by itself: ${recovered} ms`);

        // Each publish completes when the client retries the step that failed (retrying a step that
        // succeeded is harmless: the same bytes again, or the live version finalized again).
        assert.equal(await uploadFile(pending, 'index.html', pendingBody), 200);
        assert.equal(await finalizeOn(nodes[0]!, key, pending), 200);
        assert.equal(await finalizeOn(nodes[0]!, key, finalizing), 200);
        acknowledged.push(
          { slug: pending.slug, body: pendingBody },
          { slug: finalizing.slug, body: finalizingBody },
        );

        // Nothing acknowledged is lost, and every node serves it (cold sites load now that it is back).
        for (const node of nodes) {
          for (const { slug, body } of acknowledged) {
            const res = await siteGet(node, slug);
            assert.equal(res.status, 200, `${slug} on ${node.url}`);
            assert.equal(res.body.toString(), body);
          }
        }
        const list = await fetch(`${nodes[0]!.url}/api/v1/publishes`, {
          headers: { authorization: `Bearer ${key}` },
        });
        assert.equal(((await list.json()) as { total: number }).total, acknowledged.length);
      });
    }
  });
}
