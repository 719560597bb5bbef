// GET /api/v1/account: every field of the spec's Account table with the right types.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';

describe('GET /api/v1/account', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('returns every Account field with the spec types on Free', async () => {
    const key = await signIn(t, 'acct@example.com');
    const res = await t.api('/api/v1/account', { key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      email: 'acct@example.com',
      plan: 'free',
      handle: null,
      usage: {
        sites: { used: 0, limit: 500 },
        storage: { used: '0 B', usedBytes: 0, limit: '200 MB', limitBytes: 209715200 },
      },
      limits: { maxFileSize: '200 MB', maxFileSizeBytes: 209715200, maxSites: 500, maxStorage: '200 MB' },
      createdAt: res.body.createdAt,
    });
    assert.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(res.body.createdAt) - t.clock.now()) < 60_000);
  });

  test('on Hobby, usage.sites.limit is the string "unlimited"', async () => {
    const key = await signIn(t, 'hobby@example.com');
    await t.ctx.db.kysely
      .updateTable('accounts')
      .set({ plan: 'hobby' })
      .where('email', '=', 'hobby@example.com')
      .execute();
    const res = await t.api('/api/v1/account', { key });
    assert.equal(res.status, 200);
    assert.equal(res.body.plan, 'hobby');
    assert.equal(res.body.usage.sites.limit, 'unlimited');
    assert.equal(typeof res.body.usage.storage.limitBytes, 'number');
    assert.equal(res.body.usage.storage.limit, '10 GB');
  });

  test('never returns key material', async () => {
    const key = await signIn(t, 'leak@example.com');
    const res = await t.api('/api/v1/account', { key });
    assert.ok(!res.text.includes(key.slice(9)));
    assert.ok(!/hash|api_?key/i.test(res.text));
  });

  for (const [name, headers] of [
    ['no Authorization header', {}],
    ['a malformed key', { authorization: 'Bearer nope' }],
    ['an unknown well-formed key', { authorization: `Bearer svc_live_${'0'.repeat(32)}` }],
    ['a non-Bearer scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
  ] as const) {
    test(`answers 401 UNAUTHORIZED with ${name}`, async () => {
      const res = await t.api('/api/v1/account', { headers: { ...headers } });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'UNAUTHORIZED');
      assert.equal(res.body.status, 401);
      assert.equal(typeof res.body.error, 'string');
    });
  }
});
