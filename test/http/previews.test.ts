// Previews and aliases (CONTRACT "Previews and aliases", issue 24): every finalized version at
// `<slug>--<label>.<site domain>`, named aliases at `<slug>--<name>`, finalize with `live: false`, the
// versions list's previewUrl/aliases, the alias endpoints, and what every preview host obeys (password,
// expiry, deletion, noindex, the TLS ask, the proxy's Origin check); then two nodes on one database.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { versionLabel } from '../../src/shared/preview-names.js';
import { rawRequest, signIn, startTestApp, TEST_BACKEND, type TestApp } from '../helpers/app.js';
import {
  type Cluster,
  createVersion,
  postJson,
  publishOn,
  type ServiceNode,
  signInOn,
  startCluster,
  uploadFile,
} from '../helpers/cluster.js';
import { assertPublished, type Files, publish, update } from '../helpers/publish.js';
import { hostRequest } from '../serve/site-client.js';

function assertError(res: { status: number; body: unknown; text?: string }, status: number, code: string) {
  assert.equal(res.status, status, res.text ?? JSON.stringify(res.body));
  const body = res.body as { error: unknown; code: unknown; status: unknown };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

describe('previews and aliases', () => {
  let t: TestApp;
  let key: string;
  let otherKey: string;

  before(async () => {
    t = await startTestApp({ PROXY_ENABLED: 'true' });
    key = await signIn(t, 'previews@example.com');
    otherKey = await signIn(t, 'previews-other@example.com');
  });
  after(() => t?.close());

  const host = (label: string) => `${label}.localhost:${t.port}`;
  const get = (label: string, path = '/', headers: Record<string, string> = {}) =>
    hostRequest(t, host(label), path, { headers });
  const previewOf = (slug: string, versionId: string) => `${slug}--${versionLabel(versionId)}`;

  /** PUT a new version of `slug`, upload it and finalize it with `options` (live, alias). */
  async function publishVersion(slug: string, files: Files, options: Record<string, unknown>) {
    const out = await update(t, key, slug, files, { finalize: false });
    assert.equal(out.create.status, 200, out.create.text);
    const fin = await t.api(`/api/v1/publish/${slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: out.versionId, ...options },
    });
    return { versionId: out.versionId, finalize: fin };
  }

  test('finalize live:false serves the version at its preview host only, noindex; restore promotes it', async () => {
    const live = assertPublished(await publish(t, { 'index.html': '<p>one</p>' }, { key }));
    assert.equal(live.finalize!.body.live, true);
    assert.equal(live.finalize!.body.previewUrl, `http://${host(previewOf(live.slug, live.versionId))}/`);
    const slug = live.slug;

    const preview = await publishVersion(slug, { 'index.html': '<p>two</p>' }, { live: false });
    assert.equal(preview.finalize.status, 200, preview.finalize.text);
    const label = previewOf(slug, preview.versionId);
    assert.deepEqual(preview.finalize.body, {
      slug,
      siteUrl: `http://${host(slug)}/`,
      versionId: preview.versionId,
      status: 'active',
      warnings: [],
      previewUrl: `http://${host(label)}/`,
      live: false,
    });

    // The live host keeps the live version (and is indexable); the preview host serves the new one.
    const site = await get(slug);
    assert.equal(site.text, '<p>one</p>');
    assert.equal(site.header('x-robots-tag'), undefined);
    const page = await get(label);
    assert.equal(page.status, 200);
    assert.equal(page.text, '<p>two</p>');
    assert.equal(page.header('x-robots-tag'), 'noindex');
    // Every answer of a preview host is noindex: a missing file too. The first version's own host serves too.
    const missing = await get(label, '/nothing');
    assert.equal(missing.status, 404);
    assert.equal(missing.header('x-robots-tag'), 'noindex');
    assert.equal((await get(previewOf(slug, live.versionId))).text, '<p>one</p>');
    // The same warm request twice (the second from the fast path's memo) keeps the field.
    assert.equal((await get(label)).header('x-robots-tag'), 'noindex');

    const versions = await t.api(`/api/v1/publish/${slug}/versions`, { key });
    assert.equal(versions.status, 200);
    assert.deepEqual(
      versions.body.versions.map((v: Record<string, unknown>) => [
        v.versionId,
        v.current,
        v.previewUrl,
        v.aliases,
      ]),
      [
        [preview.versionId, false, `http://${host(label)}/`, []],
        [live.versionId, true, `http://${host(previewOf(slug, live.versionId))}/`, []],
      ],
    );

    // Promote = the existing restore.
    const restore = await t.api(`/api/v1/publish/${slug}/versions/${preview.versionId}/restore`, {
      method: 'POST',
      key,
    });
    assert.equal(restore.status, 200, restore.text);
    assert.equal((await get(slug)).text, '<p>two</p>');
    assert.equal((await get(slug)).header('x-robots-tag'), undefined);
  });

  test('a first version finalized with live:false leaves the site pending; promoting it makes it live', async () => {
    const out = await publish(t, { 'index.html': '<p>first</p>' }, { key, finalize: false });
    const fin = await t.api(`/api/v1/publish/${out.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: out.versionId, live: false },
    });
    assert.equal(fin.status, 200, fin.text);
    assert.equal(fin.body.status, 'pending');
    assert.equal(fin.body.live, false);
    assert.equal((await get(out.slug)).status, 404, 'nothing is live at the slug host');
    assert.equal((await t.api(`/api/v1/publish/${out.slug}`, { key })).body.status, 'pending');
    assert.equal((await get(previewOf(out.slug, out.versionId))).text, '<p>first</p>');
    // A retried preview finalize is harmless.
    const again = await t.api(`/api/v1/publish/${out.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: out.versionId, live: false },
    });
    assert.equal(again.status, 200, again.text);

    const restore = await t.api(`/api/v1/publish/${out.slug}/versions/${out.versionId}/restore`, {
      method: 'POST',
      key,
    });
    assert.equal(restore.status, 200, restore.text);
    assert.equal(restore.body.status, 'active');
    assert.equal((await get(out.slug)).text, '<p>first</p>');
    const account = await t.api('/api/v1/account', { key });
    assert.ok(account.body.usage.storage.usedBytes > 0, 'the promoted version counts as storage');
  });

  test('a pending version, and another site’s label, serve nothing at a preview host', async () => {
    const a = assertPublished(await publish(t, { 'index.html': '<p>a</p>' }, { key }));
    const b = assertPublished(await publish(t, { 'index.html': '<p>b</p>' }, { key: otherKey }));
    const pending = await update(t, key, a.slug, { 'index.html': '<p>pending</p>' }, { finalize: false });
    assert.equal(pending.create.status, 200);
    assert.equal((await get(previewOf(a.slug, pending.versionId))).status, 404, 'pending: never served');
    assert.equal((await get(`${a.slug}--${versionLabel(b.versionId)}`)).status, 404, "B's label under A");
    assert.equal((await get(`${a.slug}--1234567890`)).status, 404);
    assert.equal((await get(`${a.slug}--no-such-alias`)).status, 404);
    // Finalized now: the same host serves it (the 404 above was not kept).
    const fin = await t.api(`/api/v1/publish/${a.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: pending.versionId, live: false },
    });
    assert.equal(fin.status, 200, fin.text);
    assert.equal((await get(previewOf(a.slug, pending.versionId))).text, '<p>pending</p>');
  });

  test('aliases: PUT creates and moves, GET lists, DELETE removes; finalize may set one', async () => {
    const one = assertPublished(await publish(t, { 'index.html': '<p>v1</p>' }, { key }));
    const slug = one.slug;
    const two = await publishVersion(slug, { 'index.html': '<p>v2</p>' }, { live: false, alias: 'staging' });
    assert.equal(two.finalize.status, 200, two.finalize.text);
    assert.equal((await get(`${slug}--staging`)).text, '<p>v2</p>');
    assert.equal((await get(`${slug}--staging`)).header('x-robots-tag'), 'noindex');
    assert.equal((await get(slug)).text, '<p>v1</p>');

    const put = await t.api(`/api/v1/publish/${slug}/aliases/staging`, {
      method: 'PUT',
      key,
      body: { versionId: one.versionId },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body, {
      name: 'staging',
      versionId: one.versionId,
      url: `http://${host(`${slug}--staging`)}/`,
    });
    assert.equal((await get(`${slug}--staging`)).text, '<p>v1</p>', 'moved at once');
    const pr = await t.api(`/api/v1/publish/${slug}/aliases/pr-42`, {
      method: 'PUT',
      key,
      body: { versionId: two.versionId },
    });
    assert.equal(pr.status, 200, pr.text);

    const list = await t.api(`/api/v1/publish/${slug}/aliases`, { key });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.aliases.map((a: Record<string, unknown>) => [a.name, a.versionId, a.url]),
      [
        ['pr-42', two.versionId, `http://${host(`${slug}--pr-42`)}/`],
        ['staging', one.versionId, `http://${host(`${slug}--staging`)}/`],
      ],
    );
    assert.match(list.body.aliases[0].updatedAt, /^\d{4}-\d\d-\d\dT/);
    const versions = (await t.api(`/api/v1/publish/${slug}/versions`, { key })).body.versions;
    assert.deepEqual(
      versions.map((v: { aliases: string[] }) => v.aliases),
      [['pr-42'], ['staging']],
    );

    const del = await t.api(`/api/v1/publish/${slug}/aliases/staging`, { method: 'DELETE', key });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { name: 'staging', deleted: true });
    assert.equal((await get(`${slug}--staging`)).status, 404, 'gone at once');
    assertError(
      await t.api(`/api/v1/publish/${slug}/aliases/staging`, { method: 'DELETE', key }),
      404,
      'NOT_FOUND',
    );
  });

  test('alias names are checked; other accounts, anonymous callers and foreign versions are refused', async () => {
    const mine = assertPublished(await publish(t, { 'index.html': '<p>mine</p>' }, { key }));
    const theirs = assertPublished(await publish(t, { 'index.html': '<p>theirs</p>' }, { key: otherKey }));
    const putAlias = (slug: string, name: string, versionId: string, k?: string) =>
      t.api(`/api/v1/publish/${slug}/aliases/${name}`, {
        method: 'PUT',
        ...(k === undefined ? {} : { key: k }),
        body: { versionId },
      });
    for (const name of ['Staging', '1abc', 'a--b', 'abc-', '-abc', 'a_b', 'a'.repeat(31), '0123456789']) {
      assertError(
        await putAlias(mine.slug, encodeURIComponent(name), mine.versionId, key),
        400,
        'INVALID_REQUEST',
      );
    }
    assert.equal((await putAlias(mine.slug, 'a', mine.versionId, key)).status, 200, 'one letter is a name');
    assert.equal((await putAlias(mine.slug, 'a'.repeat(30), mine.versionId, key)).status, 200);

    // Another account's site is a 404 on every alias endpoint, as the other site endpoints answer.
    assertError(await putAlias(theirs.slug, 'mine-now', mine.versionId, key), 404, 'NOT_FOUND');
    assertError(await t.api(`/api/v1/publish/${theirs.slug}/aliases`, { key }), 404, 'NOT_FOUND');
    assertError(
      await t.api(`/api/v1/publish/${mine.slug}/aliases/a`, { method: 'DELETE', key: otherKey }),
      404,
      'NOT_FOUND',
    );
    assertError(await putAlias(mine.slug, 'anon', mine.versionId), 401, 'UNAUTHORIZED');
    // A version of another site cannot be aliased here.
    assertError(await putAlias(mine.slug, 'stolen', theirs.versionId, key), 400, 'INVALID_REQUEST');
    assert.equal((await get(`${mine.slug}--stolen`)).status, 404);

    // Finalize's alias: checked before anything is finalized; anonymous sites have none.
    const bad = await publishVersion(mine.slug, { 'index.html': '<p>x</p>' }, { alias: 'Bad Name' });
    assertError(bad.finalize, 400, 'INVALID_REQUEST');
    assert.equal((await get(mine.slug)).text, '<p>mine</p>', 'nothing went live');
    const anon = await publish(t, { 'index.html': '<p>anon</p>' }, { finalize: false });
    const anonFin = await t.api(`/api/v1/publish/${anon.slug}/finalize`, {
      method: 'POST',
      body: { versionId: anon.versionId, alias: 'staging' },
    });
    assertError(anonFin, 400, 'INVALID_REQUEST');
    assertError(
      await t.api(`/api/v1/publish/${mine.slug}/finalize`, {
        method: 'POST',
        key,
        body: { versionId: mine.versionId, live: 'no' },
      }),
      400,
      'INVALID_REQUEST',
    );
  });

  test('a deploy token sets aliases of its own site only, and cannot list or delete them', async () => {
    const mine = assertPublished(await publish(t, { 'index.html': '<p>ci</p>' }, { key }));
    const sibling = assertPublished(await publish(t, { 'index.html': '<p>sibling</p>' }, { key }));
    const created = await t.api(`/api/v1/publish/${mine.slug}/tokens`, {
      method: 'POST',
      key,
      body: { name: 'ci' },
    });
    assert.equal(created.status, 201, created.text);
    const token = created.body.token as string;
    const set = await t.api(`/api/v1/publish/${mine.slug}/aliases/pr-7`, {
      method: 'PUT',
      key: token,
      body: { versionId: mine.versionId },
    });
    assert.equal(set.status, 200, set.text);
    assert.equal((await get(`${mine.slug}--pr-7`)).text, '<p>ci</p>');
    // Another site of the same owner, and the other alias endpoints, are outside the token's scope.
    assertError(
      await t.api(`/api/v1/publish/${sibling.slug}/aliases/pr-7`, {
        method: 'PUT',
        key: token,
        body: { versionId: sibling.versionId },
      }),
      403,
      'FORBIDDEN',
    );
    assertError(await t.api(`/api/v1/publish/${mine.slug}/aliases`, { key: token }), 403, 'FORBIDDEN');
    assertError(
      await t.api(`/api/v1/publish/${mine.slug}/aliases/pr-7`, { method: 'DELETE', key: token }),
      403,
      'FORBIDDEN',
    );
    assert.equal((await get(`${mine.slug}--pr-7`)).status, 200);
  });

  test('preview and alias hosts follow the password, expiry and deletion; the TLS ask and the proxy Origin check take them', async () => {
    const one = assertPublished(await publish(t, { 'index.html': '<p>guarded</p>' }, { key }));
    const slug = one.slug;
    const label = previewOf(slug, one.versionId);
    const put = await t.api(`/api/v1/publish/${slug}/aliases/review`, {
      method: 'PUT',
      key,
      body: { versionId: one.versionId },
    });
    assert.equal(put.status, 200);
    const ask = async (name: string) =>
      (await fetch(`${t.url}/internal/tls-ask?domain=${encodeURIComponent(`${name}.localhost`)}`)).status;
    assert.equal(await ask(label), 200);
    assert.equal(await ask(`${slug}--review`), 200);
    assert.equal(await ask(`${slug}--nothing`), 404);
    assert.equal(await ask(`${slug}--0000000000`), 404);

    // The proxy takes calls from a preview page like from the site's own pages (400: origin taken, bad body).
    const proxyFrom = (origin: string) =>
      t.api(`/api/v1/proxy/${slug}`, { method: 'POST', headers: { origin }, body: { url: 'ftp://x' } });
    assert.equal((await proxyFrom(`http://${host(label)}`)).status, 400);
    assert.equal((await proxyFrom(`http://${host(`${slug}--review`)}`)).status, 400);
    assert.equal((await proxyFrom(`http://${host(`${slug}--nothing`)}`)).status, 403);

    // Password: the gate answers on the preview host, whose session cookie is its own (host-only).
    const pw = await t.api(`/api/v1/publish/${slug}/metadata`, {
      method: 'PATCH',
      key,
      body: { password: 'open sesame' },
    });
    assert.equal(pw.status, 200, pw.text);
    for (const name of [label, `${slug}--review`]) {
      const gated = await get(name);
      assert.equal(gated.status, 401, name);
      assert.match(gated.text, /password/i);
      assert.equal(gated.header('x-robots-tag'), 'noindex');
    }
    const login = await rawRequest(t.port, {
      host: host(label),
      path: '/',
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'password=open+sesame',
    });
    assert.equal(login.status, 303);
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    assert.doesNotMatch(String(login.headers['set-cookie']), /domain=/i, 'host-only cookie');
    const opened = await get(label, '/', { cookie });
    assert.equal(opened.status, 200);
    assert.equal(opened.text, '<p>guarded</p>');
    assert.match(String(opened.header('cache-control')), /private/);
    await t.api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', key, body: { password: null } });
    assert.equal((await get(`${slug}--review`)).status, 200);

    // Expiry: 410 at every host of the site.
    await t.api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', key, body: { ttlSeconds: 60 } });
    t.clock.advance(61_000);
    for (const name of [slug, label, `${slug}--review`]) assert.equal((await get(name)).status, 410, name);
    await t.api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', key, body: { ttlSeconds: null } });
    assert.equal((await get(label)).status, 200);

    // Deletion: 404 at every host, no certificate, no proxy origin.
    assert.equal((await t.api(`/api/v1/publish/${slug}`, { method: 'DELETE', key })).status, 200);
    for (const name of [slug, label, `${slug}--review`]) {
      assert.equal((await get(name)).status, 404, name);
      assert.equal(await ask(name), 404, name);
    }
  });
});

