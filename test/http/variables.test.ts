// Site variables and the proxy host allowlist through real HTTP (spec "Site variables", "Proxy host
// allowlist"; CONTRACT "Variables, proxy hosts, proxy", "Identity, ownership and URLs").

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { signIn, startTestApp, TEST_BACKEND, type TestApp } from '../helpers/app.js';
import { assertPublished, publish } from '../helpers/publish.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function assertError(
  res: { status: number; body: unknown },
  status: number,
  code: string,
  mentions?: string,
) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
  if (mentions !== undefined)
    assert.ok(body.error.includes(mentions), `${body.error} should name ${mentions}`);
}

/** Every file under `dir`, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

describe('site variables', () => {
  let t: TestApp;
  let key: string;
  let other: string;
  let slug: string;

  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'vars@example.com');
    other = await signIn(t, 'someone-else@example.com');
    slug = assertPublished(await publish(t, { 'index.html': '<h1>vars</h1>' }, { key })).slug;
  });
  after(() => t.close());

  const vars = (path = '') => `/api/v1/publish/${slug}/variables${path}`;

  test('PUT /api/v1/publish/:slug/variables stores names; GET lists names and timestamps, never values', async () => {
    const put = await t.api(vars(), {
      method: 'PUT',
      key,
      body: { STRIPE_SECRET_KEY: 'sk_live_value_one_1234567890', OTHER_TOKEN: 'value-two' },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body, { ok: true, stored: ['STRIPE_SECRET_KEY', 'OTHER_TOKEN'] });

    const list = await t.api(vars(), { key });
    assert.equal(list.status, 200);
    const names = list.body.variables.map((v: { name: string }) => v.name).sort();
    assert.deepEqual(names, ['OTHER_TOKEN', 'STRIPE_SECRET_KEY']);
    for (const v of list.body.variables) {
      assert.deepEqual(Object.keys(v).sort(), ['createdAt', 'name', 'updatedAt']);
      assert.match(v.createdAt, ISO);
      assert.match(v.updatedAt, ISO);
    }
    assert.ok(!list.text.includes('sk_live_value_one'), 'a value was returned');
  });

  test('PUT replaces the named values and keeps the others; createdAt stays, updatedAt moves', async () => {
    const before = (await t.api(vars(), { key })).body.variables;
    const created = before.find((v: { name: string }) => v.name === 'OTHER_TOKEN').createdAt;
    t.clock.advance(5_000);
    const put = await t.api(vars(), { method: 'PUT', key, body: { OTHER_TOKEN: 'value-three' } });
    assert.deepEqual(put.body, { ok: true, stored: ['OTHER_TOKEN'] });
    const after = (await t.api(vars(), { key })).body.variables;
    assert.equal(after.length, 2, 'STRIPE_SECRET_KEY was kept');
    const changed = after.find((v: { name: string }) => v.name === 'OTHER_TOKEN');
    assert.equal(changed.createdAt, created);
    assert.ok(changed.updatedAt > created);
  });

  test('variable values are not readable in plain text in the database', async () => {
    const secret = 'plaintext-canary-Zq81vX03kPm2';
    await t.api(vars(), { method: 'PUT', key, body: { CANARY: secret } });
    const rows = await sql<{ row: string }>`select * from site_variables`.execute(t.ctx.db.kysely);
    assert.ok(rows.rows.length >= 3);
    assert.ok(!JSON.stringify(rows.rows).includes(secret), 'the value is stored in clear');
    if (TEST_BACKEND === 'embedded') {
      // The SQLite file, its WAL and everything else under DATA_DIR.
      const files = await filesUnder(t.dataDir);
      assert.ok(
        files.some((f) => /\.(db|sqlite)/.test(f)),
        `no SQLite file among ${files.join(', ')}`,
      );
      for (const file of files) {
        assert.ok(!(await readFile(file)).includes(Buffer.from(secret)), `${file} holds the value in clear`);
      }
    }
    assert.ok(!t.logs.join('\n').includes(secret), 'the value was logged');
  });

  test('PUT with an invalid entry answers 400 naming it and stores nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ '1ABC': 'x' }, '1ABC'],
      [{ 'BAD-NAME': 'x' }, 'BAD-NAME'],
      [{ _LEADING: 'x' }, '_LEADING'],
      [{ ['A'.repeat(65)]: 'x' }, 'AAAA'],
      [{ EMPTY_VALUE: '' }, 'EMPTY_VALUE'],
      [{ NUMBER_VALUE: 42 }, 'NUMBER_VALUE'],
      [{ NULL_VALUE: null }, 'NULL_VALUE'],
      [{ TOO_LONG: 'x'.repeat(8 * 1024 + 1) }, 'TOO_LONG'],
      [{ GOOD_ONE: 'fine', 'BAD NAME': 'x' }, 'BAD NAME'],
    ];
    for (const [body, named] of cases) {
      const res = await t.api(vars(), { method: 'PUT', key, body });
      assertError(res, 400, 'INVALID_REQUEST', named);
    }
    const names = (await t.api(vars(), { key })).body.variables.map((v: { name: string }) => v.name);
    assert.ok(!names.includes('GOOD_ONE'), 'a valid entry of a refused request was stored');
    assertError(await t.api(vars(), { method: 'PUT', key, body: {} }), 400, 'INVALID_REQUEST');
    assertError(await t.api(vars(), { method: 'PUT', key, body: ['A'] }), 400, 'INVALID_REQUEST');
    // An 8 KB value is still fine; a 64-character name too.
    const edge = await t.api(vars(), {
      method: 'PUT',
      key,
      body: { ['B'.repeat(64)]: 'y'.repeat(8 * 1024) },
    });
    assert.equal(edge.status, 200, edge.text);
  });

  test('a site holds at most 100 variables', async () => {
    const site = assertPublished(await publish(t, { 'a.txt': 'a' }, { key })).slug;
    const path = `/api/v1/publish/${site}/variables`;
    const batch = (from: number, n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${from + i}`, 'v']));
    assert.equal((await t.api(path, { method: 'PUT', key, body: batch(0, 99) })).status, 200);
    assertError(await t.api(path, { method: 'PUT', key, body: batch(99, 2) }), 400, 'INVALID_REQUEST', '100');
    assert.equal((await t.api(path, { key })).body.variables.length, 99, 'the refused request stored some');
    assert.equal((await t.api(path, { method: 'PUT', key, body: batch(99, 1) })).status, 200);
    // Replacing an existing name does not count twice.
    assert.equal((await t.api(path, { method: 'PUT', key, body: { V0: 'again' } })).status, 200);
  });

  test('DELETE /api/v1/publish/:slug/variables/:name removes one; an unknown name is 404', async () => {
    const del = await t.api(vars('/OTHER_TOKEN'), { method: 'DELETE', key });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { ok: true, deleted: 'OTHER_TOKEN' });
    assertError(await t.api(vars('/OTHER_TOKEN'), { method: 'DELETE', key }), 404, 'NOT_FOUND');
  });

  test('another account, no key or an unknown site gets what a missing site gets', async () => {
    assertError(await t.api(vars(), { key: other }), 404, 'NOT_FOUND');
    assertError(await t.api(vars(), { method: 'PUT', key: other, body: { X: 'y' } }), 404, 'NOT_FOUND');
    assertError(await t.api(vars('/CANARY'), { method: 'DELETE', key: other }), 404, 'NOT_FOUND');
    assertError(await t.api(vars()), 401, 'UNAUTHORIZED');
    assertError(await t.api('/api/v1/publish/no-such-site-zz/variables', { key }), 404, 'NOT_FOUND');
    const names = (await t.api(vars(), { key })).body.variables.map((v: { name: string }) => v.name);
    assert.ok(!names.includes('X'));
  });
});

describe('proxy host allowlist', () => {
  let t: TestApp;
  let key: string;
  let slug: string;

  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'hosts@example.com');
    slug = assertPublished(await publish(t, { 'index.html': '<h1>hosts</h1>' }, { key })).slug;
  });
  after(() => t.close());

  const hosts = (path = '') => `/api/v1/publish/${slug}/proxy-hosts${path}`;

  test('PUT /api/v1/publish/:slug/proxy-hosts stores exact hostnames, lowercased, IDN as punycode', async () => {
    const put = await t.api(hosts(), {
      method: 'PUT',
      key,
      body: { hosts: ['API.Stripe.com', 'bücher.example', 'api.openai.com.'] },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body, {
      ok: true,
      stored: ['api.stripe.com', 'xn--bcher-kva.example', 'api.openai.com'],
    });
    const list = await t.api(hosts(), { key });
    assert.deepEqual(
      list.body.hosts.map((h: { hostname: string }) => h.hostname),
      ['api.openai.com', 'api.stripe.com', 'xn--bcher-kva.example'],
    );
    for (const h of list.body.hosts) {
      assert.match(h.createdAt, ISO);
      assert.match(h.updatedAt, ISO);
    }
  });

  test('PUT refuses a wildcard, scheme, port, path or IP literal with 400 naming it, storing nothing', async () => {
    const bad = [
      '*.stripe.com',
      'https://api.stripe.com',
      'api.stripe.com:443',
      'api.stripe.com/v1',
      '127.0.0.1',
      '[::1]',
      '::1',
      '10.0.0.1',
      '0x7f.1',
      'user@api.stripe.com',
      'bad_host!.com',
      'a'.repeat(64) + '.com',
      '',
    ];
    for (const host of bad) {
      const res = await t.api(hosts(), { method: 'PUT', key, body: { hosts: ['fine.example.com', host] } });
      assertError(res, 400, 'INVALID_REQUEST', host === '' ? undefined : JSON.stringify(host).slice(1, 12));
    }
    assertError(await t.api(hosts(), { method: 'PUT', key, body: { hosts: [] } }), 400, 'INVALID_REQUEST');
    assertError(
      await t.api(hosts(), { method: 'PUT', key, body: { hosts: 'api.x.com' } }),
      400,
      'INVALID_REQUEST',
    );
    const names = (await t.api(hosts(), { key })).body.hosts.map((h: { hostname: string }) => h.hostname);
    assert.ok(!names.includes('fine.example.com'), 'a valid entry of a refused request was stored');
  });

  test('a site allows at most 50 hosts', async () => {
    // 3 stored + 47 = 50, the limit; one more is refused.
    const many = Array.from({ length: 47 }, (_, i) => `h${i}.example.com`);
    assert.equal((await t.api(hosts(), { method: 'PUT', key, body: { hosts: many } })).status, 200);
    assertError(
      await t.api(hosts(), { method: 'PUT', key, body: { hosts: ['one-more.example.com'] } }),
      400,
      'INVALID_REQUEST',
      '50',
    );
  });

  test('DELETE /api/v1/publish/:slug/proxy-hosts/:hostname removes one; an unknown host is 404', async () => {
    const del = await t.api(hosts('/bücher.example'), { method: 'DELETE', key });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { ok: true, deleted: 'xn--bcher-kva.example' });
    assertError(await t.api(hosts('/xn--bcher-kva.example'), { method: 'DELETE', key }), 404, 'NOT_FOUND');
  });

  test('another account gets 404 for the allowlist', async () => {
    const other = await signIn(t, 'not-the-owner@example.com');
    assertError(await t.api(hosts(), { key: other }), 404, 'NOT_FOUND');
    assertError(
      await t.api(hosts(), { method: 'PUT', key: other, body: { hosts: ['x.example.com'] } }),
      404,
      'NOT_FOUND',
    );
  });

  test('deleting the site deletes its variables and proxy hosts', async () => {
    await t.api(`/api/v1/publish/${slug}/variables`, { method: 'PUT', key, body: { GONE: 'soon' } });
    const del = await t.api(`/api/v1/publish/${slug}`, { method: 'DELETE', key });
    assert.equal(del.status, 200);
    const kysely = t.ctx.db.kysely;
    const vars = await kysely
      .selectFrom('site_variables')
      .select('name')
      .where('site_slug', '=', slug)
      .execute();
    const hostRows = await kysely
      .selectFrom('site_proxy_hosts')
      .select('hostname')
      .where('site_slug', '=', slug)
      .execute();
    assert.deepEqual(vars, []);
    assert.deepEqual(hostRows, []);
  });
});
