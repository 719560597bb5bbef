// Two service processes on different ports sharing PostgreSQL, S3 (s3rver) and Redis: changes made on
// one node are served by the other at once, limits are shared, and only one node sweeps.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from '../helpers/app.js';
import { type Cluster, publishOn, type ServiceNode, signInOn, startCluster } from '../helpers/cluster.js';
import { startDnsPeer } from '../helpers/dns.js';
import { sha256 } from '../helpers/publish.js';

describe('two nodes sharing PostgreSQL, S3 and Redis', { timeout: 120_000 }, () => {
  let cluster: Cluster;

  before(async () => {
    cluster = await startCluster({
      env: {
        RATE_LIMIT_ANONYMOUS: '10',
        TRUST_PROXY: 'true',
        RATE_LIMIT_FREE: '100000',
        LOG_LEVEL: 'debug',
        SWEEP_INTERVAL_S: '1',
      },
    });
  });

  after(() => cluster?.dispose());

  test('publish on A is served by B at once; delete on A stops B; rate limit shared; one sweeper', async () => {
    // Start the two nodes together: migrations must not race.
    const [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
    const key = await signInOn(a, 'two-node@example.com');
    const publishVersion = async (html: string, slug?: string) => ({
      slug: await publishOn(a, key, { 'index.html': html }, slug),
    });
    const fetchFromB = (slug: string) =>
      rawRequest(b.port, { host: `${slug}.localhost:${b.port}`, path: '/' });

    const { slug } = await publishVersion('<h1>version one</h1>');
    const first = await fetchFromB(slug);
    assert.equal(first.status, 200);
    assert.equal(first.body.toString(), '<h1>version one</h1>');

    // B has version one cached; an update finalized on A is what B serves on the very next request.
    await publishVersion('<h1>version two</h1>', slug);
    const second = await fetchFromB(slug);
    assert.equal(
      second.body.toString(),
      '<h1>version two</h1>',
      'B never serves the old version after finalize',
    );
    assert.equal(second.headers.etag, `"${sha256('<h1>version two</h1>')}"`);

    // Delete on A: B stops serving within a second.
    const del = await fetch(`${a.url}/api/v1/publish/${slug}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(del.status, 200);
    const deadline = Date.now() + 1000;
    let status = 200;
    while (Date.now() < deadline && status !== 404) status = (await fetchFromB(slug)).status;
    assert.equal(status, 404, 'B stops serving a deleted site within 1 s');

    // A shared anonymous limit of 10 across both nodes admits exactly 10 of 40 concurrent requests
    // (from one fresh client address, so the sign-in calls above do not count).
    const client = { 'x-forwarded-for': '198.51.100.7' };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/api/v1/nothing-here`, { headers: client }).then((r) => r.status),
      ),
    );
    assert.equal(answers.filter((s) => s === 404).length, 10);
    assert.equal(answers.filter((s) => s === 429).length, 30);

    // Only one node sweeps (SWEEP_INTERVAL_S=1): watch both logs for a few intervals.
    const sweepsOf = (n: ServiceNode) =>
      n.output.join('').split('sweeping (holder of the sweeper lease)').length - 1;
    const before = [sweepsOf(a), sweepsOf(b)];
    await new Promise((r) => setTimeout(r, 3500));
    const during = [sweepsOf(a) - before[0]!, sweepsOf(b) - before[1]!];
    assert.equal(during.filter((n) => n > 0).length, 1, `exactly one node swept: ${during}`);
    assert.ok(Math.max(...during) >= 2, `the holder swept on every interval: ${during}`);

    // The holder stops; the other node takes over (lease released on shutdown).
    const [holder, other] = during[0]! > 0 ? [a, b] : [b, a];
    await cluster.stopNode(holder);
    const otherBefore = sweepsOf(other);
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(sweepsOf(other) > otherBefore, 'the remaining node took over the sweeper');
  });

  test('a Hobby upgrade paid on A is the plan on B at once', async () => {
    const [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
    const key = await signInOn(a, 'two-node-hobby@example.com');
    const auth = { authorization: `Bearer ${key}` };
    const checkout = await fetch(`${a.url}/api/billing/checkout`, { method: 'POST', headers: auth });
    assert.equal(checkout.status, 200);
    const { checkoutUrl } = (await checkout.json()) as { checkoutUrl: string };
    const paid = await fetch(checkoutUrl.replace(/^http:\/\/localhost:\d+/, a.url), { method: 'POST' });
    assert.equal(paid.status, 200);
    const onB = await fetch(`${b.url}/api/v1/account`, { headers: auth });
    assert.equal(((await onB.json()) as { plan: string }).plan, 'hobby');
    assert.equal(onB.headers.get('x-ratelimit-limit'), '200');
  });

  test('a custom domain verified and linked on A is served by B at once; deleted on A, B stops', async () => {
    const dns = await startDnsPeer({});
    try {
      const extra = { DNS_SERVERS: dns.server, CNAME_TARGET: 'sites.two-node-target.example' };
      const [a, b] = await Promise.all([cluster.startNode(extra), cluster.startNode(extra)]);
      const key = await signInOn(a, 'two-node-domain@example.com');
      const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const slug = await publishOn(a, key, { 'index.html': '<h1>on a domain</h1>' });
      const domain = 'www.two-node.example.com';
      const fromB = () => rawRequest(b.port, { host: domain, path: '/' });
      assert.equal((await fromB()).status, 404, 'B has the domain cached as unknown now');

      const added = await fetch(`${a.url}/api/v1/domains`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ domain }),
      });
      const body = (await added.json()) as { dns: { records: Array<{ value: string }> } };
      dns.records[`_service.${domain}`] = { TXT: [body.dns.records[1]!.value] };
      dns.records[domain] = { CNAME: 'sites.two-node-target.example' };
      const verified = await fetch(`${a.url}/api/v1/domains/${domain}/verify`, {
        method: 'POST',
        headers: auth,
      });
      assert.equal(((await verified.json()) as { verified: boolean }).verified, true);
      const linked = await fetch(`${a.url}/api/v1/links`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ slug, domain }),
      });
      assert.equal(linked.status, 201);

      // Change events reach B within a second (the goal is the very next request).
      const deadline = Date.now() + 1000;
      let page = await fromB();
      while (Date.now() < deadline && page.status !== 200) page = await fromB();
      assert.equal(page.status, 200);
      assert.equal(page.body.toString(), '<h1>on a domain</h1>');

      await fetch(`${a.url}/api/v1/domains/${domain}`, { method: 'DELETE', headers: auth });
      const until = Date.now() + 1000;
      let after = await fromB();
      while (Date.now() < until && after.status !== 404) after = await fromB();
      assert.equal(after.status, 404, 'B stops serving a deleted domain within 1 s');
    } finally {
      await dns.close();
    }
  });
});
