// The pages' form bodies (src/http/pages/page.ts): one urlencoded parser for the pages' scope only, its
// limits (16 KiB; the billing forms 4 KiB), a repeated field read as its last value, and the pace rule
// every body keeps. The API's routes take JSON only: a form body there is 415, as on every other route.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, csrfOf } from '../../helpers/web.js';

const KIB = 1024;

/** A sign-in form's fields with a valid CSRF token (the browser keeps the nonce cookie). */
async function signInForm(b: Browser): Promise<Record<string, string>> {
  const page = await b.request('/login');
  assert.equal(page.status, 200);
  return { _csrf: csrfOf(page.text), next: '/dashboard' };
}

const formPost = (t: TestApp, path: string, body: string) =>
  fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });

describe('page forms', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a page form over 16 KiB is refused 413 before its handler; one under the limit is read', async () => {
    const b = new Browser(t);
    const fields = await signInForm(b);
    const over = await b.request('/login', {
      method: 'POST',
      form: { ...fields, email: 'big@example.com', pad: 'x'.repeat(16 * KIB) },
    });
    assert.equal(over.status, 413);
    assert.equal(JSON.parse(over.text).code, 'INVALID_REQUEST');
    const under = await b.request('/login', {
      method: 'POST',
      form: { ...fields, email: 'big@example.com', pad: 'x'.repeat(15 * KIB) },
    });
    assert.equal(under.status, 200, under.text);
    assert.match(under.text, /Check your email/);
  });

  test('a repeated field is read as its last value, never as a list', async () => {
    const b = new Browser(t);
    const body = new URLSearchParams({ ...(await signInForm(b)), email: 'first@example.com' });
    body.append('email', 'last@example.com');
    const res = await fetch(`${t.url}/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      body: body.toString(),
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(text, /We sent a code to <strong>last@example\.com<\/strong>/);
  });

  test('the billing forms keep their 4 KiB limit', async () => {
    const over = await formPost(t, '/billing/portal/cancel', `token=x&pad=${'x'.repeat(4 * KIB)}`);
    assert.equal(over.status, 413);
    const under = await formPost(t, '/billing/portal/cancel', `token=x&pad=${'x'.repeat(3 * KIB)}`);
    assert.equal(under.status, 403, 'read, and the unknown token says the link expired');
    assert.match(await under.text(), /Link expired/);
  });

  test('the API takes JSON only: a form body to an API route is 415, the form parser is the pages’ alone', async () => {
    const key = await signIn(t, 'form-to-api@example.com');
    for (const path of ['/api/billing/checkout', '/api/billing/portal', '/api/v1/publish']) {
      const res = await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'files=index.html',
      });
      assert.equal(res.status, 415, `${path}: ${await res.text()}`);
    }
  });
});

describe('page forms under the pace rule', () => {
  const STALL_MS = 2000;
  let t: TestApp;
  before(async () => {
    t = await startTestApp({}, { bodyPace: { stallMs: STALL_MS, minBytesPerS: 1024 } });
  });
  after(() => t.close());

  test('a sign-in form trickling 1 byte every 0.5 s is answered 408 and its connection closed', async () => {
    const socket = connect(t.port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    let closedAt: number | null = null;
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
    });
    socket.on('close', () => {
      closedAt = Date.now();
    });
    const body = 'email=slow%40example.com&_csrf=x';
    socket.write(
      'POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    let sent = 0;
    const started = Date.now();
    const trickle = setInterval(() => socket.write(body.slice(sent, ++sent)), 500);
    try {
      const deadline = started + STALL_MS + 3000;
      while (closedAt === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(closedAt !== null, 'the server closed the connection');
      assert.ok(closedAt - started < STALL_MS + 2000, `closed after ${closedAt - started} ms`);
      assert.match(received, /^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });
});
