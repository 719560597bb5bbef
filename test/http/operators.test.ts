// Operators through real HTTP (issue 26 part 0; CONTRACT "Operators, reports and the audit log"): the admin
// API exists only for an ADMIN_EMAILS account's key (404 for everyone else, route by route); a takedown
// answers 451 on every host of the site and keeps its content, restore undoes it; a suspension refuses the
// account's key, tokens and sessions (401) and serves its sites 403; each blocklist refuses what it names
// and nothing else; a blocked hash is refused on another account.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registeredRoutes } from '../../src/http/errors.js';
import { versionLabel } from '../../src/shared/preview-names.js';
import { type ApiResponse, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, publish, sha256 } from '../helpers/publish.js';
import { fileEntries, tgz } from '../helpers/tar.js';
import { Browser, csrfOf } from '../helpers/web.js';

function assertError(res: ApiResponse, status: number, code: string, what = '') {
  assert.equal(res.status, status, `${what} ${res.status} ${res.text}`);
  assert.equal(res.body?.code, code, `${what} ${res.text}`);
  assert.equal(res.body?.status, status, what);
  assert.equal(typeof res.body?.error, 'string', what);
}

async function browserSignIn(t: TestApp, email: string): Promise<Browser> {
  const b = new Browser(t);
  const page = await b.request('/login?next=/dashboard');
  const sent = await b.request('/login', {
    method: 'POST',
    form: { email, next: '/dashboard', _csrf: csrfOf(page.text) },
  });
  assert.equal(sent.status, 200, sent.text);
  const { lastCodeFor } = await import('../helpers/app.js');
  const done = await b.request('/login/code', {
    method: 'POST',
    form: { email, code: lastCodeFor(t, email), next: '/dashboard', _csrf: csrfOf(sent.text) },
  });
  assert.equal(done.status, 303, done.text);
  return b;
}

