// Handles and links through real HTTP (spec "Handle"; CONTRACT "Hosts", "Links"), serving by handle and
// domain host with the longest-prefix rule, and the plan's effect on them (downgrade, re-upgrade).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { cancelHobby, upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { hostRequest } from '../serve/site-client.js';

const TARGET = 'sites.slipway-target.example';
const DAY_MS = 86_400_000;

function assertError(
  res: { status: number; body: unknown },
  status: number,
  code: string,
  mentions?: RegExp,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  if (mentions) assert.match(body.error, mentions);
}

describe('handles', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const put = (key: string, handle: unknown) =>
    t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } });

  test('PUT /api/v1/handle on the Free plan answers 403 PLAN_LIMIT', async () => {
    const key = await signIn(t, 'free-handle@example.com');
    assertError(await put(key, 'freebie'), 403, 'PLAN_LIMIT');
    assert.deepEqual((await t.api('/api/v1/handle', { key })).body, { handle: null, url: null });
  });

  test('handle rules: length, characters, hyphens, reserved names, taken, slug clash', async () => {
    const key = await signIn(t, 'rules@example.com');
    await upgradeToHobby(t, key);
    const other = await signIn(t, 'other-owner@example.com');
    await upgradeToHobby(t, other);
    assert.equal((await put(other, 'taken-one')).status, 200);
    const site = assertPublished(await publish(t, { 'index.html': 'x' }, { key: other })).slug;

    const cases: Array<[unknown, RegExp]> = [
      ['ab', /3 to 30/],
      ['a'.repeat(31), /3 to 30/],
      ['-abc', /hyphen/],
      ['abc-', /hyphen/],
      ['Abc', /lowercase/],
      ['ab_c', /lowercase/],
      ['ab.c', /lowercase/],
      ['www', /reserved/],
      ['api', /reserved/],
      ['admin', /reserved/],
      ['docs', /reserved/],
      ['dashboard', /reserved/],
      ['localhost', /reserved/], // a label of the BASE_URL host
      ['taken-one', /taken/],
      [site, /taken/], // a live slug
      [42, /required/],
    ];
    for (const [handle, reason] of cases) assertError(await put(key, handle), 400, 'INVALID_REQUEST', reason);
    // Retired slugs stay retired for handles too.
    await t.api(`/api/v1/publish/${site}`, { method: 'DELETE', key: other });
    assertError(await put(key, site), 400, 'INVALID_REQUEST', /taken/);

    const ok = await put(key, 'my-name-3');
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.handle, 'my-name-3');
    assert.equal(ok.body.url, `http://my-name-3.localhost:${t.port}/`);
    assert.equal(typeof ok.body.message, 'string');
    assert.deepEqual((await t.api('/api/v1/handle', { key })).body, {
      handle: 'my-name-3',
      url: ok.body.url,
    });
    assert.equal((await t.api('/api/v1/account', { key })).body.handle, 'my-name-3');
  });

  test('a new handle never begins with xn-- nor holds --; an existing handle with -- keeps working', async () => {
    const key = await signIn(t, 'dashes@example.com');
    await upgradeToHobby(t, key);
    // xn-- is an IDN A-label (RFC 5891 4.2.3.1): `xn--localhost` is no name a person typed.
    for (const handle of ['xn--localhost', 'xn--80ak6aa92e', 'my--name', 'a--b', 'ab---cd']) {
      assertError(await put(key, handle), 400, 'INVALID_REQUEST', /--/);
    }
    assert.equal((await t.api('/api/v1/handle', { key })).body.handle, null);

    // A handle taken before the rule: it stays the account's, answers PUT as before and serves.
    const account = await t.ctx.db.kysely
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', 'dashes@example.com')
      .executeTakeFirstOrThrow();
    await t.ctx.db.kysely
      .updateTable('accounts')
      .set({ handle: 'old--name' })
      .where('id', '=', account.id)
      .execute();
    const same = await put(key, 'old--name');
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.handle, 'old--name');
    const slug = assertPublished(await publish(t, { 'index.html': '<p>dashes</p>' }, { key })).slug;
    assert.equal((await t.api('/api/v1/links', { method: 'POST', key, body: { slug } })).status, 201);
    assert.equal((await hostRequest(t, `old--name.localhost:${t.port}`, '/')).text, '<p>dashes</p>');
    // Moving away from it is allowed; coming back is not (it is a new handle then).
    assert.equal((await put(key, 'new-name')).status, 200);
    assertError(await put(key, 'old--name'), 400, 'INVALID_REQUEST', /--/);
  });

  test('a new handle frees the old one at once for another user; DELETE frees it and its links', async () => {
    const a = await signIn(t, 'renamer@example.com');
    const b = await signIn(t, 'taker@example.com');
    await upgradeToHobby(t, a);
    await upgradeToHobby(t, b);
    assert.equal((await put(a, 'first-name')).status, 200);
    assertError(await put(b, 'first-name'), 400, 'INVALID_REQUEST', /taken/);
    assert.equal((await put(a, 'second-name')).status, 200);
    assert.equal((await put(b, 'first-name')).status, 200, 'the old name is free at once');

    const slug = assertPublished(await publish(t, { 'index.html': '<p>a</p>' }, { key: a })).slug;
    assert.equal((await t.api('/api/v1/links', { method: 'POST', key: a, body: { slug } })).status, 201);
    assert.equal((await hostRequest(t, `second-name.localhost:${t.port}`, '/')).text, '<p>a</p>');
    const del = await t.api('/api/v1/handle', { method: 'DELETE', key: a });
    assert.deepEqual(Object.keys(del.body).sort(), ['deleted', 'message']);
    assert.equal(del.body.deleted, true);
    assert.deepEqual((await t.api('/api/v1/links', { key: a })).body.links, []);
    assert.equal((await hostRequest(t, `second-name.localhost:${t.port}`, '/')).status, 404);
    assertError(await t.api('/api/v1/handle', { method: 'DELETE', key: a }), 404, 'NOT_FOUND');
  });
});

