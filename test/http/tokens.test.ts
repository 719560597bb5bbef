// Deploy tokens through real HTTP (issue 24 part 1, CONTRACT "Deploy tokens"): the owner creates, lists
// and revokes them; a token publishes its own site (update, uploads, finalize) and nothing else: every
// other registered route answers it 403 FORBIDDEN, every route of another site too; a revoked or expired
// token, or one of a deleted site, is an unknown key (401); other accounts see a 404; no log line holds it.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registeredRoutes } from '../../src/http/errors.js';
import { type ApiResponse, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, manifestOf, publish, update } from '../helpers/publish.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 86_400_000;

/**
 * The routes a deploy token may call (`config: { deployToken: true }`), as `METHOD url`. Exactly these:
 * every other registered route must refuse a token. Add a route here when it is opened to tokens
 * (issue 24: A adds `PUT /api/v1/publish/:slug/aliases/:name`, D `POST /api/v1/publish/:slug/archive`).
 */
const TOKEN_ROUTES = new Set([
  'PUT /api/v1/publish/:slug',
  'POST /api/v1/publish/:slug/finalize',
  'PUT /api/v1/_upload/*',
  'PUT /api/v1/publish/:slug/aliases/:name',
  'POST /api/v1/publish/:slug/archive',
]);

function assertError(res: ApiResponse, status: number, code: string, what = '') {
  assert.equal(res.status, status, `${what} ${res.status} ${res.text}`);
  assert.equal(res.body?.code, code, `${what} ${res.text}`);
  assert.equal(res.body?.status, status, what);
  assert.equal(typeof res.body?.error, 'string', what);
}

