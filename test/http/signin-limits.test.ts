// Sign-in limits (issue 19): every way to ask for a code (the API's request-code, the web form, the CLI
// through the API) shares one window per client IP and one per address, and every way to try a code
// shares the attempt limits. Mail is counted where it arrives: a real SMTP peer.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type ReceivedMail, startSmtpServer } from '../helpers/smtp.js';
import { Browser, csrfOf } from '../helpers/web.js';

const HOUR_MS = 3_600_000;
/** Empty values fall back to the defaults (GENEROUS_LIMITS lifts them for the other test files). */
const DEFAULT_SIGNIN_LIMITS = {
  RATE_LIMIT_SIGNIN_EMAIL: '',
  RATE_LIMIT_SIGNIN_IP: '',
  RATE_LIMIT_SIGNIN_CHECKS: '',
};

describe('sign-in limits shared by the API and the web form', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let t: TestApp;
  before(async () => {
    smtp = await startSmtpServer();
  });
  after(async () => {
    await smtp.close();
  });

  /** A fresh app (fresh windows) with the default sign-in limits and the spec's anonymous API window. */
  async function freshApp(env: Record<string, string> = {}) {
    await t?.close();
    t = await startTestApp({ SMTP_URL: smtp.url, ...DEFAULT_SIGNIN_LIMITS, ...env });
    // Each test starts just after the top of an hour: its windows never roll over mid-test (a run near
    // xx:00 let a 21st code through).
    t.clock.set((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS + 1000);
    return t;
  }
  after(() => t?.close());

  const mailsTo = (email: string) => smtp.mails.filter((m: ReceivedMail) => m.to.includes(email)).length;
  const codeMailedTo = (email: string) => {
    const mail = smtp.mails.findLast((m) => m.to.includes(email));
    const code = mail && /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(mail.raw)?.[1];
    assert.ok(code, `a code reached ${email}`);
    return code;
  };
  const apiRequest = (email: string) =>
    t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
  const apiVerify = (email: string, code: string) =>
    t.api('/api/auth/agent/verify-code', { method: 'POST', body: { email, code } });
  /** The web form: the email page, then its post (a new cookie jar each time, as a script would). */
  async function webRequest(email: string) {
    const b = new Browser(t);
    const page = await b.request('/login');
    const sent = await b.request('/login', { method: 'POST', form: { email, _csrf: csrfOf(page.text) } });
    return { ...sent, browser: b };
  }
  async function webVerify(b: Browser, codePage: string, email: string, code: string) {
    return b.request('/login/code', { method: 'POST', form: { email, code, _csrf: csrfOf(codePage) } });
  }
  const assertApiLimited = (res: Awaited<ReturnType<typeof apiRequest>>, what: string) => {
    assert.equal(res.status, 429, `${what}: ${res.text}`);
    assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'status']);
    assert.equal(res.body.code, 'RATE_LIMITED');
    assert.equal(res.body.status, 429);
    assert.match(res.body.error, /try again later/i);
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
  };
  const assertWebLimited = (res: { status: number; text: string; headers: Headers }, what: string) => {
    assert.equal(res.status, 429, `${what}: ${res.text.slice(0, 300)}`);
    assert.match(res.text, /role="alert">[^<]*try again later/i);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  };

  test('the attack of the issue: after the API answers 429, POST /login mails no more codes to the address', async () => {
    await freshApp({ RATE_LIMIT_ANONYMOUS: '5' });
    const email = 'bombed@example.com';
    for (let i = 0; i < 5; i++) assert.equal((await apiRequest(email)).status, 200);
    assertApiLimited(await apiRequest(email), 'anonymous window');
    for (let i = 0; i < 20; i++) assertWebLimited(await webRequest(email), `web request ${i + 1}`);
    assert.equal(mailsTo(email), 5, 'five codes reached the address, no more');
  });

  test('codes to one address: 5 per hour, web and API mixed; then 429 on both, nothing mailed; the next hour mails again', async () => {
    await freshApp();
    const email = 'mixed@example.com';
    const before = mailsTo(email);
    assert.equal((await apiRequest(email)).status, 200);
    assert.equal((await webRequest(email)).status, 200);
    assert.equal((await apiRequest(email)).status, 200);
    assert.equal((await webRequest(email)).status, 200);
    assert.equal((await apiRequest('MIXED@example.com ')).status, 200, 'the same address, written otherwise');
    assertWebLimited(await webRequest(email), 'sixth, on the web');
    assertApiLimited(await apiRequest(email), 'seventh, through the API');
    assert.equal(mailsTo(email) - before, 5);
    // Another address from the same client is not held back by this one.
    assert.equal((await apiRequest('other@example.com')).status, 200);
    t.clock.set((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS);
    assert.equal((await webRequest(email)).status, 200);
    assert.equal(mailsTo(email) - before, 6);
  });

  test('codes from one client IP: 20 per hour over many addresses, web and API mixed', async () => {
    await freshApp();
    const sent = smtp.mails.length;
    for (let i = 0; i < 20; i++) {
      const email = `spray-${i}@example.com`;
      const res = i % 2 === 0 ? await apiRequest(email) : await webRequest(email);
      assert.equal(res.status, 200, `request ${i + 1}`);
    }
    assertApiLimited(await apiRequest('spray-20@example.com'), 'API, 21st');
    assertWebLimited(await webRequest('spray-21@example.com'), 'web, 22nd');
    assert.equal(smtp.mails.length - sent, 20, 'twenty codes reached the SMTP peer');
  });

  test('tries of one code are shared: 3 wrong through the API and 2 on the web kill it for both', async () => {
    await freshApp();
    const email = 'guessed@example.com';
    const web = await webRequest(email);
    assert.equal(web.status, 200);
    const code = codeMailedTo(email);
    const wrong = code.startsWith('Z') ? `Y${code.slice(1)}` : `Z${code.slice(1)}`;
    for (let i = 0; i < 3; i++) assert.equal((await apiVerify(email, wrong)).status, 400);
    for (let i = 0; i < 2; i++)
      assert.equal((await webVerify(web.browser, web.text, email, wrong)).status, 400);
    assert.equal((await apiVerify(email, code)).status, 400, 'the right code is dead through the API');
    const late = await webVerify(web.browser, web.text, email, code);
    assert.equal(late.status, 400, 'and on the web');
    assert.match(late.text, /Wrong or expired code/);
  });

  test('code checks from one client IP: 30 per hour over many addresses, web and API mixed; then 429 even for the right code', async () => {
    await freshApp();
    // Two minutes before a top of the hour, so the code (600 s) outlives the window.
    const top = (Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS;
    t.clock.set(top - 120_000);
    const email = 'checker@example.com';
    const web = await webRequest(email);
    const code = codeMailedTo(email);
    for (let i = 0; i < 30; i++) {
      const res =
        i % 2 === 0
          ? await apiVerify(`nobody-${i}@example.com`, 'ZZZZ-ZZZZ')
          : await webVerify(web.browser, web.text, `nobody-${i}@example.com`, 'ZZZZ-ZZZZ');
      assert.equal(res.status, 400, `check ${i + 1}`);
    }
    assertWebLimited(await webVerify(web.browser, web.text, email, code), 'web, 31st');
    assertApiLimited(await apiVerify(email, code), 'API, 32nd');
    // Refused checks spent none of the code's tries: it works in the next hour, while it lives.
    t.clock.set(top - 5_000); // the clock runs on in real time
    assert.equal((await apiVerify(email, code)).status, 429);
    t.clock.set(top);
    assert.equal((await apiVerify(email, code)).status, 201);
  });
});
