// The error model: every failure is {error, code, status} with status equal to the HTTP status.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';

function assertErrorBody(
  res: { status: number; body: Record<string, unknown>; headers: Headers },
  status: number,
  code: string,
) {
  assert.equal(res.status, status);
  assert.equal(res.body.code, code);
  assert.equal(res.body.status, status);
  assert.equal(typeof res.body.error, 'string');
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
}

describe('error model', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('answers of the API host are never sniffed into a page or framed (input echoed in a message stays data)', async () => {
    const key = await signIn(t, 'headers@example.com');
    const answers = {
      'an error quoting input': await t.api('/api/auth/agent/request-code', {
        method: 'POST',
        body: { email: '<script>alert(1)</script>' },
      }),
      'a 2xx JSON answer': await t.api('/api/v1/account', { key }),
      'an unknown API path': await t.api('/api/v1/<img src=x onerror=alert(1)>'),
      'the TLS ask': await t.api('/internal/tls-ask?domain=example.com'),
      'the OpenAPI document': await t.api('/api/openapi.json'),
    };
    for (const [label, res] of Object.entries(answers)) {
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', label);
      const csp = String(res.headers.get('content-security-policy'));
      assert.match(csp, /default-src 'none'/, `${label}: ${csp}`);
      assert.match(csp, /frame-ancestors 'none'/, label);
    }
  });

  test('malformed JSON answers 400 INVALID_REQUEST', async () => {
    const res = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: '{"email": ',
      headers: { 'content-type': 'application/json' },
    });
    assertErrorBody(res, 400, 'INVALID_REQUEST');
  });

  test('deeply nested JSON answers 400 INVALID_REQUEST', async () => {
    const res = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      headers: { 'content-type': 'application/json' },
    });
    assertErrorBody(res, 400, 'INVALID_REQUEST');
  });

  test('a __proto__ key answers 400 INVALID_REQUEST', async () => {
    const res = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: '{"email":"a@example.com","__proto__":{"x":1}}',
      headers: { 'content-type': 'application/json' },
    });
    assertErrorBody(res, 400, 'INVALID_REQUEST');
  });

  test('a wrong content type answers 415 with the error body', async () => {
    const res = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: 'email=a@example.com',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assertErrorBody(res, 415, 'INVALID_REQUEST');
  });

  test('a JSON body over 2 MB answers 413 INVALID_REQUEST', async () => {
    const res = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assertErrorBody(res, 413, 'INVALID_REQUEST');
  });

  test('an unknown route answers 404 NOT_FOUND as JSON', async () => {
    assertErrorBody(await t.api('/api/v1/does-not-exist'), 404, 'NOT_FOUND');
    assertErrorBody(await t.api('/nothing/here'), 404, 'NOT_FOUND');
  });

  test('a wrong method answers 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const res = await t.api('/api/auth/agent/request-code');
    assertErrorBody(res, 405, 'METHOD_NOT_ALLOWED');
    assert.equal(res.headers.get('allow'), 'POST');
  });

  test('responses carry an x-request-id that names the log line', async () => {
    const res = await t.api('/api/v1/does-not-exist');
    const id = res.headers.get('x-request-id');
    assert.match(id ?? '', /^req-[0-9a-f]{16}$/);
    assert.ok(t.logs.some((l) => l.includes(id!)));
  });

  test('an unexpected exception answers 500 INTERNAL_ERROR with no internals and is logged with the request id', async () => {
    const key = await signIn(t, 'boom@example.com');
    // Break the database under a running app: the next lookup throws inside the server.
    const kysely = t.ctx.db.kysely;
    const original = kysely.selectFrom.bind(kysely);
    kysely.selectFrom = (() => {
      throw new Error('SQLITE_IOERR: disk I/O error at /secret/path');
    }) as typeof kysely.selectFrom;
    try {
      const res = await t.api('/api/v1/account', { key });
      assertErrorBody(res, 500, 'INTERNAL_ERROR');
      assert.ok(!res.text.includes('SQLITE'), 'no internals in the body');
      assert.ok(!res.text.includes('/secret/path'));
      const id = res.headers.get('x-request-id')!;
      const line = t.logs.find((l) => l.includes(id) && l.includes('"level":50'));
      assert.ok(line, 'the 500 is logged as an error with the request id');
      assert.ok(line.includes('SQLITE_IOERR'), 'the log line has the cause');
    } finally {
      kysely.selectFrom = original;
    }
  });
});
