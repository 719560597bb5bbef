// POST /api/auth/agent/request-code and verify-code, through real HTTP with a real SMTP server.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CODE_ALPHABET } from '../../src/core/signin.js';
import { freePort, lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { startSmtpServer } from '../helpers/smtp.js';

const CODE_RE = new RegExp(`\\b([${CODE_ALPHABET}]{4}-[${CODE_ALPHABET}]{4})\\b`);

describe('sign-in over SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let t: TestApp;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'Slipway <login@example.test>' });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const codeFromMail = (to: string): string => {
    const mail = [...smtp.mails].reverse().find((m) => m.to.includes(to));
    assert.ok(mail, `a mail reached ${to}`);
    const subject = /^Subject: (.*)$/m.exec(mail.raw)?.[1] ?? '';
    const code = CODE_RE.exec(subject)?.[1];
    assert.ok(code, `the subject carries the code: ${subject}`);
    assert.match(
      mail.raw.split('\r\n\r\n').slice(1).join('\n'),
      new RegExp(code),
      'the body carries the code',
    );
    return code;
  };

  test('request-code mails a XXXX-XXXX code and verify-code creates the account (201)', async () => {
    const logStart = t.logs.length;
    const req = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: { email: 'New@Example.com' },
    });
    assert.equal(req.status, 200);
    assert.deepEqual(req.body, {
      message: 'A sign-in code was sent to new@example.com.',
      email: 'new@example.com',
      expiresInSeconds: 600,
    });
    const code = codeFromMail('new@example.com');
    assert.equal(smtp.mails.at(-1)?.from, 'login@example.test');

    const res = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'new@example.com', code },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.apiKey, /^svc_live_[0-9a-f]{32}$/);
    assert.equal(res.body.email, 'new@example.com');
    assert.equal(res.body.plan, 'free');
    assert.equal(res.body.isNewUser, true);
    assert.match(res.body.warning, /store/i);
    assert.equal(typeof res.body.message, 'string');

    const account = await t.api('/api/v1/account', { key: res.body.apiKey });
    assert.equal(account.status, 200);
    assert.equal(account.body.email, 'new@example.com');

    // No log line of this whole sign-in carries the code or the key.
    const lines = t.logs.slice(logStart).join('\n');
    assert.ok(lines.length > 0, 'the sign-in was logged');
    assert.ok(!lines.includes(code), 'code absent from logs');
    assert.ok(!lines.includes(code.replace('-', '')), 'code absent from logs (no dash)');
    assert.ok(!lines.includes(res.body.apiKey), 'API key absent from logs');
    assert.ok(!lines.includes(res.body.apiKey.slice(9)), 'API key hex absent from logs');
  });

  test('verify-code with a wrong code answers 400 INVALID_REQUEST', async () => {
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'wrong@example.com' } });
    const code = codeFromMail('wrong@example.com');
    const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`;
    const res = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'wrong@example.com', code: wrong },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error', 'status']);
    assert.equal(res.body.code, 'INVALID_REQUEST');
    assert.equal(res.body.status, 400);
    // The right code still works after one wrong try.
    const ok = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'wrong@example.com', code },
    });
    assert.equal(ok.status, 201);
  });

  test('verify-code after 600 s answers 400 INVALID_REQUEST (moved clock)', async () => {
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'late@example.com' } });
    const code = codeFromMail('late@example.com');
    t.clock.advance(601_000);
    const res = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'late@example.com', code },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_REQUEST');
  });

  test('a code that was used once is dead', async () => {
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'once@example.com' } });
    const code = codeFromMail('once@example.com');
    const first = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'once@example.com', code },
    });
    assert.equal(first.status, 201);
    const again = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'once@example.com', code },
    });
    assert.equal(again.status, 400);
  });

  test('after 5 wrong tries the right code is refused too (the code is dead)', async () => {
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'guess@example.com' } });
    const code = codeFromMail('guess@example.com');
    for (let i = 0; i < 5; i++) {
      const res = await t.api('/api/auth/agent/verify-code', {
        method: 'POST',
        body: { email: 'guess@example.com', code: 'ZZZZ-ZZZZ' === code ? 'YYYY-YYYY' : 'ZZZZ-ZZZZ' },
      });
      assert.equal(res.status, 400);
    }
    const sixth = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'guess@example.com', code },
    });
    assert.equal(sixth.status, 400);
    assert.equal(sixth.body.code, 'INVALID_REQUEST');
  });

  test('concurrent wrong guesses never exceed 5 tries', async () => {
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'race@example.com' } });
    const code = codeFromMail('race@example.com');
    const guesses = Array.from({ length: 20 }, (_, i) =>
      t.api('/api/auth/agent/verify-code', {
        method: 'POST',
        body: { email: 'race@example.com', code: `ZZZ${String.fromCharCode(65 + i)}-ZZZZ` },
      }),
    );
    await Promise.all(guesses);
    const res = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'race@example.com', code },
    });
    assert.equal(res.status, 400);
  });

  test('verifying again answers 200 with a new key and the old key fails at once', async () => {
    const oldKey = await signIn2(t, 'again@example.com', codeFromMail);
    assert.equal((await t.api('/api/v1/account', { key: oldKey })).status, 200);
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'again@example.com' } });
    const res = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email: 'again@example.com', code: codeFromMail('again@example.com') },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.isNewUser, false);
    assert.notEqual(res.body.apiKey, oldKey);
    const old = await t.api('/api/v1/account', { key: oldKey });
    assert.equal(old.status, 401);
    assert.equal(old.body.code, 'UNAUTHORIZED');
    assert.equal((await t.api('/api/v1/account', { key: res.body.apiKey })).status, 200);
  });

  for (const email of [
    '',
    'no-at-sign',
    'a@b',
    'two@@example.com',
    'sp ace@example.com',
    `${'x'.repeat(250)}@example.com`,
  ]) {
    test(`request-code with malformed email ${JSON.stringify(email.slice(0, 20))} answers 400 INVALID_REQUEST`, async () => {
      const res = await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'INVALID_REQUEST');
    });
  }

  test('request-code without email or with a non-string email answers 400', async () => {
    for (const body of [{}, { email: 42 }, { email: null }, []]) {
      const res = await t.api('/api/auth/agent/request-code', { method: 'POST', body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'INVALID_REQUEST');
    }
  });
});

async function signIn2(t: TestApp, email: string, codeFromMail: (to: string) => string): Promise<string> {
  await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
  const res = await t.api('/api/auth/agent/verify-code', {
    method: 'POST',
    body: { email, code: codeFromMail(email) },
  });
  return res.body.apiKey;
}

describe('sign-in mail failures', () => {
  test('an unreachable SMTP server gives a clear 502 UPSTREAM_ERROR within seconds', async () => {
    const deadPort = await freePort();
    const t = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${deadPort}` });
    try {
      const started = Date.now();
      const res = await t.api('/api/auth/agent/request-code', {
        method: 'POST',
        body: { email: 'x@example.com' },
      });
      assert.ok(Date.now() - started < 10_000, 'answered within seconds');
      assert.equal(res.status, 502);
      assert.equal(res.body.code, 'UPSTREAM_ERROR');
      assert.equal(res.body.status, 502);
    } finally {
      await t.close();
    }
  });
});

describe('sign-in with the dev mailer', () => {
  test('the code is appended to DATA_DIR/outbox.log and printed on one line', async () => {
    const t = await startTestApp();
    try {
      const key = await signIn(t, 'dev@example.com');
      assert.match(key, /^svc_live_[0-9a-f]{32}$/);
      const { readFile } = await import('node:fs/promises');
      const outbox = await readFile(`${t.dataDir}/outbox.log`, 'utf8');
      assert.ok(outbox.includes(lastCodeFor(t, 'dev@example.com')));
      assert.equal(t.devMail.length, 1);
      // Issue 21: a new user on the local default waited for a mail that never leaves the machine; the
      // answer (which the CLI prints) says where the code is instead.
      const again = await t.api('/api/auth/agent/request-code', {
        method: 'POST',
        body: { email: 'dev@example.com' },
      });
      assert.equal(again.status, 200);
      assert.match(again.body.message, /no SMTP_URL/);
      assert.match(again.body.message, /standard output/);
      assert.match(again.body.message, /outbox\.log in its DATA_DIR/);
      // The structured log never carries the code, even with the dev mailer.
      assert.ok(!t.logs.join('\n').includes(lastCodeFor(t, 'dev@example.com')));
    } finally {
      await t.close();
    }
  });
});
