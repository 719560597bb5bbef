// The pages a new user meets in the first hour (issue 21, item 4): a refused first publish is shown as
// not published (and why) and is no link target; a site's page puts its settings before its files;
// sizes are human; a favicon; the "check your email" page says where the code went; the sign-in page
// of a claim link says it is for the claim.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../../helpers/dns.js';
import { upgradeToHobby } from '../../helpers/hobby.js';
import { assertPublished, type Files, manifestOf, publish, putUpload } from '../../helpers/publish.js';
import { startSmtpServer } from '../../helpers/smtp.js';
import { Browser, csrfOf } from '../../helpers/web.js';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomKey = (n: number) => Array.from(randomBytes(n), (b) => BASE62[b % 62]).join('');

async function webSignIn(t: TestApp, b: Browser, email: string) {
  const page = await b.request('/login');
  const sent = await b.request('/login', {
    method: 'POST',
    form: { email, next: '/dashboard', _csrf: csrfOf(page.text) },
  });
  assert.equal(sent.status, 200, sent.text);
  const done = await b.request('/login/code', {
    method: 'POST',
    form: { email, code: lastCodeFor(t, email), next: '/dashboard', _csrf: csrfOf(sent.text) },
  });
  assert.equal(done.status, 303, done.text);
}

/** A publish whose uploads go one at a time (the upload cap is 16 at once per address). */
async function publishOneByOne(t: TestApp, key: string, files: Files) {
  const create = await t.api('/api/v1/publish', { method: 'POST', key, body: { files: manifestOf(files) } });
  assert.equal(create.status, 201, create.text);
  for (const u of create.body.upload.uploads as Array<{
    path: string;
    url: string;
    headers: Record<string, string>;
  }>) {
    const up = await putUpload(u.url, files[u.path] as string, u.headers['Content-Type'], u.path);
    assert.ok(up.status < 300, up.text);
  }
  const versionId = create.body.upload.versionId as string;
  const done = await t.api(`/api/v1/publish/${create.body.slug}/finalize`, {
    method: 'POST',
    key,
    body: { versionId },
  });
  assert.equal(done.status, 200, done.text);
  return { slug: create.body.slug as string };
}

/** The table row of `slug` on /dashboard. */
const rowOf = (page: string, slug: string) =>
  new RegExp(
    `<tr><td data-label="Site" class="nowrap"><a href="/dashboard/sites/${slug}">[\\s\\S]*?</tr>`,
  ).exec(page)?.[0] ?? '';

