// Password-protected sites: the 401 form on every path, the signed host-only session cookie, sessions
// ending on password change, cookies not crossing sites, and the wrong-guess limit.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PASSWORD_ATTEMPT_WINDOW_MS } from '../../src/serve/password-gate.js';
import { clearOfWindowEdge, startTestApp, type TestApp } from '../helpers/app.js';
import { seedSite, setPassword, siteHost } from '../helpers/seed.js';
import { type SiteResponse, siteRequest } from './site-client.js';

const form = (password: string) => `password=${encodeURIComponent(password)}`;
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

/** `name=value` of the Set-Cookie of a response. */
function cookieOf(res: SiteResponse): string {
  const setCookie = res.headers['set-cookie'];
  const first = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  assert.ok(first, 'Set-Cookie expected');
  return first.split(';', 1)[0]!;
}

describe('password gate', () => {
  let t: TestApp;
  let slug: string;
  const password = 'correct horse battery staple';

  before(async () => {
    t = await startTestApp();
    ({ slug } = await seedSite(t.ctx, {
      password,
      files: { 'index.html': 'secret home', 'docs/a.txt': 'secret doc', 'logo.png': Buffer.alloc(300, 1) },
    }));
  });
  after(() => t.close());

  async function signIn(site: string, pw: string, path = '/'): Promise<SiteResponse> {
    return siteRequest(t, site, path, { method: 'POST', headers: FORM_TYPE, body: form(pw) });
  }

  test('every path answers 401 with the password form and none of the files', async () => {
    for (const path of ['/', '/docs/a.txt', '/logo.png', '/missing', '/_redirects']) {
      const res = await siteRequest(t, slug, path);
      assert.equal(res.status, 401, path);
      assert.match(res.text, /<form method="post">/);
      assert.match(res.text, /type="password"/);
      assert.doesNotMatch(res.text, /secret/);
      assert.equal(res.header('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.header('cache-control'), 'no-store');
      assert.ok(res.header('www-authenticate'));
    }
    const head = await siteRequest(t, slug, '/', { method: 'HEAD' });
    assert.equal(head.status, 401);
    assert.equal(head.body.length, 0);
  });

  test('a wrong password shows the form again with 401 and a message', async () => {
    const res = await signIn(slug, 'wrong');
    assert.equal(res.status, 401);
    assert.match(res.text, /Wrong password/);
    assert.equal(res.headers['set-cookie'], undefined);
  });

  test('the right password sets a host-only HttpOnly SameSite=Lax cookie and 303s back', async () => {
    const res = await signIn(slug, password, '/docs/a.txt?x=1');
    assert.equal(res.status, 303);
    assert.equal(res.header('location'), '/docs/a.txt?x=1');
    const setCookie = String(res.headers['set-cookie']);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    assert.match(setCookie, /Path=\//);
    assert.doesNotMatch(setCookie, /Domain=/i, 'host-only');
    assert.doesNotMatch(setCookie, /Secure/, 'plain http BASE_URL');

    const cookie = cookieOf(res);
    const page = await siteRequest(t, slug, '/docs/a.txt', { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.equal(page.text, 'secret doc');
    // Files of a protected site must stay out of shared caches.
    assert.match(page.header('cache-control') ?? '', /^private/);
    const home = await siteRequest(t, slug, '/', { headers: { cookie: `other=1; ${cookie}; more=2` } });
    assert.equal(home.text, 'secret home');
  });

  test('a forged or tampered cookie is refused', async () => {
    const cookie = cookieOf(await signIn(slug, password));
    const [name, value] = cookie.split('=') as [string, string];
    const tampered = `${name}=${value.slice(0, -2)}xx`;
    assert.equal((await siteRequest(t, slug, '/', { headers: { cookie: tampered } })).status, 401);
    const later = `${name}=zzzzzzzz.${value.split('.')[1]}`;
    assert.equal((await siteRequest(t, slug, '/', { headers: { cookie: later } })).status, 401);
  });

  test('a cookie of site A does not open site B (same password, even under B\u2019s cookie name)', async () => {
    const { slug: other } = await seedSite(t.ctx, { password, files: { 'index.html': 'other secret' } });
    const cookieA = cookieOf(await signIn(slug, password));
    const value = cookieA.split('=')[1]!;
    assert.equal((await siteRequest(t, other, '/', { headers: { cookie: cookieA } })).status, 401);
    const renamed = `slipway_pw_${other}=${value}`;
    const res = await siteRequest(t, other, '/', { headers: { cookie: renamed } });
    assert.equal(res.status, 401);
    assert.doesNotMatch(res.text, /other secret/);
  });

  test('changing the password ends existing sessions; removing it opens the site', async () => {
    const { slug: s } = await seedSite(t.ctx, { password: 'first', files: { 'index.html': 'rotating' } });
    const cookie = cookieOf(await signIn(s, 'first'));
    assert.equal((await siteRequest(t, s, '/', { headers: { cookie } })).status, 200);
    await setPassword(t.ctx, s, 'second');
    assert.equal((await siteRequest(t, s, '/', { headers: { cookie } })).status, 401);
    // Even setting the same password again (new salt) ends the session.
    const cookie2 = cookieOf(await signIn(s, 'second'));
    await setPassword(t.ctx, s, 'second');
    assert.equal((await siteRequest(t, s, '/', { headers: { cookie: cookie2 } })).status, 401);
    await setPassword(t.ctx, s, null);
    const open = await siteRequest(t, s, '/');
    assert.equal(open.status, 200);
    assert.equal(open.text, 'rotating');
  });

  test('a session expires after its lifetime', async () => {
    const cookie = cookieOf(await signIn(slug, password));
    t.clock.advance(8 * 24 * 3600 * 1000);
    try {
      assert.equal((await siteRequest(t, slug, '/', { headers: { cookie } })).status, 401);
    } finally {
      t.clock.advance(-8 * 24 * 3600 * 1000);
    }
  });

  test('wrong guesses are limited per IP and site: 429 after 10 attempts', async () => {
    const { slug: s } = await seedSite(t.ctx, { password: 'p4ss', files: { 'index.html': 'limited' } });
    clearOfWindowEdge(t.clock, PASSWORD_ATTEMPT_WINDOW_MS, 60_000);
    for (let i = 0; i < 10; i++) assert.equal((await signIn(s, `guess-${i}`)).status, 401);
    const blocked = await signIn(s, 'p4ss');
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.header('retry-after')) > 0);
    assert.equal(blocked.headers['set-cookie'], undefined);
    // Another site is not affected.
    assert.equal((await signIn(slug, password)).status, 303);
    // A new window allows guesses again.
    t.clock.advance(15 * 60 * 1000);
    try {
      assert.equal((await signIn(s, 'p4ss')).status, 303);
    } finally {
      t.clock.advance(-15 * 60 * 1000);
    }
  });

  test('the form rejects other content types and oversized bodies', async () => {
    const { slug } = await seedSite(t.ctx, { password, files: { 'index.html': 'x' } });
    const json = await siteRequest(t, slug, '/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password }),
    });
    assert.equal(json.status, 415);
    const huge = await siteRequest(t, slug, '/', {
      method: 'POST',
      headers: FORM_TYPE,
      body: `password=${'x'.repeat(10_000)}`,
    });
    assert.equal(huge.status, 413);
  });

  test('after sign-in the redirect never leaves the site', async () => {
    const { slug } = await seedSite(t.ctx, { password, files: { 'index.html': 'x' } });
    const res = await signIn(slug, password, '//evil.example/path');
    assert.equal(res.status, 303);
    assert.equal(res.header('location'), '/');
  });

  test('the password never appears in the logs', async () => {
    const { slug } = await seedSite(t.ctx, { password, files: { 'index.html': 'x' } });
    await signIn(slug, 'Hunter2-unique-wrong');
    await signIn(slug, password);
    const logs = t.logs.join('\n');
    assert.doesNotMatch(logs, /Hunter2-unique-wrong/);
    assert.doesNotMatch(logs, /correct horse/);
  });
});

// Issue 19 item 4: behind one trusted hop (the test connects from 127.0.0.1 as the proxy) the address is the
// one the proxy appended, not the leftmost entry the client wrote.
describe('password gate behind a trusted proxy', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ TRUST_PROXY: '1' });
  });
  after(() => t.close());

  const guess = (slug: string, pw: string, forwardedFor: string) =>
    siteRequest(t, slug, '/', {
      method: 'POST',
      headers: { ...FORM_TYPE, 'x-forwarded-for': forwardedFor },
      body: form(pw),
    });

  test('rotating a forged leftmost X-Forwarded-For entry does not escape the wrong-guess limit', async () => {
    const { slug } = await seedSite(t.ctx, { password: 'p4ss', files: { 'index.html': 'locked' } });
    clearOfWindowEdge(t.clock, PASSWORD_ATTEMPT_WINDOW_MS, 60_000);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++)
      statuses.push((await guess(slug, `guess-${i}`, `192.0.2.${i}, 198.51.100.9`)).status);
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.deepEqual(statuses.slice(10), Array(20).fill(429));
    // Another visitor behind the same proxy is not locked out.
    assert.equal((await guess(slug, 'p4ss', '198.51.100.10')).status, 303);
  });
});

