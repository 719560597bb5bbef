// Deploy tokens under attack (security review of issue 24): garbage to the token endpoints is a spec error
// body and never a 500, on every backend; odd Authorization values are unknown keys; a token dies exactly at
// its expiresAt; a token cannot change the site's metadata through the publish body either.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { deployTokenCaller } from '../../src/core/tokens.js';
import { deployTokenMayCall } from '../../src/http/rate-limit.js';
import { type ApiResponse, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, manifestOf, publish, update } from '../helpers/publish.js';

function assertSpecError(res: { status: number; text: string; body?: unknown }, what: string) {
  assert.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status} ${res.text}`);
  const body = JSON.parse(res.text) as { error?: unknown; code?: unknown; status?: unknown };
  assert.equal(typeof body.error, 'string', `${what}: ${res.text}`);
  assert.equal(typeof body.code, 'string', `${what}: ${res.text}`);
  assert.equal(body.status, res.status, `${what}: ${res.text}`);
}

function assertError(res: ApiResponse, status: number, code: string, what = '') {
  assert.equal(res.status, status, `${what} ${res.status} ${res.text}`);
  assert.equal(res.body?.code, code, `${what} ${res.text}`);
  assert.equal(res.body?.status, status, what);
}

describe('deploy tokens under attack', () => {
  let t: TestApp;
  let key: string;
  let slug: string;
  let token: string;
  const tokens = (s: string, rest = '') => `/api/v1/publish/${s}/tokens${rest}`;
  const raw = (path: string, method: string, headers: Record<string, string>, body?: string) =>
    rawRequest(t.port, { host: `127.0.0.1:${t.port}`, path, method, headers, ...(body ? { body } : {}) });

  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'attack-owner@example.com');
    slug = assertPublished(await publish(t, { 'index.html': '<h1>one</h1>' }, { key })).slug;
    const created = await t.api(tokens(slug), { method: 'POST', key, body: { name: 'ci' } });
    assert.equal(created.status, 201, created.text);
    token = created.body.token;
  });
  after(() => t.close());

  test('garbage create bodies are 4xx spec error bodies, never 500', async () => {
    const bodies = [
      '{"name":"x","expiresInDays":1e400}',
      '{"name":"x","expiresInDays":-1}',
      '{"name":"x","expiresInDays":-0}',
      '{"name":"x","expiresInDays":1e9}',
      '{"name":"x","expiresInDays":90.0000001}',
      '{"name":"x","expiresInDays":[30]}',
      '{"name":"x","expiresInDays":{"a":1}}',
      '{"name":"x","expiresInDays":true}',
      '{"name":["x"]}',
      '{"name":{"toString":"x"}}',
      '{"name":null}',
      `{"name":"${'a'.repeat(200_000)}"}`,
      '{"name":"\\u0000abc"}',
      '{"name":"a\\u0000"}',
      '{"name":"\\ud800"}',
      '{"name":"a\\u202egnp.exe"}',
      '{"name":"\u00e9t\u00e9"}',
      '{"name":"\ud83d\ude00"}',
      '{"name":"a","__proto__":{"admin":true}}',
      '{"name":"a","constructor":{"prototype":{"x":1}}}',
      '[]',
      '[{"name":"x"}]',
      '"name"',
      'null',
      '42',
      '{',
      '',
    ];
    for (const body of bodies) {
      const res = await raw(
        tokens(slug),
        'POST',
        { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      );
      assertSpecError({ status: res.status, text: res.body.toString() }, body.slice(0, 60));
    }
  });

  test('malformed ids and slugs in DELETE are 4xx spec error bodies, never 500', async () => {
    const ids = [
      '%00',
      'dtk_%00',
      'a'.repeat(101),
      '%F0%9F%98%80',
      '%ED%A0%80',
      '%C0%AF',
      '%FF',
      '..%2F..%2Faccount',
      '%ZZ',
      `dtk_${'x'.repeat(96)}`,
      "'%20OR%201=1--",
    ];
    for (const id of ids) {
      const res = await raw(tokens(slug, `/${id}`), 'DELETE', { authorization: `Bearer ${key}` });
      assertSpecError({ status: res.status, text: res.body.toString() }, `DELETE ${id}`);
    }
    for (const s of ['%00', 'A%00', '%FF', 'x'.repeat(200)]) {
      for (const [method, path] of [
        ['GET', tokens(s)],
        ['DELETE', tokens(s, '/dtk_x')],
      ] as const) {
        const res = await raw(path, method, { authorization: `Bearer ${key}` });
        assertSpecError({ status: res.status, text: res.body.toString() }, `${method} ${path}`);
      }
    }
    // The token is still there after all of it.
    const listed = await t.api(tokens(slug), { key });
    assert.equal(listed.body.tokens.length, 1);
  });

  test('odd token-shaped Authorization values are unknown keys (401), never 500 and never the owner', async () => {
    const hex = token.slice('svc_site_'.length);
    const values = [
      `Bearer svc_site_${hex.toUpperCase()}`,
      `Bearer SVC_SITE_${hex}`,
      `Bearer svc_site_${hex}0`,
      `Bearer svc_site_${hex.slice(1)}`,
      `Bearer svc_site_${hex}\u00ff`,
      `Bearer svc_site_${hex} x`,
      `Bearer svc_site_${hex},svc_site_${hex}`,
      'Bearer svc_site_',
      `Bearer svc_site_${'0'.repeat(32)}`,
      `Bearer svc_site_${'f'.repeat(5000)}`,
      `Basic svc_site_${hex}`,
      `svc_site_${hex}`,
    ];
    for (const authorization of values) {
      const res = await rawRequest(t.port, {
        host: `127.0.0.1:${t.port}`,
        path: `/api/v1/publish/${slug}`,
        method: 'PUT',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ files: manifestOf({ 'index.html': 'x' }) }),
      });
      assert.equal(res.status, 401, `${authorization.slice(0, 60)}: ${res.status} ${res.body}`);
      assertSpecError({ status: res.status, text: res.body.toString() }, authorization.slice(0, 60));
    }
    // The scheme is case-insensitive (RFC 9110 §11.1): the real token still works in lower case.
    const ok = await t.api(`/api/v1/publish/${slug}`, {
      method: 'PUT',
      headers: { authorization: `bearer ${token}` },
      body: { files: manifestOf({ 'index.html': 'x' }) },
    });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a token cannot change the site title, description or preview image through the publish body', async () => {
    for (const viewer of [{ title: 'pwned' }, { description: 'pwned' }, { title: null }]) {
      const res = await t.api(`/api/v1/publish/${slug}`, {
        method: 'PUT',
        key: token,
        body: { files: manifestOf({ 'index.html': 'x' }), viewer },
      });
      assertError(res, 403, 'FORBIDDEN', JSON.stringify(viewer));
    }
    const site = await t.api(`/api/v1/publish/${slug}`, { key });
    assert.equal(site.body.title, null);
    assert.equal(site.body.description, null);
    // The owner's key still may.
    const owner = await t.api(`/api/v1/publish/${slug}`, {
      method: 'PUT',
      key,
      body: { files: manifestOf({ 'index.html': 'x' }), viewer: { title: 'mine' } },
    });
    assert.equal(owner.status, 200, owner.text);
  });

  test('a build that bakes the token (or the owner key) into the site is refused: SECRET_DETECTED, nothing goes live', async () => {
    const before = (
      await rawRequest(t.port, { host: `${slug}.localhost:${t.port}`, path: '/' })
    ).body.toString();
    const leaks: Array<[string, string]> = [
      [token, 'slipway_deploy_token'],
      [key, 'slipway_api_key'],
    ];
    for (const [secret, type] of leaks) {
      const out = await update(t, token, slug, {
        'index.html': '<h1>built</h1><script src="app.js"></script>',
        'app.js': `const cfg = { deploy: "${secret}" };`,
      });
      assert.equal(out.finalize?.status, 400, out.finalize?.text);
      assert.equal(out.finalize?.body.code, 'SECRET_DETECTED');
      assert.deepEqual(
        out.finalize?.body.detectedSecrets.map((d: { type: string; path: string }) => [d.type, d.path]),
        [[type, 'app.js']],
      );
      assert.ok(!out.finalize?.text.includes(secret.slice(9)), 'the refusal does not echo the secret');
    }
    const after = (
      await rawRequest(t.port, { host: `${slug}.localhost:${t.port}`, path: '/' })
    ).body.toString();
    assert.equal(after, before);
    // The documentation's example shapes are public and never block a publish.
    const docs = await update(t, token, slug, {
      'index.html':
        '<p>svc_site_0123456789abcdef0123456789abcdef and svc_live_995ae26666e8074a088f08d2a5f7cf56</p>',
    });
    assert.equal(docs.finalize?.status, 200, docs.finalize?.text);
  });

  test('a token works until the millisecond before expiresAt and is an unknown key at expiresAt', async () => {
    const created = await t.api(tokens(slug), {
      method: 'POST',
      key,
      body: { name: 'edge', expiresInDays: 1 },
    });
    const expiresAt = Date.parse(created.body.expiresAt);
    const header = `Bearer ${created.body.token}`;
    // The test clock moves with real time, so the exact edge is checked on the lookup every route uses.
    assert.equal((await deployTokenCaller(t.ctx.db, header, expiresAt - 1))?.token.id, created.body.id);
    assert.equal(await deployTokenCaller(t.ctx.db, header, expiresAt), undefined);
    assert.equal(await deployTokenCaller(t.ctx.db, header, expiresAt + 1), undefined);
  });
});

describe('the deploy-token scope rule on routes marked for tokens', () => {
  const token = { id: 'dtk_x', slug: 'bright-fox-42', name: 'ci' };
  const req = (url: string, params: Record<string, string> = {}) =>
    ({ routeOptions: { url, config: { deployToken: true } }, params }) as unknown as FastifyRequest;

  test("a marked route is open only on the token's own :slug, or the signed upload addresses", () => {
    assert.equal(deployTokenMayCall(req('/api/v1/publish/:slug', { slug: 'bright-fox-42' }), token), true);
    assert.equal(deployTokenMayCall(req('/api/v1/publish/:slug', { slug: 'other-site-1' }), token), false);
    assert.equal(deployTokenMayCall(req('/api/v1/_upload/*', { '*': 'k' }), token), true);
  });

  test('a marked route whose site is not a :slug of its path fails closed (body, query, version id, other names)', () => {
    // Were one of these opened to tokens, the rule could not see which site it acts on: refuse, never let
    // a token of one site reach every site through it.
    for (const [url, params] of [
      ['/api/v1/publish/archive', {}],
      ['/api/v1/versions/:versionId/promote', { versionId: 'ver_x' }],
      ['/api/v1/sites/:site/aliases/:name', { site: 'bright-fox-42', name: 'pr-1' }],
      ['/api/v1/publish/:slugs/x', { slugs: 'bright-fox-42' }],
    ] as const) {
      assert.equal(deployTokenMayCall(req(url, params), token), false, url);
    }
  });
});