describe('deploy tokens', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let slug: string;
  /** Another site of the same owner. */
  let sibling: string;
  /** A site of another account. */
  let foreign: string;
  let token: string;
  let tokenId: string;

  const tokens = (s: string, rest = '') => `/api/v1/publish/${s}/tokens${rest}`;

  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'ci-owner@example.com');
    otherKey = await signIn(t, 'ci-other@example.com');
    slug = assertPublished(await publish(t, { 'index.html': '<h1>one</h1>' }, { key })).slug;
    sibling = assertPublished(await publish(t, { 'index.html': '<h1>sibling</h1>' }, { key })).slug;
    foreign = assertPublished(await publish(t, { 'index.html': '<h1>foreign</h1>' }, { key: otherKey })).slug;
    const created = await t.api(tokens(slug), { method: 'POST', key, body: { name: 'GitHub Actions' } });
    assert.equal(created.status, 201, created.text);
    token = created.body.token;
    tokenId = created.body.id;
  });
  after(() => t.close());

  test('POST creates a token shown once (svc_site_, 90 days by default); GET lists it without the secret', async () => {
    const created = await t.api(tokens(slug), {
      method: 'POST',
      key,
      body: { name: 'GitLab CI (main)', expiresInDays: 365 },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['createdAt', 'expiresAt', 'id', 'name', 'token']);
    assert.match(created.body.token, /^svc_site_[0-9a-f]{32}$/);
    assert.match(created.body.createdAt, ISO);
    assert.equal(Date.parse(created.body.expiresAt) - Date.parse(created.body.createdAt), 365 * DAY_MS);
    assert.match(token, /^svc_site_[0-9a-f]{32}$/);

    const listed = await t.api(tokens(slug), { key });
    assert.equal(listed.status, 200, listed.text);
    const byId = new Map(listed.body.tokens.map((x: { id: string }) => [x.id, x]));
    const first = byId.get(tokenId) as Record<string, string | null>;
    assert.deepEqual(Object.keys(first).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name']);
    assert.equal(first.name, 'GitHub Actions');
    assert.equal(Date.parse(first.expiresAt!) - Date.parse(first.createdAt!), 90 * DAY_MS);
    assert.ok(byId.has(created.body.id));
    assert.ok(!listed.text.includes(token.slice(9)) && !listed.text.includes(created.body.token.slice(9)));
    // The other site of the owner has none.
    assert.deepEqual((await t.api(tokens(sibling), { key })).body, { tokens: [] });
  });

  test('names and expiresInDays are validated: 400 INVALID_REQUEST with the error body', async () => {
    const bad: unknown[] = [
      {},
      { name: '' },
      { name: ' leading space' },
      { name: 'x'.repeat(65) },
      { name: '<script>' },
      { name: 'line\nbreak' },
      { name: 42 },
      { name: 'ok', expiresInDays: 0 },
      { name: 'ok', expiresInDays: 366 },
      { name: 'ok', expiresInDays: 1.5 },
      { name: 'ok', expiresInDays: '30' },
      { name: 'ok', expiresInDays: null },
      { name: 'ok', scope: 'everything' },
    ];
    for (const body of bad) {
      const res = await t.api(tokens(slug), { method: 'POST', key, body });
      assertError(res, 400, 'INVALID_REQUEST', JSON.stringify(body));
    }
    const edge = await t.api(tokens(slug), {
      method: 'POST',
      key,
      body: { name: `a${'b'.repeat(62)}c`, expiresInDays: 1 },
    });
    assert.equal(edge.status, 201, edge.text);
    await t.api(tokens(slug, `/${edge.body.id}`), { method: 'DELETE', key });
  });

  test('a token publishes its own site end to end: update, uploads, finalize; the calls count in the owner window', async () => {
    const before = Number((await t.api('/api/v1/account', { key })).headers.get('x-ratelimit-remaining'));
    const files = { 'index.html': '<h1>from CI</h1>', 'app.js': 'console.log(1)' };
    const out = assertPublished(await update(t, token, slug, files));
    assert.equal(out.finalize?.status, 200, out.finalize?.text);
    assert.equal(out.finalize?.body.status, 'active');
    assert.equal(out.uploads.length, 2);
    // PUT and finalize were counted in the owner's window (the uploads are not counted for anyone).
    assert.equal(Number(out.finalize?.headers.get('x-ratelimit-remaining')), before - 2);
    const after = Number((await t.api('/api/v1/account', { key })).headers.get('x-ratelimit-remaining'));
    assert.equal(after, before - 3);

    const site = await t.api(`/api/v1/publish/${slug}`, { key });
    assert.equal(site.body.versionId, out.versionId);
    const served = await rawRequest(t.port, { host: `${slug}.localhost:${t.port}`, path: '/' });
    assert.equal(served.body.toString(), '<h1>from CI</h1>');

    const listed = await t.api(tokens(slug), { key });
    const used = listed.body.tokens.find((x: { id: string }) => x.id === tokenId);
    assert.match(used.lastUsedAt, ISO);
  });

  test('lastUsedAt is written at most once a minute', async () => {
    const lastUsed = async () =>
      (await t.api(tokens(slug), { key })).body.tokens.find((x: { id: string }) => x.id === tokenId)
        .lastUsedAt as string;
    const call = () => t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: token, body: { files: [] } });
    await call();
    const first = await lastUsed();
    t.clock.advance(30_000);
    await call();
    assert.equal(await lastUsed(), first, 'within the minute: unchanged');
    t.clock.advance(31_000);
    await call();
    assert.ok(Date.parse(await lastUsed()) >= Date.parse(first) + 60_000, 'a minute later: moved');
  });

  test('every registered route outside the token scope answers a token 403 FORBIDDEN, on its own site too', async () => {
    const routes = registeredRoutes(t.app);
    assert.ok(routes.length >= 40, `only ${routes.length} routes registered`);
    const allowedSeen = new Set<string>();
    for (const route of routes) {
      const id = `${route.method} ${route.url}`;
      const twinOf = route.method === 'HEAD' ? `GET ${route.url}` : id;
      const path = route.url
        .split('/')
        .map((s) => (s === ':slug' ? slug : s.startsWith(':') || s === '*' ? 'x' : s))
        .join('/');
      const hasBody = !['GET', 'HEAD', 'DELETE', 'OPTIONS'].includes(route.method);
      const res = await fetch(`${t.url}${path}`, {
        method: route.method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(hasBody ? { body: '{}' } : {}),
      });
      const text = await res.text();
      if (TOKEN_ROUTES.has(twinOf)) {
        allowedSeen.add(twinOf);
        assert.notEqual(res.status, 403, `${id} is open to tokens: ${text}`);
        continue;
      }
      if (route.url.startsWith('/api/admin/')) {
        // The operators' API does not exist for anyone but an operator's key (docs/admin.md): 404.
        assert.equal(res.status, 404, `${id} must answer a deploy token 404: ${res.status} ${text}`);
        continue;
      }
      assert.equal(res.status, 403, `${id} must refuse a deploy token: ${res.status} ${text}`);
      if (route.method === 'HEAD') continue;
      const body = JSON.parse(text);
      assert.deepEqual([body.code, body.status], ['FORBIDDEN', 403], id);
      assert.ok(!text.includes(token.slice(9)), `${id} does not echo the token`);
    }
    assert.deepEqual([...allowedSeen].sort(), [...TOKEN_ROUTES].sort(), 'every allowed route is registered');
  });

  test('the attacks named by the issue, by name: account, delete, metadata, password, variables, hosts, domains, handle, links, billing, tokens, duplicate, claim, list', async () => {
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/account'],
      ['DELETE', `/api/v1/publish/${slug}`],
      ['GET', `/api/v1/publish/${slug}`],
      ['PATCH', `/api/v1/publish/${slug}/metadata`, { title: 'pwned' }],
      ['PATCH', `/api/v1/publish/${slug}/metadata`, { password: 'hunter22' }],
      ['PUT', `/api/v1/publish/${slug}/variables`, { STOLEN: 'x' }],
      ['GET', `/api/v1/publish/${slug}/variables`],
      ['PUT', `/api/v1/publish/${slug}/proxy-hosts`, { hosts: ['evil.example.com'] }],
      ['POST', '/api/v1/domains', { domain: 'evil.example.com' }],
      ['PUT', '/api/v1/handle', { handle: 'pwned' }],
      ['POST', '/api/v1/links', { slug, location: '/' }],
      ['POST', '/api/billing/checkout'],
      ['POST', tokens(slug), { name: 'escalate' }],
      ['GET', tokens(slug)],
      ['DELETE', tokens(slug, `/${tokenId}`)],
      ['POST', `/api/v1/publish/${slug}/duplicate`],
      ['POST', `/api/v1/publish/${slug}/claim`, { claimToken: 'clm_x' }],
      ['GET', '/api/v1/publishes'],
      ['GET', `/api/v1/publish/${slug}/versions`],
      ['POST', '/api/v1/publish', { files: manifestOf({ 'index.html': 'new site' }) }],
    ];
    for (const [method, path, body] of calls) {
      const res = await t.api(path, { method, key: token, ...(body === undefined ? {} : { body }) });
      assertError(res, 403, 'FORBIDDEN', `${method} ${path}`);
    }
    // Nothing changed: the site is there, untitled, with no variables; the token still lists.
    const site = await t.api(`/api/v1/publish/${slug}`, { key });
    assert.equal(site.status, 200);
    assert.equal(site.body.title, null);
    assert.equal(site.body.hasPassword, false);
    assert.deepEqual((await t.api(`/api/v1/publish/${slug}/variables`, { key })).body.variables, []);
    assert.ok((await t.api(tokens(slug), { key })).body.tokens.some((x: { id: string }) => x.id === tokenId));
  });

  test("a token of one site is refused on every token route of another site (the owner's or not)", async () => {
    const body = { files: manifestOf({ 'index.html': 'hijack' }) };
    for (const other of [sibling, foreign]) {
      const put = await t.api(`/api/v1/publish/${other}`, { method: 'PUT', key: token, body });
      assertError(put, 403, 'FORBIDDEN', `PUT ${other}`);
      const fin = await t.api(`/api/v1/publish/${other}/finalize`, {
        method: 'POST',
        key: token,
        body: { versionId: 'ver_x' },
      });
      assertError(fin, 403, 'FORBIDDEN', `finalize ${other}`);
    }
    // An anonymous site's finalize needs no key, but a token of another site is refused there too.
    const anon = await publish(t, { 'index.html': 'anon' }, { finalize: false });
    const fin = await t.api(`/api/v1/publish/${anon.slug}/finalize`, {
      method: 'POST',
      key: token,
      body: { versionId: anon.versionId },
    });
    assertError(fin, 403, 'FORBIDDEN', 'anonymous finalize');
  });

  test("another account cannot create, list or revoke a site's tokens: 404 as for its other endpoints", async () => {
    assertError(await t.api(tokens(slug), { key: otherKey }), 404, 'NOT_FOUND');
    assertError(
      await t.api(tokens(slug), { method: 'POST', key: otherKey, body: { name: 'mine now' } }),
      404,
      'NOT_FOUND',
    );
    assertError(
      await t.api(tokens(slug, `/${tokenId}`), { method: 'DELETE', key: otherKey }),
      404,
      'NOT_FOUND',
    );
    // Revoking another site's token through one's own site's path finds nothing either.
    assertError(
      await t.api(tokens(foreign, `/${tokenId}`), { method: 'DELETE', key: otherKey }),
      404,
      'NOT_FOUND',
    );
    // Without a key: 401.
    assertError(await t.api(tokens(slug)), 401, 'UNAUTHORIZED');
    // An anonymous site has no owner to create tokens.
    const anon = await publish(t, { 'index.html': 'anon' });
    assertError(
      await t.api(tokens(anon.slug), { method: 'POST', key, body: { name: 'x' } }),
      404,
      'NOT_FOUND',
    );
    // The token still works for its site.
    const put = await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: token, body: { files: [] } });
    assert.notEqual(put.status, 401);
    assert.notEqual(put.status, 403);
  });

  test('a revoked token is an unknown key (401), at once', async () => {
    const created = await t.api(tokens(slug), { method: 'POST', key, body: { name: 'short lived' } });
    const doomed: string = created.body.token;
    const body = { files: manifestOf({ 'index.html': 'x' }) };
    assert.equal((await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: doomed, body })).status, 200);
    const revoked = await t.api(tokens(slug, `/${created.body.id}`), { method: 'DELETE', key });
    assert.equal(revoked.status, 200, revoked.text);
    assert.deepEqual(revoked.body, { id: created.body.id, deleted: true });
    assertError(
      await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: doomed, body }),
      401,
      'UNAUTHORIZED',
    );
    assertError(await t.api('/api/v1/account', { key: doomed }), 401, 'UNAUTHORIZED');
    assertError(
      await t.api(tokens(slug, `/${created.body.id}`), { method: 'DELETE', key }),
      404,
      'NOT_FOUND',
    );
  });

  test('deleting a site revokes its tokens: 401 afterwards, and no row is left', async () => {
    const doomedSite = assertPublished(await publish(t, { 'index.html': 'bye' }, { key })).slug;
    const created = await t.api(tokens(doomedSite), { method: 'POST', key, body: { name: 'ci' } });
    assert.equal(created.status, 201);
    assert.equal((await t.api(`/api/v1/publish/${doomedSite}`, { method: 'DELETE', key })).status, 200);
    const body = { files: manifestOf({ 'index.html': 'back' }) };
    const res = await t.api(`/api/v1/publish/${doomedSite}`, {
      method: 'PUT',
      key: created.body.token,
      body,
    });
    assertError(res, 401, 'UNAUTHORIZED');
    const rows = await t.ctx.db.kysely
      .selectFrom('deploy_tokens')
      .select('id')
      .where('site_slug', '=', doomedSite)
      .execute();
    assert.deepEqual(rows, []);
  });

  test('no log line holds a token, and the tokens themselves are masked like keys', () => {
    const lines = t.logs.join('\n');
    assert.ok(lines.includes('"url":"/api/v1/publish/'), 'requests were logged');
    assert.ok(!lines.includes(token.slice(9)), 'the token is absent from the logs');
  });

  test('an expired token is an unknown key (401); a fresh one still works (runs last: moves the clock)', async () => {
    const created = await t.api(tokens(slug), {
      method: 'POST',
      key,
      body: { name: 'one day', expiresInDays: 1 },
    });
    const day: string = created.body.token;
    const body = { files: manifestOf({ 'index.html': 'x' }) };
    assert.equal((await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: day, body })).status, 200);
    t.clock.advance(DAY_MS + 1000);
    assertError(
      await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: day, body }),
      401,
      'UNAUTHORIZED',
    );
    assert.equal((await t.api(`/api/v1/publish/${slug}`, { method: 'PUT', key: token, body })).status, 200);
    // Still listed, with its expiry in the past, so the owner sees why CI stopped.
    const listed = await t.api(tokens(slug), { key });
    const expired = listed.body.tokens.find((x: { id: string }) => x.id === created.body.id);
    assert.ok(Date.parse(expired.expiresAt) < t.clock.now());
  });
});