describe('pages for a new user', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('a refused first publish is "not published yet" with the reason, and no link target (dashboard and API)', async () => {
    const email = 'refused@example.com';
    const key = await signIn(t, email);
    await upgradeToHobby(t, key);
    assert.equal(
      (await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle: 'refused-user' } })).status,
      200,
    );
    const live = assertPublished(await publish(t, { 'index.html': '<p>live</p>' }, { key }));
    const leaky: Files = { 'index.html': `<script>const k = "sk_live_${randomKey(32)}";</script>` };
    const refused = await publish(t, leaky, { key });
    assert.equal(refused.finalize?.status, 400);
    assert.equal(refused.finalize?.body.code, 'SECRET_DETECTED');
    // Created, never uploaded nor finalized.
    const unfinished = await t.api('/api/v1/publish', {
      method: 'POST',
      key,
      body: { files: [{ path: 'index.html', size: 5, contentType: 'text/html' }] },
    });
    assert.equal(unfinished.status, 201, unfinished.text);
    const unfinishedSlug = unfinished.body.slug as string;

    const b = new Browser(t);
    await webSignIn(t, b, email);
    const dash = await b.request('/dashboard');
    assert.equal(dash.status, 200);
    const refusedRow = rowOf(dash.text, refused.slug);
    assert.match(refusedRow, /Not published yet/);
    assert.match(refusedRow, /the last publish was refused: secrets found/);
    assert.doesNotMatch(refusedRow, /aria-label="Open /, 'no link to a site that serves nothing');
    assert.match(rowOf(dash.text, unfinishedSlug), /Not published yet[\s\S]*never finalized/);
    assert.match(rowOf(dash.text, live.slug), /active/);
    // The link form offers the live site only.
    const select = /<select id="link-slug"[\s\S]*?<\/select>/.exec(dash.text)?.[0] ?? '';
    assert.match(select, new RegExp(`<option>${live.slug}</option>`));
    assert.doesNotMatch(select, new RegExp(refused.slug));
    assert.doesNotMatch(select, new RegExp(unfinishedSlug));

    // The site's own page says so too.
    const page = await b.request(`/dashboard/sites/${refused.slug}`);
    assert.match(page.text, /Not published yet: the last publish was refused: secrets found/);

    // The API refuses a link to a site with nothing live, and says what to do.
    const linked = await t.api('/api/v1/links', {
      method: 'POST',
      key,
      body: { slug: refused.slug, location: '/x' },
    });
    assert.equal(linked.status, 400, linked.text);
    assert.equal(linked.body.code, 'INVALID_REQUEST');
    assert.match(linked.body.error, /not published yet/);
    assert.equal(
      (await t.api('/api/v1/links', { method: 'POST', key, body: { slug: live.slug, location: '/x' } }))
        .status,
      201,
    );
  });

  test("a site's page: settings first, then the files, collapsed past 50; sizes in kB/MB", async () => {
    const email = 'many-files@example.com';
    const key = await signIn(t, email);
    const files: Files = { 'index.html': `<p>${'x'.repeat(11_500)}</p>` };
    for (let i = 0; i < 60; i++) files[`p/${i}.txt`] = `file ${i}`;
    const site = await publishOneByOne(t, key, files);
    const small = assertPublished(await publish(t, { 'index.html': '<p>small</p>' }, { key }));
    const b = new Browser(t);
    await webSignIn(t, b, email);
    const page = (await b.request(`/dashboard/sites/${site.slug}`)).text;
    const at = (s: string) => page.indexOf(s);
    for (const settings of ['id="password"', 'id="ttl"', 'id="title"', 'id="var-name"', 'id="host"']) {
      assert.ok(at(settings) > 0 && at(settings) < at('<h2>Files'), `${settings} comes before the files`);
    }
    assert.match(page, /<details id="files"><summary>61 files, 11\.\d KB<\/summary>/);
    assert.match(page, /<td data-label="Size" class="nowrap">11\.\d KB<\/td>/);
    const few = (await b.request(`/dashboard/sites/${small.slug}`)).text;
    assert.match(few, /<details id="files" open><summary>1 file, \d+ B<\/summary>/);
    // The versions list counts the same way ("1 files" before; issue 21 walkthrough).
    assert.match(few, /<span class="muted">1 file · /);
    assert.doesNotMatch(few, /\b1 files\b/);
    const dash = (await b.request('/dashboard')).text;
    assert.match(rowOf(dash, site.slug), /<td data-label="Size" class="nowrap">11\.\d KB<\/td>/);
    assert.doesNotMatch(dash, /data-label="Bytes"/);
  });

  test('GET /favicon.ico and /favicon.svg answer 200 with an image; every page links the icon', async () => {
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const res = await fetch(`${t.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'image/svg+xml');
      assert.match(await res.text(), /^<svg /);
      assert.match(res.headers.get('cache-control') ?? '', /max-age=\d+/);
    }
    const landing = await fetch(`${t.url}/`);
    assert.match(await landing.text(), /<link rel="icon" href="\/favicon\.svg" type="image\/svg\+xml">/);
  });

  test('"check your email" with the dev mailer says the code is in the log and DATA_DIR/outbox.log', async () => {
    const b = new Browser(t);
    const page = await b.request('/login');
    const sent = await b.request('/login', {
      method: 'POST',
      form: { email: 'where@example.com', next: '/dashboard', _csrf: csrfOf(page.text) },
    });
    assert.equal(sent.status, 200);
    assert.match(sent.text, /no mail server is set up \(no <code>SMTP_URL<\/code>\)/);
    assert.match(sent.text, /the service’s log \(its standard output/);
    assert.ok(sent.text.includes(`<code>${join(t.dataDir, 'outbox.log')}</code>`), sent.text);
  });

  test('the sign-in page of a claim link says it is for claiming that site', async () => {
    const anon = assertPublished(await publish(t, { 'index.html': '<p>to claim</p>' }));
    const claimUrl = new URL(anon.create.body.claimUrl as string);
    const b = new Browser(t);
    const claim = await b.request(`${claimUrl.pathname}${claimUrl.search}`);
    assert.equal(claim.status, 303);
    const login = await b.request(claim.headers.get('location')!);
    assert.equal(login.status, 200);
    assert.match(login.text, new RegExp(`<h1>Sign in to claim ${anon.slug}</h1>`));
    const next = /name="next" value="([^"]*)"/.exec(login.text)![1]!;
    const sent = await b.request('/login', {
      method: 'POST',
      form: { email: 'claimer@example.com', next: next.replaceAll('&amp;', '&'), _csrf: csrfOf(login.text) },
    });
    assert.match(sent.text, new RegExp(`then you can claim ${anon.slug}`));
    // A plain sign-in says nothing of a claim.
    const plain = await new Browser(t).request('/login');
    assert.match(plain.text, /<h1>Sign in<\/h1>/);
  });
});

describe('"check your email" with SMTP', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ SMTP_URL: smtp.url });
  });
  after(async () => {
    await t?.close();
    await smtp?.close();
  });

  test('it says to check the inbox and names no log or file', async () => {
    const b = new Browser(t);
    const page = await b.request('/login');
    const sent = await b.request('/login', {
      method: 'POST',
      form: { email: 'inbox@example.com', next: '/dashboard', _csrf: csrfOf(page.text) },
    });
    assert.equal(sent.status, 200);
    assert.match(sent.text, /Check your inbox \(and the spam folder\)/);
    assert.doesNotMatch(sent.text, /outbox\.log|SMTP_URL/);
  });
});

describe('dashboard notices name the dashboard, not API calls', () => {
  let t: TestApp;
  let dns: DnsPeer;
  before(async () => {
    dns = await startDnsPeer({});
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET: 'target.example' });
  });
  after(async () => {
    await t?.close();
    await dns?.close();
  });

  test('handle set and domain verified: the notice says where to link, with no /api/ call', async () => {
    const email = 'notices@example.com';
    const key = await signIn(t, email);
    await upgradeToHobby(t, key);
    const b = new Browser(t);
    await webSignIn(t, b, email);
    const post = async (path: string, form: Record<string, string>) => {
      const page = await b.request('/dashboard');
      const res = await b.request(path, { method: 'POST', form: { ...form, _csrf: csrfOf(page.text) } });
      assert.equal(res.status, 303, res.text);
      return (await b.request(res.headers.get('location')!)).text;
    };
    const handled = await post('/dashboard/handle', { handle: 'notice-user' });
    assert.match(handled, /Your handle is notice-user: link sites to it under Links/);
    await post('/dashboard/domains', { domain: 'www.notice.example' });
    const domain = (await t.api('/api/v1/domains', { key })).body.domains[0];
    dns.records['www.notice.example'] = { CNAME: 'target.example' };
    dns.records[domain.verificationTxtName] = { TXT: [domain.verificationTxtValue] };
    const verified = await post('/dashboard/domains/verify', { domain: 'www.notice.example' });
    assert.match(verified, /www\.notice\.example is verified: link a site to it under Links/);
    for (const page of [handled, verified]) assert.doesNotMatch(page, /(POST|PUT) \/api\//);
  });
});
