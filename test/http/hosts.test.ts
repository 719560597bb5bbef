// One answer per host (issue 20, src/core/hosts.ts): the site server, the TLS front end's ask
// (CONTRACT "Custom domains": 200 for an active custom domain or the host of a live site or handle) and
// the proxy's Origin check (CONTRACT "Variables, proxy hosts, proxy": the site's slug host, or a
// handle/domain host linking it) agree on what every host serves, through a plan's pause and back.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { cancelHobby, upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { hostRequest } from '../serve/site-client.js';

const TARGET = 'sites.hosts-target.example';
const DAY_MS = 86_400_000;
const KEPT = 'first.hosts-owner.example.com';
const BEYOND_FREE = 'second.hosts-owner.example.com';

/** What each consumer of the host rule says about one host. */
interface Answers {
  /** Status the site server answers for `/`, and whether it is the "paused" page. */
  site: number | 'paused';
  /** Status of GET /internal/tls-ask?domain=<host>. */
  tls: number;
  /** Whether the proxy takes a call of the `home` site from a page of this host. */
  proxyOrigin: boolean;
}

describe('the site server, the TLS ask and the proxy Origin check give one answer per host', () => {
  let dns: DnsPeer;
  let t: TestApp;
  let key: string;
  let home: string;
  const handle = 'one-answer';

  before(async () => {
    dns = await startDnsPeer({});
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET: TARGET, PROXY_ENABLED: 'true' });
    key = await signIn(t, 'hosts@example.com');
    await upgradeToHobby(t, key);
    assert.equal((await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } })).status, 200);
    home = assertPublished(await publish(t, { 'index.html': '<h1>home</h1>' }, { key })).slug;
    for (const domain of [KEPT, BEYOND_FREE]) {
      const add = await t.api('/api/v1/domains', { method: 'POST', key, body: { domain } });
      assert.equal(add.status, 201, add.text);
      dns.records[`_service.${domain}`] = { TXT: [add.body.dns.records[1].value] };
      dns.records[domain] = { CNAME: TARGET };
      const verified = await t.api(`/api/v1/domains/${domain}/verify`, { method: 'POST', key });
      assert.equal(verified.body.verified, true, verified.body.message);
    }
    for (const domain of [undefined, KEPT, BEYOND_FREE]) {
      const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug: home, domain } });
      assert.equal(link.status, 201, link.text);
    }
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  /** The host's page origin as a browser sends it (CONTRACT: site and handle hosts in BASE_URL's scheme). */
  const originOf = (host: string) =>
    host.endsWith('.localhost') ? `http://${host}:${t.port}` : `https://${host}`;

  async function answers(host: string): Promise<Answers> {
    const page = await hostRequest(t, host.endsWith('.localhost') ? `${host}:${t.port}` : host, '/');
    const ask = await fetch(`${t.url}/internal/tls-ask?domain=${encodeURIComponent(host)}`);
    // The Origin is checked before the body: a bad body (400) means the origin was taken, 403 that it was not.
    const call = await t.api(`/api/v1/proxy/${home}`, {
      method: 'POST',
      headers: { origin: originOf(host) },
      body: { url: 'ftp://not-a-target' },
    });
    assert.ok(call.status === 400 || call.status === 403, call.text);
    return {
      site: /paused/.test(page.text) ? 'paused' : page.status,
      tls: ask.status,
      proxyOrigin: call.status === 400,
    };
  }

  const served: Answers = { site: 200, tls: 200, proxyOrigin: true };
  const paused: Answers = { site: 'paused', tls: 404, proxyOrigin: false };

  test('while the plan includes them, the slug host, the handle and both domains serve the site', async () => {
    for (const host of [`${home}.localhost`, `${handle}.localhost`, KEPT, BEYOND_FREE]) {
      assert.deepEqual(await answers(host), served, host);
    }
    assert.deepEqual(await answers('no-such-label.localhost'), { site: 404, tls: 404, proxyOrigin: false });
  });

  test('a paused handle or domain is paused for all three: no certificate, no proxy calls from its pages', async () => {
    await cancelHobby(t, key);
    t.clock.advance(31 * DAY_MS);
    assert.equal((await t.api('/api/v1/account', { key })).body.plan, 'free');

    assert.deepEqual(await answers(`${handle}.localhost`), paused, 'the handle (Hobby only)');
    assert.deepEqual(await answers(BEYOND_FREE), paused, 'the domain beyond Free’s one');
    assert.deepEqual(await answers(KEPT), served, 'the oldest domain, within Free’s count');
    assert.deepEqual(await answers(`${home}.localhost`), served, 'the slug host');
    const domains = (await t.api('/api/v1/domains', { key })).body.domains;
    assert.equal(
      domains.find((d: { domain: string }) => d.domain === BEYOND_FREE).sslStatus,
      'active',
      'asked for while it served',
    );

    await upgradeToHobby(t, key);
    for (const host of [`${handle}.localhost`, BEYOND_FREE]) {
      assert.deepEqual(await answers(host), served, `${host} after the re-upgrade`);
    }
  });

  test('a deleted site serves nothing anywhere: 404 page, no certificate, no proxy', async () => {
    const gone = assertPublished(await publish(t, { 'index.html': 'bye' }, { key })).slug;
    assert.equal((await hostRequest(t, `${gone}.localhost:${t.port}`, '/')).text, 'bye');
    assert.equal((await t.api(`/api/v1/publish/${gone}`, { method: 'DELETE', key })).status, 200);
    const page = await hostRequest(t, `${gone}.localhost:${t.port}`, '/');
    assert.equal(page.status, 404);
    assert.equal((await fetch(`${t.url}/internal/tls-ask?domain=${gone}.localhost`)).status, 404);
  });
});