// Issue 19 item 6: a form body trickling in holds nothing for long (core/body-pace.ts; the app's option
// shortens the bound, whose default is 30 s).
describe('site form bodies under the pace rule', () => {
  const STALL_MS = 2000;
  let t: TestApp;
  before(async () => {
    t = await startTestApp({}, { bodyPace: { stallMs: STALL_MS, minBytesPerS: 1024 } });
  });
  after(() => t.close());

  /** POSTs `body` to `host` one byte every 0.5 s; what the server sent and when it closed the connection. */
  async function trickledPost(host: string, body: string) {
    const socket = connect(t.port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
    });
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    socket.write(
      `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    const started = Date.now();
    let sent = 0;
    const trickle = setInterval(() => socket.write(body.slice(sent, ++sent)), 500);
    const limit = new Promise<null>((resolve) => setTimeout(() => resolve(null), STALL_MS + 5000));
    try {
      const closedAt = await Promise.race([closed, limit]);
      return { received, heldMs: closedAt === null ? null : closedAt - started };
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  }

  test('a trickled password form is answered 408 and its connection closed within the bound', async () => {
    const { slug } = await seedSite(t.ctx, { password: 'pw', files: { 'index.html': 'x' } });
    const res = await trickledPost(siteHost(slug, t.port), form('a long enough wrong password'));
    assert.ok(res.heldMs !== null && res.heldMs < STALL_MS + 2000, `held for ${res.heldMs} ms`);
    assert.match(res.received, /^HTTP\/1\.1 408 /);
    assert.match(res.received, /\r\nconnection: close\r\n/i);
  });

  test('a trickled body the site refuses unread (405) loses its connection within the bound', async () => {
    const { slug } = await seedSite(t.ctx, { files: { 'index.html': 'open' } });
    const res = await trickledPost(siteHost(slug, t.port), 'x'.repeat(100));
    assert.match(res.received, /^HTTP\/1\.1 405 /);
    assert.ok(res.heldMs !== null && res.heldMs < STALL_MS + 2000, `held for ${res.heldMs} ms`);
  });
});

describe('password gate on https', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ BASE_URL: 'https://slipway.test' });
  });
  after(() => t.close());

  test('the session cookie is Secure when BASE_URL is https', async () => {
    const { slug } = await seedSite(t.ctx, { password: 'pw', files: { 'index.html': 'x' } });
    const res = await siteRequest(t, slug, '/', {
      method: 'POST',
      headers: FORM_TYPE,
      body: form('pw'),
    });
    assert.equal(res.status, 303);
    assert.match(String(res.headers['set-cookie']), /; Secure/);
  });
});
