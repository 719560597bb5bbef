// `slipway login | whoami | account | logout` as a subprocess, with the sign-in code read from a real
// SMTP server (smtp-server on loopback) and typed into the CLI's stdin.

import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv, collect } from '../helpers/cli.js';
import { startSmtpServer } from '../helpers/smtp.js';

const CODE_RE = /\b([A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4})\b/;

describe('slipway login over SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let t: TestApp;
  let cli: CliEnv;

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ SMTP_URL: smtp.url });
    cli = await cliEnv(t.url);
  });
  after(async () => {
    await t.close();
    await smtp.close();
    await cli.dispose();
  });

  /** The code of the newest mail to `to`, once it has arrived. */
  async function codeFor(to: string, after: number): Promise<string> {
    const end = Date.now() + 20_000;
    for (;;) {
      const mail = smtp.mails.slice(after).find((m) => m.to.includes(to));
      const code = mail && CODE_RE.exec(/^Subject: (.*)$/m.exec(mail.raw)?.[1] ?? '')?.[1];
      if (code) return code;
      if (Date.now() > end) throw new Error(`no mail to ${to}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  test('login --email reads the mailed code from stdin and saves the key with mode 0600', async () => {
    const sent = smtp.mails.length;
    const child = cli.spawn(['login', '--email', 'cli@example.com', '--json']);
    const done = collect(child);
    child.stdin.end(`${await codeFor('cli@example.com', sent)}\n`);
    const res = await done;
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(res.json, {
      email: 'cli@example.com',
      plan: 'free',
      isNewUser: true,
      server: t.url,
      credentialsFile: cli.credentials,
    });
    assert.match(res.stderr, /code was sent to cli@example\.com/);
    const info = await stat(cli.credentials);
    assert.equal(info.mode & 0o777, 0o600);
    const saved = JSON.parse(await readFile(cli.credentials, 'utf8'));
    assert.match(saved.servers[t.url].apiKey, /^svc_live_[0-9a-f]{32}$/);
    assert.ok(!res.stdout.includes(saved.servers[t.url].apiKey), 'the key is not printed');

    const who = await cli.run(['whoami', '--json']);
    assert.equal(who.code, 0, who.stderr);
    assert.deepEqual(who.json, { email: 'cli@example.com', plan: 'free', handle: null, server: t.url });
    const human = await cli.run(['whoami']);
    assert.equal(human.stdout, `cli@example.com (free) on ${t.url}\n`);

    const account = await cli.run(['account', '--json']);
    assert.equal(account.code, 0);
    assert.equal(account.json.email, 'cli@example.com');
    assert.equal(account.json.usage.sites.used, 0);
    assert.equal(typeof account.json.limits.maxFileSizeBytes, 'number');
  });

  test('login without --email reads the email, then the code, line by line from stdin', async () => {
    const sent = smtp.mails.length;
    const child = cli.spawn(['login']);
    const done = collect(child);
    child.stdin.write('lines@example.com\n');
    child.stdin.end(`${(await codeFor('lines@example.com', sent)).toLowerCase()}\n`);
    const res = await done;
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^Logged in to .* as lines@example\.com \(free\)\./);
    assert.equal((await cli.run(['whoami', '--json'])).json.email, 'lines@example.com');
  });

  test('a wrong code is refused (exit 2, the server error body) and the saved key is kept', async () => {
    const before = await readFile(cli.credentials, 'utf8');
    const sent = smtp.mails.length;
    const child = cli.spawn(['login', '--email', 'cli@example.com', '--json']);
    const done = collect(child);
    await codeFor('cli@example.com', sent);
    child.stdin.end('AAAA-AAAA\n');
    const res = await done;
    assert.equal(res.code, 2);
    assert.equal(res.json.code, 'INVALID_REQUEST');
    assert.equal(res.json.status, 400);
    assert.equal(await readFile(cli.credentials, 'utf8'), before);
  });

  test('stdin ending before the code is a user error (exit 1)', async () => {
    const res = await cli.run(['login', '--email', 'cli@example.com', '--json'], { input: '' });
    assert.equal(res.code, 1);
    assert.equal(res.json.code, 'MISSING_INPUT');
  });

  test('logout forgets the key; commands that need one then exit 1 with NOT_LOGGED_IN', async () => {
    const res = await cli.run(['logout', '--json']);
    assert.equal(res.code, 0);
    assert.deepEqual(res.json, { loggedOut: true, server: t.url });
    await assert.rejects(stat(cli.credentials), /ENOENT/);
    const who = await cli.run(['whoami', '--json']);
    assert.equal(who.code, 1);
    assert.equal(who.json.code, 'NOT_LOGGED_IN');
    const human = await cli.run(['list']);
    assert.equal(human.code, 1);
    assert.match(
      human.stderr,
      /^error NOT_LOGGED_IN: not logged in to http:\/\/127\.0\.0\.1:\d+\nhint: Run `slipway login`/,
    );
    const again = await cli.run(['logout', '--json']);
    assert.deepEqual(again.json, { loggedOut: false, server: t.url });
  });
});

describe('slipway login on the local default (the dev mailer)', () => {
  test('it says the code is in the service log and outbox.log, not in a mailbox (issue 21)', async () => {
    const t = await startTestApp();
    const cli = await cliEnv(t.url);
    try {
      const child = cli.spawn(['login', '--email', 'local@example.com', '--json']);
      const done = collect(child);
      let code: string | undefined;
      for (const end = Date.now() + 20_000; !code && Date.now() < end; ) {
        try {
          code = lastCodeFor(t, 'local@example.com');
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      child.stdin.end(`${code}\n`);
      const res = await done;
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /no SMTP_URL/);
      assert.match(res.stderr, /outbox\.log in its DATA_DIR/);
      assert.match(res.stderr, /valid for 10 minutes/);
    } finally {
      await cli.dispose();
      await t.close();
    }
  });
});