// Two nodes on one database (the scale-out services: PostgreSQL, S3, Redis), started once for the scale-out set.
describe('previews and aliases on two nodes', { skip: TEST_BACKEND !== 'scaleout', timeout: 120_000 }, () => {
  let cluster: Cluster;
  let a: ServiceNode;
  let b: ServiceNode;
  before(async () => {
    cluster = await startCluster({ env: { RATE_LIMIT_FREE: '100000' } });
    [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
  });
  after(() => cluster?.dispose());

  test('an alias moved on A is served moved by B at once; a delete on A ends B’s previews', async () => {
    const key = await signInOn(a, 'two-node-previews@example.com');
    const fromB = (label: string) => rawRequest(b.port, { host: `${label}.localhost:${b.port}`, path: '/' });
    const slug = await publishOn(a, key, { 'index.html': '<p>one</p>' });
    const pending = await createVersion(a, key, { 'index.html': '<p>two</p>' }, slug);
    assert.equal(await uploadFile(pending, 'index.html', '<p>two</p>'), 200);
    const fin = await postJson(
      a,
      `/api/v1/publish/${slug}/finalize`,
      { versionId: pending.versionId, live: false, alias: 'staging' },
      key,
    );
    assert.equal(fin.status, 200, await fin.clone().text());
    const label = `${slug}--${versionLabel(pending.versionId)}`;
    assert.equal((await fromB(label)).body.toString(), '<p>two</p>');
    assert.equal((await fromB(`${slug}--staging`)).body.toString(), '<p>two</p>');
    assert.equal((await fromB(slug)).body.toString(), '<p>one</p>');

    // B has the alias cached; moving it on A is what B serves on the very next request.
    const versions = (await (
      await fetch(`${a.url}/api/v1/publish/${slug}/versions`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { versions: Array<{ versionId: string; current: boolean }> };
    const live = versions.versions.find((v) => v.current)!.versionId;
    const move = await fetch(`${a.url}/api/v1/publish/${slug}/aliases/staging`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ versionId: live }),
    });
    assert.equal(move.status, 200);
    assert.equal((await fromB(`${slug}--staging`)).body.toString(), '<p>one</p>', 'moved on B at once');

    const del = await fetch(`${a.url}/api/v1/publish/${slug}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(del.status, 200);
    for (const name of [label, `${slug}--staging`]) assert.equal((await fromB(name)).status, 404, name);
  });
});