describe('links on a handle and a domain', () => {
  let dns: DnsPeer;
  let t: TestApp;
  let key: string;
  let home: string;
  let docs: string;
  const handleHost = () => `lnk-owner.localhost:${t.port}`;

  before(async () => {
    dns = await startDnsPeer({});
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET: TARGET });
    key = await signIn(t, 'links@example.com');
    await upgradeToHobby(t, key);
    assert.equal(
      (await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle: 'lnk-owner' } })).status,
      200,
    );
    home = assertPublished(
      await publish(
        t,
        { 'index.html': '<h1>home</h1>', 'about.html': '<h1>about</h1>', '404.html': 'home 404' },
        { key },
      ),
    ).slug;
    docs = assertPublished(
      await publish(t, { 'index.html': '<h1>docs</h1>', 'guide/index.html': '<h1>guide</h1>' }, { key }),
    ).slug;
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  /** Adds and verifies a domain through the DNS peer. */
  async function activeDomain(domain: string, k = key) {
    const add = await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain } });
    assert.equal(add.status, 201, add.text);
    dns.records[`_service.${domain}`] = { TXT: [add.body.dns.records[1].value] };
    dns.records[domain] = { CNAME: TARGET };
    const v = await t.api(`/api/v1/domains/${domain}/verify`, { method: 'POST', key: k });
    assert.equal(v.body.verified, true, v.body.message);
  }

  test('links at / and /docs on the handle serve by the longest location; /docs redirects to /docs/', async () => {
    const a = await t.api('/api/v1/links', { method: 'POST', key, body: { slug: home } });
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(
      { slug: a.body.slug, handle: a.body.handle, location: a.body.location, url: a.body.url },
      { slug: home, handle: 'lnk-owner', location: '/', url: `http://lnk-owner.localhost:${t.port}/` },
    );
    assert.match(a.body.id, /^lnk_/);
    const b = await t.api('/api/v1/links', { method: 'POST', key, body: { slug: docs, location: '/docs/' } });
    assert.equal(b.status, 201, b.text);
    assert.equal(b.body.location, '/docs');
    assert.equal(b.body.url, `http://lnk-owner.localhost:${t.port}/docs/`);

    assert.equal((await hostRequest(t, handleHost(), '/')).text, '<h1>home</h1>');
    assert.equal((await hostRequest(t, handleHost(), '/about')).text, '<h1>about</h1>');
    const bare = await hostRequest(t, handleHost(), '/docs');
    assert.equal(bare.status, 301);
    assert.equal(bare.header('location'), '/docs/');
    assert.equal((await hostRequest(t, handleHost(), '/docs/')).text, '<h1>docs</h1>');
    assert.equal((await hostRequest(t, handleHost(), '/docs/guide/')).text, '<h1>guide</h1>');
    // `/docsx` is not below `/docs`: the root site answers (its own 404 page).
    const other = await hostRequest(t, handleHost(), '/docsx');
    assert.equal(other.status, 404);
    assert.equal(other.text, 'home 404');
    const list = await t.api('/api/v1/links', { key });
    assert.equal(list.body.links.length, 2);
  });

  test('link validation: 400 with the reason; another account’s site or domain is 404', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ slug: home, location: 'docs' }, /start with/],
      [{ slug: home, location: '/a/../b' }, /clean path/],
      [{ slug: home, location: '/a//b' }, /clean path/],
      [{ slug: home, location: '/a b' }, /clean path/],
      [{ slug: home, location: '/docs' }, /already linked/],
      [{ location: '/x' }, /slug is required/],
    ];
    for (const [body, reason] of bad) {
      assertError(
        await t.api('/api/v1/links', { method: 'POST', key, body }),
        400,
        'INVALID_REQUEST',
        reason,
      );
    }
    const stranger = await signIn(t, 'stranger@example.com');
    const theirs = assertPublished(await publish(t, { 'index.html': 'theirs' }, { key: stranger })).slug;
    assertError(
      await t.api('/api/v1/links', { method: 'POST', key, body: { slug: theirs, location: '/t' } }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await t.api('/api/v1/links', { method: 'POST', key: stranger, body: { slug: theirs } }),
      400,
      'INVALID_REQUEST',
      /no handle/,
    );
    await activeDomain('theirs.example.org', stranger);
    assertError(
      await t.api('/api/v1/links', {
        method: 'POST',
        key,
        body: { slug: home, domain: 'theirs.example.org' },
      }),
      404,
      'NOT_FOUND',
    );
    // A pending domain of one's own.
    assert.equal(
      (await t.api('/api/v1/domains', { method: 'POST', key, body: { domain: 'pending.example.org' } }))
        .status,
      201,
    );
    assertError(
      await t.api('/api/v1/links', {
        method: 'POST',
        key,
        body: { slug: home, domain: 'pending.example.org' },
      }),
      400,
      'INVALID_REQUEST',
      /not verified/,
    );
    assertError(await t.api('/api/v1/links/lnk_nope', { method: 'DELETE', key }), 404, 'NOT_FOUND');
  });

  test('links on a domain serve with the same rule; DELETE /api/v1/links/:id unmounts at once', async () => {
    await activeDomain('www.links-owner.example.com');
    const root = await t.api('/api/v1/links', {
      method: 'POST',
      key,
      body: { slug: home, domain: 'www.links-owner.example.com' },
    });
    const sub = await t.api('/api/v1/links', {
      method: 'POST',
      key,
      body: { slug: docs, domain: 'www.links-owner.example.com', location: '/docs' },
    });
    assert.equal(sub.status, 201, sub.text);
    assert.equal(sub.body.url, 'https://www.links-owner.example.com/docs/');
    assert.equal((await hostRequest(t, 'www.links-owner.example.com', '/')).text, '<h1>home</h1>');
    assert.equal(
      (await hostRequest(t, 'www.links-owner.example.com', '/docs/guide/')).text,
      '<h1>guide</h1>',
    );
    const del = await t.api(`/api/v1/links/${sub.body.id}`, { method: 'DELETE', key });
    assert.deepEqual(del.body, { id: sub.body.id, deleted: true });
    assert.equal((await hostRequest(t, 'www.links-owner.example.com', '/docs/')).status, 404);
    assert.equal(root.status, 201);
  });

  test('deleting a site removes its links and it stops serving on the handle', async () => {
    const gone = assertPublished(await publish(t, { 'index.html': 'temporary' }, { key })).slug;
    assert.equal(
      (await t.api('/api/v1/links', { method: 'POST', key, body: { slug: gone, location: '/tmp' } })).status,
      201,
    );
    assert.equal((await hostRequest(t, handleHost(), '/tmp/')).text, 'temporary');
    await t.api(`/api/v1/publish/${gone}`, { method: 'DELETE', key });
    assert.ok(
      !(await t.api('/api/v1/links', { key })).body.links.some((l: { slug: string }) => l.slug === gone),
    );
    assert.notEqual((await hostRequest(t, handleHost(), '/tmp/')).text, 'temporary');
  });

  test('downgrade pauses the handle and the domains beyond Free (nothing deleted); re-upgrade brings them back', async () => {
    // Two active domains: the older keeps serving on Free (1 domain), the newer pauses.
    await activeDomain('second.links-owner.example.com');
    assert.equal(
      (
        await t.api('/api/v1/links', {
          method: 'POST',
          key,
          body: { slug: docs, domain: 'second.links-owner.example.com' },
        })
      ).status,
      201,
    );
    assert.equal((await hostRequest(t, 'second.links-owner.example.com', '/')).text, '<h1>docs</h1>');
    const linksBefore = (await t.api('/api/v1/links', { key })).body.links;

    await cancelHobby(t, key);
    assert.equal(
      (await hostRequest(t, handleHost(), '/')).text,
      '<h1>home</h1>',
      'paid period still running',
    );
    t.clock.advance(31 * DAY_MS);
    assert.equal((await t.api('/api/v1/account', { key })).body.plan, 'free');

    const paused = await hostRequest(t, handleHost(), '/');
    assert.equal(paused.status, 404);
    assert.match(paused.text, /paused/);
    assert.doesNotMatch(paused.text, /home/);
    assert.match((await hostRequest(t, 'second.links-owner.example.com', '/')).text, /paused/);
    // The oldest domain is within Free's one domain: it still serves.
    assert.equal((await hostRequest(t, 'www.links-owner.example.com', '/')).text, '<h1>home</h1>');
    // Nothing was deleted.
    assert.deepEqual((await t.api('/api/v1/links', { key })).body.links, linksBefore);
    assert.equal((await t.api('/api/v1/handle', { key })).body.handle, 'lnk-owner');
    assert.equal((await t.api('/api/v1/domains', { key })).body.total, 3);

    await upgradeToHobby(t, key);
    assert.equal((await t.api('/api/v1/account', { key })).body.plan, 'hobby');
    assert.equal((await hostRequest(t, handleHost(), '/')).text, '<h1>home</h1>', 'handle after re-upgrade');
    assert.equal(
      (await hostRequest(t, 'second.links-owner.example.com', '/')).text,
      '<h1>docs</h1>',
      'domain after re-upgrade',
    );
  });
});
