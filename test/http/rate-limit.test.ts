// Rate limits (spec "Rate limits", CONTRACT "Rate limits"): hour windows, headers on every API answer.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawRequest, signIn, startTestApp } from '../helpers/app.js';

const HOUR_MS = 3_600_000;
/** A counted anonymous GET (404: no such route; /api/openapi.json is not counted). */
const COUNTED = '/api/v1/nothing-here';
const nextTopOfHourS = (nowMs: number) => (Math.floor(nowMs / HOUR_MS) + 1) * 3600;

describe('rate limits', () => {
  test('headers on a success and on error answers (404, 401, 400)', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '50' });
    try {
      const answers = [
        await t.api('/api/v1/publish', {
          method: 'POST',
          body: { files: [{ path: 'index.html', size: 5, contentType: 'text/html' }] },
        }),
        await t.api('/api/v1/nothing-here'),
        await t.api('/api/v1/account'),
        await t.api('/api/auth/agent/request-code', {
          method: 'POST',
          body: '{nope',
          headers: { 'content-type': 'application/json' },
        }),
      ];
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 404, 401, 400],
      );
      answers.forEach((a, i) => {
        assert.equal(a.headers.get('x-ratelimit-limit'), '50');
        assert.equal(a.headers.get('x-ratelimit-remaining'), String(50 - 1 - i));
        assert.equal(a.headers.get('x-ratelimit-reset'), String(nextTopOfHourS(t.clock.now())));
      });
    } finally {
      await t.close();
    }
  });

  test('the 6th anonymous request in a window answers 429 RATE_LIMITED with Retry-After', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '5' });
    try {
      for (let i = 0; i < 5; i++) assert.equal((await t.api(COUNTED)).status, 404);
      const res = await t.api(COUNTED);
      assert.equal(res.status, 429);
      assert.equal(res.body.code, 'RATE_LIMITED');
      assert.equal(res.body.status, 429);
      assert.match(res.body.error, /try again later/i);
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(res.headers.get('x-ratelimit-limit'), '5');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 3600);
      // The seconds left to the top of the hour, read after the answer: a second may have passed since.
      const left = Math.ceil((nextTopOfHourS(t.clock.now()) * 1000 - t.clock.now()) / 1000);
      assert.ok(retryAfter === left || retryAfter === left + 1, `Retry-After ${retryAfter}, ${left} s left`);
      // Exhausted anonymous window: 429 even with a bad key (the limit is checked before the key).
      const bad = await t.api('/api/v1/account', { key: `svc_live_${'1'.repeat(32)}` });
      assert.equal(bad.status, 429);
    } finally {
      await t.close();
    }
  });

  test('a spent window cannot be dodged by spelling the path differently (percent-encoding, absolute form, //)', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '2' });
    try {
      const manifest = JSON.stringify({ files: [{ path: 'index.html', size: 5, contentType: 'text/html' }] });
      const create = (path: string) =>
        rawRequest(t.port, {
          host: `localhost:${t.port}`,
          path,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: manifest,
        });
      for (let i = 0; i < 2; i++) assert.equal((await create('/api/v1/publish')).status, 201);
      for (const path of [
        '/api/v1/publish',
        '/%61pi/v1/publish',
        '/%61%70%69/v1/publish',
        `http://localhost:${t.port}/api/v1/publish`,
        `http://localhost:${t.port}/%61pi/v1/publish`,
      ]) {
        const res = await create(path);
        assert.ok(res.status === 429 || res.status >= 400, `${path}: ${res.status} ${res.body}`);
        assert.notEqual(res.status, 201, `${path} created a site past the window`);
      }
      const sites = await t.ctx.db.kysely.selectFrom('sites').select('slug').execute();
      assert.equal(sites.length, 2);
    } finally {
      await t.close();
    }
  });

  test('X-RateLimit-Reset is the next top of the hour and the window rolls over (moved clock)', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '2' });
    try {
      // Park the clock 10 s before a top of the hour.
      const top = (Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS;
      t.clock.set(top - 10_000);
      await t.api(COUNTED);
      const second = await t.api(COUNTED);
      assert.equal(second.headers.get('x-ratelimit-reset'), String(top / 1000));
      assert.equal((await t.api(COUNTED)).status, 429);
      t.clock.set(top + 1);
      const fresh = await t.api(COUNTED);
      assert.equal(fresh.status, 404);
      assert.equal(fresh.headers.get('x-ratelimit-remaining'), '1');
      assert.equal(fresh.headers.get('x-ratelimit-reset'), String(top / 1000 + 3600));
    } finally {
      await t.close();
    }
  });

  test('50 concurrent requests against a limit of 10 admit exactly 10', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '10' });
    try {
      const results = await Promise.all(Array.from({ length: 50 }, () => t.api(COUNTED)));
      const statuses = results.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 404).length, 10);
      assert.equal(statuses.filter((s) => s === 429).length, 40);
    } finally {
      await t.close();
    }
  });

  test('signed-in callers are counted per account with their plan limit', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '100', RATE_LIMIT_FREE: '3' });
    try {
      const key = await signIn(t, 'counted@example.com');
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await t.api('/api/v1/account', { key }));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 429],
      );
      assert.equal(answers[0]!.headers.get('x-ratelimit-limit'), '3');
      // The anonymous window of the same IP is separate.
      const anon = await t.api(COUNTED);
      assert.equal(anon.status, 404);
      assert.equal(anon.headers.get('x-ratelimit-limit'), '100');
    } finally {
      await t.close();
    }
  });

  test('TRUST_PROXY=true counts clients by X-Forwarded-For; false ignores it', async () => {
    for (const trust of [true, false]) {
      const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '1', TRUST_PROXY: String(trust) });
      try {
        const a = await t.api(COUNTED, { headers: { 'x-forwarded-for': '203.0.113.1' } });
        const b = await t.api(COUNTED, { headers: { 'x-forwarded-for': '203.0.113.2' } });
        assert.equal(a.status, 404);
        assert.equal(b.status, trust ? 404 : 429);
      } finally {
        await t.close();
      }
    }
  });

  // Issue 19 item 4: the leftmost X-Forwarded-For entry is whatever the client wrote; a trusted proxy
  // appends the address it saw on the right. The test connects from 127.0.0.1, standing in for that proxy.
  for (const trust of ['true', '1', '127.0.0.1', '10.0.0.0/8,127.0.0.0/8']) {
    test(`TRUST_PROXY=${trust}: rotating a forged leftmost X-Forwarded-For entry does not open new windows`, async () => {
      const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '3', TRUST_PROXY: trust });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const res = await t.api(COUNTED, {
            headers: { 'x-forwarded-for': `192.0.2.${i + 1}, 198.51.100.7` },
          });
          statuses.push(res.status);
        }
        assert.deepEqual(statuses, [404, 404, 404, 429, 429, 429]);
        // Another client behind the same proxy has its own window.
        const other = await t.api(COUNTED, { headers: { 'x-forwarded-for': '198.51.100.8' } });
        assert.equal(other.status, 404);
      } finally {
        await t.close();
      }
    });
  }

  test('TRUST_PROXY naming other proxies: a request from elsewhere is counted by its own address', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '2', TRUST_PROXY: '10.0.0.0/8' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await t.api(COUNTED, {
          headers: { 'x-forwarded-for': `198.51.100.${i + 1}` },
        });
        statuses.push(res.status);
      }
      assert.deepEqual(statuses, [404, 404, 429], '127.0.0.1 is no trusted proxy: its header is ignored');
    } finally {
      await t.close();
    }
  });

  test('IPv6 clients are counted by their /64: rotating addresses inside it does not open new windows', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '2', TRUST_PROXY: '1' });
    try {
      const statuses: number[] = [];
      for (const client of ['2001:db8:1:2::1', '2001:db8:1:2:aaaa::7', '2001:db8:1:2:ffff:ffff:ffff:ffff']) {
        statuses.push((await t.api(COUNTED, { headers: { 'x-forwarded-for': client } })).status);
      }
      assert.deepEqual(statuses, [404, 404, 429]);
      const otherNetwork = await t.api(COUNTED, {
        headers: { 'x-forwarded-for': '2001:db8:1:3::1' },
      });
      assert.equal(otherNetwork.status, 404);
    } finally {
      await t.close();
    }
  });

  // Issue 21 item 0: one /docs visit and a site's CORS preflights spent a new user's anonymous window.
  test('GET /api/openapi.json and OPTIONS preflights are not counted and carry no window headers', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '5' });
    try {
      for (let i = 0; i < 8; i++) {
        const doc = await t.api('/api/openapi.json');
        assert.equal(doc.status, 200);
        assert.equal(doc.headers.get('x-ratelimit-limit'), null);
      }
      for (const path of ['/api/v1/proxy/some-site', '/api/v1/publish', '/api/auth/agent/request-code']) {
        for (let i = 0; i < 3; i++) {
          const pre = await t.api(path, {
            method: 'OPTIONS',
            headers: {
              origin: 'http://some-site.localhost',
              'access-control-request-method': 'POST',
              'access-control-request-headers': 'content-type',
            },
          });
          assert.notEqual(pre.status, 429, `${path}: ${pre.text}`);
          assert.equal(pre.headers.get('x-ratelimit-limit'), null, path);
        }
      }
      const signInCall = await t.api('/api/auth/agent/request-code', {
        method: 'POST',
        body: { email: 'new-user@example.com' },
      });
      assert.equal(signInCall.headers.get('x-ratelimit-remaining'), '4');
    } finally {
      await t.close();
    }
  });

  test('/docs keeps loading once the anonymous window is spent (its definition fetch answers 200)', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '2' });
    try {
      for (let i = 0; i < 3; i++) await t.api(COUNTED);
      assert.equal((await t.api(COUNTED)).status, 429);
      assert.equal((await t.api('/docs')).status, 200);
      const doc = await t.api('/api/openapi.json');
      assert.equal(doc.status, 200);
      assert.equal(doc.body.openapi.startsWith('3.'), true);
    } finally {
      await t.close();
    }
  });

  test('web pages and ops endpoints are not counted', async () => {
    const t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '1' });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await t.api('/healthz');
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('x-ratelimit-limit'), null);
      }
      assert.equal((await t.api(COUNTED)).status, 404);
    } finally {
      await t.close();
    }
  });
});