describe('operators', () => {
  let t: TestApp;
  let opKey: string;
  let ownerKey: string;
  let otherKey: string;

  const site = (host: string, path = '/') =>
    rawRequest(t.port, { host: `${host}.localhost:${t.port}`, path });
  const admin = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
    t.api(`/api/admin${path}`, { key: opKey, ...init });

  before(async () => {
    // Mixed case and spaces in the variable: addresses are compared lowercased.
    t = await startTestApp({ ADMIN_EMAILS: ' Ops@Example.com , second-op@example.com' });
    opKey = await signIn(t, 'ops@example.com');
    ownerKey = await signIn(t, 'owner@example.com');
    otherKey = await signIn(t, 'other@example.com');
  });

  after(() => t?.close());

  test('anyone but an operator gets 404 on every admin endpoint', async () => {
    const published = assertPublished(await publish(t, { 'index.html': 'x' }, { key: ownerKey }));
    const token = (
      await t.api(`/api/v1/publish/${published.slug}/tokens`, {
        method: 'POST',
        key: ownerKey,
        body: { name: 'ci' },
      })
    ).body.token as string;
    const session = await browserSignIn(t, 'owner@example.com');
    const opSession = await browserSignIn(t, 'ops@example.com');
    const cookie = (b: Browser) => [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const routes = registeredRoutes(t.app as never).filter((r) => r.url.startsWith('/api/admin/'));
    assert.ok(routes.length >= 11, `admin routes: ${routes.length}`);
    const callers: Array<[string, Record<string, string>]> = [
      ['anonymous', {}],
      ['a plain account key', { authorization: `Bearer ${ownerKey}` }],
      ['a deploy token', { authorization: `Bearer ${token}` }],
      ['a session', { cookie: cookie(session) }],
      ["an operator's session without the key", { cookie: cookie(opSession) }],
      ['a malformed key', { authorization: 'Bearer svc_live_nope' }],
    ];
    for (const { method, url } of routes) {
      const path = url.replace(':slug', published.slug).replace(':id', 'acct_x');
      for (const [who, headers] of callers) {
        const res = await t.api(`${path}${method === 'GET' ? '?q=owner%40example.com' : ''}`, {
          method,
          headers,
          ...(method === 'POST' || method === 'PUT'
            ? { body: { reason: 'r', kind: 'email', value: 'a@b.co', plan: 'hobby' } }
            : {}),
        });
        if (method === 'HEAD') assert.equal(res.status, 404, `HEAD ${url} as ${who}`);
        else assertError(res, 404, 'NOT_FOUND', `${method} ${url} as ${who}`);
      }
    }
    // Nothing was done by any of those calls.
    assert.equal((await site(published.slug)).status, 200);
    assert.equal((await admin('/blocks')).body.blocks.length, 0);
    // The operator's key reaches the same routes.
    assert.equal((await admin(`/sites/${published.slug}`)).status, 200);
  });

  test('takedown: 451 on the slug, preview and alias hosts; owner sees the reason; restore undoes it', async () => {
    const files = { 'index.html': '<h1>kit</h1>', 'app.js': `console.log(${Date.now()})` };
    const out = assertPublished(await publish(t, files, { key: ownerKey }));
    const { slug, versionId } = out;
    const alias = await t.api(`/api/v1/publish/${slug}/aliases/staging`, {
      method: 'PUT',
      key: ownerKey,
      body: { versionId },
    });
    assert.ok(alias.status < 300, alias.text);
    const hosts = [slug, `${slug}--${versionLabel(versionId)}`, `${slug}--staging`];
    for (const h of hosts) assert.equal((await site(h)).status, 200, h); // warm the caches
    const untouched = assertPublished(await publish(t, { 'index.html': 'fine' }, { key: ownerKey })).slug;

    const down = await admin(`/sites/${slug}/takedown`, {
      method: 'POST',
      body: { reason: 'Phishing (report 7)' },
    });
    assert.equal(down.status, 200, down.text);
    assert.deepEqual({ slug: down.body.slug, takenDown: down.body.takenDown }, { slug, takenDown: true });
    for (const h of hosts) {
      for (const path of ['/', '/app.js', '/missing']) {
        const res = await site(h, path);
        assert.equal(res.status, 451, `${h}${path}`);
        assert.match(res.body.toString(), /taken down/);
      }
    }
    assert.equal((await site(untouched)).status, 200, 'another site of the same owner is served');

    const details = await t.api(`/api/v1/publish/${slug}`, { key: ownerKey });
    assert.equal(details.body.takedown.reason, 'Phishing (report 7)');
    assert.match(details.body.takedown.at, /^\d{4}-/);
    assert.equal((await t.api(`/api/v1/publish/${untouched}`, { key: ownerKey })).body.takedown, null);
    assertError(
      await t.api(`/api/v1/publish/${slug}`, { method: 'DELETE', key: ownerKey }),
      403,
      'SITE_TAKEN_DOWN',
    );
    assertError(
      await t.api(`/api/v1/publish/${slug}/duplicate`, { method: 'POST', key: ownerKey }),
      403,
      'SITE_TAKEN_DOWN',
    );

    const search = await admin(
      `/search?q=${encodeURIComponent(`http://${slug}.localhost:${t.port}/app.js`)}`,
    );
    assert.equal(search.status, 200);
    const found = search.body.sites.find((s: { slug: string }) => s.slug === slug);
    assert.equal(found.takenDown, true);

    const restored = await admin(`/sites/${slug}/takedown`, { method: 'DELETE' });
    assert.deepEqual(restored.body, { slug, takenDown: false });
    for (const h of hosts) assert.equal((await site(h)).status, 200, `${h} after restore`);
    assert.equal((await site(slug, '/app.js')).body.toString(), files['app.js'], 'the content was kept');
    assert.equal((await t.api(`/api/v1/publish/${slug}`, { key: ownerKey })).body.takedown, null);
    assertError(await admin(`/sites/${slug}/takedown`, { method: 'DELETE' }), 409, 'INVALID_REQUEST');
    assertError(
      await admin('/sites/no-such-site-x/takedown', { method: 'POST', body: { reason: 'x' } }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await admin(`/sites/${slug}/takedown`, { method: 'POST', body: { reason: '' } }),
      400,
      'INVALID_REQUEST',
    );
  });

  test('a takedown with blockContent refuses the same files on another account, and only them', async () => {
    const kit = `<form>bank login ${Date.now()}</form>`;
    const shared = `/* a library many sites use ${Date.now()} */`;
    const innocent = assertPublished(
      await publish(t, { 'index.html': 'innocent', 'lib.js': shared }, { key: otherKey }),
    );
    const bad = assertPublished(await publish(t, { 'index.html': kit, 'lib.js': shared }, { key: ownerKey }));
    const down = await admin(`/sites/${bad.slug}/takedown`, {
      method: 'POST',
      body: { reason: 'Phishing kit', blockContent: true },
    });
    assert.equal(down.body.blockedHashes, 1, 'the library another live site serves is not blocked');
    const list = (await admin('/blocks?kind=hash')).body.blocks as Array<{ value: string; id: string }>;
    assert.ok(list.some((b) => b.value === sha256(kit)));
    assert.ok(!list.some((b) => b.value === sha256(shared)));

    const again = await publish(t, { 'index.html': kit }, { key: otherKey });
    assertError(again.finalize!, 403, 'CONTENT_BLOCKED', 'the same kit on another account');
    assert.deepEqual(again.finalize!.body.blockedPaths, ['index.html']);
    const anon = await publish(t, { 'deep/page.html': kit });
    assertError(anon.finalize!, 403, 'CONTENT_BLOCKED', 'anonymous');
    // Nothing else is refused: other files, the library, the innocent site's update.
    assertPublished(
      await publish(t, { 'index.html': `${kit} changed`, 'lib.js': shared }, { key: otherKey }),
    );
    assert.equal((await site(innocent.slug)).status, 200);

    // Removing the block lets the files through again.
    const block = list.find((b) => b.value === sha256(kit))!;
    assert.equal((await admin(`/blocks/${block.id}`, { method: 'DELETE' })).status, 200);
    assertPublished(await publish(t, { 'index.html': kit }, { key: otherKey }));
    await admin(`/sites/${bad.slug}/takedown`, { method: 'DELETE' });
  });

  test('suspension: key, token and session 401, sites 403; the rest untouched; lifting it restores all', async () => {
    const email = 'suspend-me@example.com';
    const key = await signIn(t, email);
    const { slug } = assertPublished(await publish(t, { 'index.html': 'mine' }, { key }));
    const token = (
      await t.api(`/api/v1/publish/${slug}/tokens`, { method: 'POST', key, body: { name: 'ci' } })
    ).body.token as string;
    const session = await browserSignIn(t, email);
    assert.equal((await session.request('/dashboard')).status, 200);
    const accountId = (await admin(`/search?q=${encodeURIComponent(email)}`)).body.accounts[0].id as string;
    const otherSite = assertPublished(await publish(t, { 'index.html': 'other' }, { key: otherKey })).slug;

    const res = await admin(`/accounts/${accountId}/suspend`, { method: 'POST', body: { reason: 'Spam' } });
    assert.deepEqual(res.body, { id: accountId, suspended: true });
    assertError(await t.api('/api/v1/publishes', { key }), 401, 'UNAUTHORIZED', 'key');
    assertError(
      await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: token, body: { files: [] } }),
      401,
      'UNAUTHORIZED',
      'token',
    );
    assert.equal((await session.request('/dashboard')).status, 401, 'session');
    const page = await site(slug);
    assert.equal(page.status, 403);
    assert.match(page.body.toString(), /suspended/);
    // Signing in again does not get around it.
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
    const { lastCodeFor } = await import('../helpers/app.js');
    const verify = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email, code: lastCodeFor(t, email) },
    });
    assertError(verify, 403, 'ACCOUNT_SUSPENDED');
    // Others are untouched.
    assert.equal((await t.api('/api/v1/publishes', { key: otherKey })).status, 200);
    assert.equal((await site(otherSite)).status, 200);
    const view = (await admin(`/accounts/${accountId}`)).body;
    assert.equal(view.account.suspended, true);
    assert.equal(view.account.suspension.reason, 'Spam');

    assert.deepEqual((await admin(`/accounts/${accountId}/suspend`, { method: 'DELETE' })).body, {
      id: accountId,
      suspended: false,
    });
    assert.equal((await t.api('/api/v1/publishes', { key })).status, 200, 'key back');
    const tokenCall = await t.api(`/api/v1/publish/${slug}`, {
      method: 'PUT',
      key: token,
      body: { files: [] },
    });
    assert.notEqual(tokenCall.status, 401, `token back: ${tokenCall.text}`);
    assert.equal((await session.request('/dashboard')).status, 200, 'session back');
    assert.equal((await site(slug)).status, 200, 'site back');
    assertError(await admin(`/accounts/${accountId}/suspend`, { method: 'DELETE' }), 409, 'INVALID_REQUEST');
    assertError(
      await admin('/accounts/acct_nobody/suspend', { method: 'POST', body: { reason: 'x' } }),
      404,
      'NOT_FOUND',
    );
  });

  test('email and email-domain blocks refuse sign-in for what they name only', async () => {
    const code = (email: string) =>
      t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
    const b1 = await admin('/blocks', {
      method: 'POST',
      body: { kind: 'email', value: 'Spammer@Example.org', reason: 'spam' },
    });
    assert.equal(b1.status, 201, b1.text);
    assert.equal(b1.body.value, 'spammer@example.org');
    const b2 = await admin('/blocks', {
      method: 'POST',
      body: { kind: 'email_domain', value: 'bad.test', reason: 'throwaway' },
    });
    assert.equal(b2.status, 201);
    assertError(await code('spammer@example.org'), 403, 'SIGNIN_BLOCKED');
    assertError(await code('anyone@bad.test'), 403, 'SIGNIN_BLOCKED');
    assertError(await code('x@mail.bad.test'), 403, 'SIGNIN_BLOCKED', 'a subdomain');
    assert.equal((await code('spammer2@example.org')).status, 200);
    assert.equal((await code('x@notbad.test')).status, 200, 'a domain ending the same is not a subdomain');
    // The web sign-in is refused the same way.
    const b = new Browser(t);
    const page = await b.request('/login');
    const sent = await b.request('/login', {
      method: 'POST',
      form: { email: 'me@bad.test', _csrf: csrfOf(page.text) },
    });
    assert.notEqual(sent.status, 200);
    assert.match(sent.text, /blocked/);
    assertError(
      await admin('/blocks', {
        method: 'POST',
        body: { kind: 'email', value: 'spammer@example.org', reason: 'again' },
      }),
      409,
      'INVALID_REQUEST',
    );
    assertError(
      await admin('/blocks', { method: 'POST', body: { kind: 'email', value: 'not-an-email', reason: 'x' } }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await admin('/blocks', { method: 'POST', body: { kind: 'nope', value: 'x', reason: 'x' } }),
      400,
      'INVALID_REQUEST',
    );
    await admin(`/blocks/${b1.body.id}`, { method: 'DELETE' });
    await admin(`/blocks/${b2.body.id}`, { method: 'DELETE' });
    assert.equal((await code('spammer@example.org')).status, 200, 'unblocked');
    assertError(await admin(`/blocks/${b1.body.id}`, { method: 'DELETE' }), 404, 'NOT_FOUND');
  });

  test('address blocks refuse anonymous publishing from the range only, never a signed-in publish', async () => {
    const far = await admin('/blocks', {
      method: 'POST',
      body: { kind: 'ip', value: '203.0.113.0/24', reason: 'elsewhere' },
    });
    assert.equal(far.status, 201, far.text);
    assertPublished(await publish(t, { 'index.html': 'anon ok' }));
    const near = await admin('/blocks', {
      method: 'POST',
      body: { kind: 'ip', value: '127.0.0.0/8', reason: 'abuse' },
    });
    assert.equal(near.status, 201);
    const anon = await publish(t, { 'index.html': 'anon refused' });
    assertError(anon.create, 403, 'PUBLISH_BLOCKED');
    const archive = (key?: string) =>
      t.api('/api/v1/publish/archive', {
        method: 'POST',
        body: tgz(fileEntries({ 'index.html': `archive ${Date.now()}` })),
        headers: { 'content-type': 'application/gzip' },
        ...(key ? { key } : {}),
      });
    assertError(await archive(), 403, 'PUBLISH_BLOCKED', 'an anonymous archive deploy');
    assert.equal((await archive(otherKey)).status, 201, 'a signed-in archive deploy');
    assertPublished(await publish(t, { 'index.html': 'signed in ok' }, { key: otherKey }));
    assertError(
      await admin('/blocks', { method: 'POST', body: { kind: 'ip', value: '10.0.0.0/99', reason: 'x' } }),
      400,
      'INVALID_REQUEST',
    );
    await admin(`/blocks/${near.body.id}`, { method: 'DELETE' });
    await admin(`/blocks/${far.body.id}`, { method: 'DELETE' });
    assertPublished(await publish(t, { 'index.html': 'anon again' }));
  });

  test('search by email, slug, hash and URL; plan by hand; delete', async () => {
    const body = `<p>search me ${Date.now()}</p>`;
    const { slug } = assertPublished(await publish(t, { 'index.html': body }, { key: otherKey }));
    const q = async (s: string) => (await admin(`/search?q=${encodeURIComponent(s)}`)).body;
    const byEmail = await q('OTHER@example.com');
    assert.equal(byEmail.accounts[0].email, 'other@example.com');
    assert.ok(byEmail.sites.some((s: { slug: string }) => s.slug === slug));
    const id = byEmail.accounts[0].id as string;
    assert.equal((await q(slug)).sites[0].accountId, id);
    assert.ok((await q(sha256(body))).sites.some((s: { slug: string }) => s.slug === slug));
    assert.ok(
      (await q(`http://${slug}.localhost:${t.port}/index.html?x=1`)).sites.some(
        (s: { slug: string }) => s.slug === slug,
      ),
    );
    assert.deepEqual(await q('nothing-matches-this'), { accounts: [], sites: [] });
    assertError(await admin('/search?q='), 400, 'INVALID_REQUEST');

    assert.deepEqual((await admin(`/accounts/${id}/plan`, { method: 'PUT', body: { plan: 'hobby' } })).body, {
      id,
      plan: 'hobby',
    });
    assert.equal((await t.api('/api/v1/account', { key: otherKey })).body.plan, 'hobby');
    await admin(`/accounts/${id}/plan`, { method: 'PUT', body: { plan: 'free' } });
    assert.equal((await t.api('/api/v1/account', { key: otherKey })).body.plan, 'free');

    assert.deepEqual((await admin(`/sites/${slug}`, { method: 'DELETE' })).body, { slug, deleted: true });
    assert.equal((await site(slug)).status, 404);
    assert.equal((await admin(`/sites/${slug}`)).body.status, 'deleted');
  });

  test('the /admin pages: 404 for anyone but an operator; actions need the confirmation and CSRF', async () => {
    const { slug } = assertPublished(await publish(t, { 'index.html': 'page test' }, { key: ownerKey }));
    const pages = [
      '/admin',
      '/admin?q=owner',
      '/admin/blocks',
      `/admin/sites/${slug}`,
      '/admin/accounts/acct_x',
    ];
    const posts = [
      '/admin/sites/takedown',
      '/admin/sites/restore',
      '/admin/sites/delete',
      '/admin/accounts/suspend',
      '/admin/accounts/unsuspend',
      '/admin/accounts/plan',
      '/admin/blocks',
      '/admin/blocks/delete',
    ];
    const plain = await browserSignIn(t, 'owner@example.com');
    const dashboard = await plain.request('/dashboard');
    for (const [who, b] of [
      ['anonymous', new Browser(t)],
      ['a plain session', plain],
    ] as const) {
      for (const path of pages) assert.equal((await b.request(path)).status, 404, `GET ${path} as ${who}`);
      for (const path of posts) {
        const res = await b.request(path, {
          method: 'POST',
          form: { slug, reason: 'x', confirm: 'yes', _csrf: csrfOf(dashboard.text) },
        });
        assert.equal(res.status, 404, `POST ${path} as ${who}`);
      }
    }
    // An API key is not a session: the pages are 404 with it too.
    const keyed = await fetch(`${t.url}/admin`, { headers: { authorization: `Bearer ${opKey}` } });
    assert.equal(keyed.status, 404);
    assert.equal((await site(slug)).status, 200, 'nothing was done');

    const op = await browserSignIn(t, 'ops@example.com');
    const home = await op.request(`/admin?q=${encodeURIComponent(slug)}`);
    assert.equal(home.status, 200);
    assert.match(home.text, new RegExp(`/admin/sites/${slug}`));
    const page = await op.request(`/admin/sites/${slug}`);
    assert.equal(page.status, 200);
    const csrf = csrfOf(page.text);
    // Without the confirmation box nothing happens.
    const unconfirmed = await op.request('/admin/sites/takedown', {
      method: 'POST',
      form: { slug, reason: 'r', _csrf: csrf },
    });
    assert.equal(unconfirmed.status, 303);
    assert.equal((await site(slug)).status, 200);
    assert.match((await op.request(unconfirmed.headers.get('location')!)).text, /tick the confirmation box/);
    // Without the CSRF token the form is refused.
    const forged = await op.request('/admin/sites/takedown', {
      method: 'POST',
      form: { slug, reason: 'r', confirm: 'yes' },
    });
    assert.equal(forged.status, 403);
    assert.equal((await site(slug)).status, 200);
    const done = await op.request('/admin/sites/takedown', {
      method: 'POST',
      form: { slug, reason: 'Malware', confirm: 'yes', _csrf: csrf },
    });
    assert.equal(done.status, 303);
    assert.equal((await site(slug)).status, 451);
    const after = await op.request(done.headers.get('location')!);
    assert.match(after.text, /Taken down/);
    // The owner's dashboard shows the reason.
    const ownerPage = await plain.request(`/dashboard/sites/${slug}`);
    assert.match(ownerPage.text, /Taken down/);
    assert.match(ownerPage.text, /Malware/);
    await op.request('/admin/sites/restore', { method: 'POST', form: { slug, confirm: 'yes', _csrf: csrf } });
    assert.equal((await site(slug)).status, 200);
  });

  test('a takedown and a suspension reach a handle mount too; others on the same handle are served', async () => {
    const key = await signIn(t, 'handle-owner@example.com');
    const id = (await admin('/search?q=handle-owner%40example.com')).body.accounts[0].id as string;
    assert.equal(
      (await admin(`/accounts/${id}/plan`, { method: 'PUT', body: { plan: 'hobby' } })).status,
      200,
    );
    const handle = `h${Date.now().toString(36)}`;
    const set = await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } });
    assert.ok(set.status < 300, set.text);
    const blog = assertPublished(await publish(t, { 'index.html': 'blog' }, { key })).slug;
    const shop = assertPublished(await publish(t, { 'index.html': 'shop' }, { key })).slug;
    for (const [slug, location] of [
      [blog, '/blog'],
      [shop, '/shop'],
    ]) {
      const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug, location } });
      assert.ok(link.status < 300, link.text);
    }
    assert.equal((await site(handle, '/blog/')).status, 200);
    assert.equal((await site(handle, '/shop/')).status, 200);

    await admin(`/sites/${blog}/takedown`, { method: 'POST', body: { reason: 'x' } });
    assert.equal((await site(handle, '/blog/')).status, 451, 'the handle mount of the taken-down site');
    assert.equal((await site(handle, '/shop/')).status, 200, 'the other mount is served');
    await admin(`/sites/${blog}/takedown`, { method: 'DELETE' });
    assert.equal((await site(handle, '/blog/')).status, 200);

    await admin(`/accounts/${id}/suspend`, { method: 'POST', body: { reason: 'x' } });
    assert.equal((await site(handle, '/blog/')).status, 403);
    assert.equal((await site(handle, '/shop/')).status, 403);
    await admin(`/accounts/${id}/suspend`, { method: 'DELETE' });
    assert.equal((await site(handle, '/shop/')).status, 200);
  });
});
