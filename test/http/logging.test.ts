// Logged URLs (src/http/logging.ts): every flow that puts a secret token in a URL, and the same tokens
// nested in `next=` values, encoded once or more, through a real app whose log stream is captured.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { publish } from '../helpers/publish.js';
import { Browser, csrfOf } from '../helpers/web.js';

describe('secret tokens never reach a logged URL', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** The URLs of the request log lines written since `from`. */
  const loggedUrls = (from: number) =>
    t.logs
      .slice(from)
      .map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url)
      .filter((url): url is string => url !== undefined);

  const assertAbsent = (from: number, secrets: Record<string, string>) => {
    const lines = t.logs.slice(from).join('\n');
    for (const [what, secret] of Object.entries(secrets)) {
      assert.ok(!lines.includes(secret), `${what} (${secret}) is absent from the log lines:\n${lines}`);
    }
  };

  test('the claim flow: /claim, its redirect to /login?next=..., the sign-in and the way back', async () => {
    const anon = await publish(t, { 'index.html': '<h1>claim me</h1>' });
    const claimToken: string = anon.create.body.claimToken;
    const claimPath = `/claim?slug=${anon.slug}&token=${claimToken}`;
    const from = t.logs.length;

    const b = new Browser(t);
    const first = await b.request(claimPath);
    assert.equal(first.status, 303);
    const login = first.headers.get('location') ?? '';
    assert.ok(login.startsWith('/login?next='), login);
    const page = await b.request(login);
    const next = /name="next" value="([^"]*)"/.exec(page.text)?.[1]?.replace(/&#38;/g, '&') ?? '';
    assert.equal(next, claimPath);
    const email = 'claim-logs@example.com';
    const sent = await b.request('/login', {
      method: 'POST',
      form: { email, next, _csrf: csrfOf(page.text) },
    });
    const done = await b.request('/login/code', {
      method: 'POST',
      form: { email, code: lastCodeFor(t, email), next, _csrf: csrfOf(sent.text) },
    });
    assert.equal(done.headers.get('location'), claimPath);
    assert.equal((await b.request(claimPath)).status, 200);

    const urls = loggedUrls(from);
    assert.ok(
      urls.some((u) => u.startsWith('/login?next=')),
      `the login request is logged: ${urls.join(' ')}`,
    );
    assertAbsent(from, { 'claim token': claimToken, 'claim token hex': claimToken.slice(4) });
  });

  test('every token shape in a URL, at the top or nested in next= (encoded once, twice, in lower case)', async () => {
    // From the start: the uploads, the checkout and the portal visit put their tokens in URLs too.
    const from = t.logs.length;
    const key = await signIn(t, 'shapes@example.com');
    const upload = await publish(t, { 'index.html': 'up' }, { key, finalize: false });
    const uploadUrl = new URL(upload.create.body.upload.uploads[0].url);
    const uploadPath = `${uploadUrl.pathname}${uploadUrl.search}`;
    const uploadToken = uploadUrl.searchParams.get('token')!;
    const checkout = await t.api('/api/billing/checkout', { method: 'POST', key });
    const checkoutPath = new URL(checkout.body.checkoutUrl).pathname;
    const checkoutToken = checkoutPath.split('/').pop()!;
    assert.equal((await fetch(`${t.url}${checkoutPath}`)).status, 200);
    assert.equal((await fetch(`${t.url}${checkoutPath}`, { method: 'POST' })).status, 200);
    const portalUrl = new URL((await t.api('/api/billing/portal', { method: 'POST', key })).body.portalUrl);
    const portalPath = `${portalUrl.pathname}${portalUrl.search}`;
    const portalToken = portalUrl.searchParams.get('token')!;
    const anon = await publish(t, { 'index.html': 'anon' });
    const claimToken: string = anon.create.body.claimToken;
    const claimPath = `/claim?slug=${anon.slug}&token=${claimToken}`;
    const deployToken: string = (
      await t.api(`/api/v1/publish/${upload.slug}/tokens`, { method: 'POST', key, body: { name: 'ci' } })
    ).body.token;

    const e = encodeURIComponent;
    const lower = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    const paths = [
      claimPath,
      checkoutPath,
      portalPath,
      uploadPath,
      `/dashboard?key=${key}`,
      `/dashboard/${key}`,
      `/dashboard?t=${deployToken}`,
      `/api/v1/publish/${deployToken}`,
    ];
    for (const path of paths) {
      for (const url of [
        path,
        `/login?next=${e(path)}`,
        `/login?next=${lower(e(path))}`,
        `/login?next=${e(`/login?next=${e(path)}`)}`,
        `/login?next=${e(e(path))}`,
        `/login?x=1&next=${e(path)}#frag`,
        `/nowhere/${e(path)}`,
        `/api/v1/nowhere?next=${e(path)}`,
      ]) {
        const res = await fetch(`${t.url}${url}`, { redirect: 'manual' });
        assert.ok(res.status < 500, `${url}: ${res.status}`);
        await res.arrayBuffer();
      }
    }
    assert.ok(loggedUrls(from).length >= paths.length * 8, 'each request is logged');
    assertAbsent(from, {
      'claim token': claimToken.slice(4),
      'API key': key.slice(9),
      'checkout token': checkoutToken,
      'portal token MAC': portalToken.split('.').pop()!,
      'upload token': uploadToken,
      'deploy token': deployToken.slice(9),
    });
  });
});
