// Web sign-in, sessions, CSRF and the claim page through real HTTP (issue 14; CONTRACT "Web pages").
// A small cookie jar (test/helpers/web.ts) stands in for the browser (the browser tests drive Chromium).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { upgradeToHobby } from '../helpers/hobby.js';
import { publish } from '../helpers/publish.js';
import { Browser, csrfOf } from '../helpers/web.js';

async function signInWithBrowser(t: TestApp, b: Browser, email: string, next = '/dashboard') {
  const page = await b.request(`/login?next=${encodeURIComponent(next)}`);
  assert.equal(page.status, 200);
  const sent = await b.request('/login', { method: 'POST', form: { email, next, _csrf: csrfOf(page.text) } });
  assert.equal(sent.status, 200, sent.text);
  assert.match(sent.text, /Check your email/);
  const code = lastCodeFor(t, email);
  const done = await b.request('/login/code', {
    method: 'POST',
    form: { email, code, next, _csrf: csrfOf(sent.text) },
  });
  assert.equal(done.status, 303, done.text);
  return done;
}

describe('web sign-in, sessions, CSRF and claim', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('sign in with the emailed code: an HttpOnly SameSite=Lax session cookie, the dashboard, sign-out ends it', async () => {
    const b = new Browser(t);
    assert.equal((await b.request('/dashboard')).status, 303, 'signed out: to /login');
    const done = await signInWithBrowser(t, b, 'web@example.com');
    assert.equal(done.headers.get('location'), '/dashboard');
    const setCookie = done.headers.getSetCookie().find((c) => c.startsWith('slipway_session='))!;
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    const dash = await b.request('/dashboard');
    assert.equal(dash.status, 200);
    assert.match(dash.text, /web@example\.com/);
    assert.match(dash.text, /Plan: <strong>free<\/strong>/);
    assert.doesNotMatch(dash.text, /svc_live_/, 'the page never shows an API key');
    const stored = await t.ctx.db.kysely.selectFrom('sessions').select('token_hash').execute();
    assert.ok(
      !stored.some((r) => r.token_hash === b.cookies.get('slipway_session')),
      'only the hash is stored',
    );

    const out = await b.request('/logout', { method: 'POST', form: { _csrf: csrfOf(dash.text) } });
    assert.equal(out.status, 303);
    assert.equal((await b.request('/dashboard')).status, 303);
  });

  test('web sign-in does not replace the API key of the account', async () => {
    const key = await signIn(t, 'keeps-key@example.com');
    await signInWithBrowser(t, new Browser(t), 'keeps-key@example.com');
    assert.equal((await t.api('/api/v1/account', { key })).status, 200);
  });

  test('verifying a new code through the API (a new key) ends the web sessions, as the regeneration does', async () => {
    const b = new Browser(t);
    await signInWithBrowser(t, b, 'rotate@example.com');
    assert.equal((await b.request('/dashboard')).status, 200);
    await signIn(t, 'rotate@example.com');
    const after = await b.request('/dashboard');
    assert.equal(after.status, 303, 'the old session cookie no longer opens the dashboard');
    assert.equal(after.headers.get('location'), '/login?next=/dashboard');
  });

  test('a notice in a link from elsewhere is not shown: only the service’s own notices are (signed for the session)', async () => {
    const b = new Browser(t);
    await signInWithBrowser(t, b, 'notices@example.com');
    const lure = 'Your account is suspended: pay at evil.example to restore it';
    for (const path of ['/dashboard', '/dashboard/sites/some-site']) {
      const page = await b.request(`${path}?done=${encodeURIComponent(lure)}`);
      assert.doesNotMatch(page.text, /evil\.example/, `${path} showed a notice from the link`);
    }
    // The service's own notice after an action still shows (a failed domain add says why).
    const dash = await b.request('/dashboard');
    const added = await b.request('/dashboard/domains', {
      method: 'POST',
      form: { _csrf: csrfOf(dash.text), domain: 'not a domain' },
    });
    assert.equal(added.status, 303);
    const back = await b.request(added.headers.get('location')!);
    assert.match(back.text, /role="status">INVALID_REQUEST: Invalid domain/);
    // The same notice opened with another session is not shown.
    const other = new Browser(t);
    await signInWithBrowser(t, other, 'notices-2@example.com');
    assert.doesNotMatch((await other.request(added.headers.get('location')!)).text, /Invalid domain/);
  });

  test('CSRF: a form post without the token is refused and changes nothing; a cross-site post with the cookie too', async () => {
    const b = new Browser(t);
    await signInWithBrowser(t, b, 'csrf@example.com');
    const dash = await b.request('/dashboard');
    // No token: the session survives.
    assert.equal((await b.request('/logout', { method: 'POST', form: {} })).status, 403);
    assert.equal((await b.request('/dashboard')).status, 200);
    // The right token but sent from another site (the browser says so): refused.
    const token = csrfOf(dash.text);
    const cross = await b.request('/logout', {
      method: 'POST',
      form: { _csrf: token },
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(cross.status, 403);
    assert.equal((await b.request('/dashboard')).status, 200, 'still signed in');
    // A claim posted without a token claims nothing.
    const anon = await publish(t, { 'index.html': 'anon' });
    const claimToken = anon.create.body.claimToken;
    const res = await b.request('/claim', { method: 'POST', form: { slug: anon.slug, token: claimToken } });
    assert.equal(res.status, 403);
    const site = await t.ctx.db.kysely
      .selectFrom('sites')
      .select('owner_id')
      .where('slug', '=', anon.slug)
      .executeTakeFirstOrThrow();
    assert.equal(site.owner_id, null);
    // A dashboard action (deleting a site) without the token, or with it from another site: nothing goes.
    const key = await signIn(t, 'csrf@example.com');
    const mine = await publish(t, { 'index.html': 'keep me' }, { key });
    const fresh = new Browser(t);
    await signInWithBrowser(t, fresh, 'csrf@example.com');
    const sitePage = await fresh.request(`/dashboard/sites/${mine.slug}`);
    const form = { slug: mine.slug, confirm: mine.slug };
    assert.equal((await fresh.request('/dashboard/sites/delete', { method: 'POST', form })).status, 403);
    const crossDelete = await fresh.request('/dashboard/sites/delete', {
      method: 'POST',
      form: { ...form, _csrf: csrfOf(sitePage.text) },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(crossDelete.status, 403);
    assert.equal(
      (await t.api(`/api/v1/publish/${mine.slug}`, { key })).status,
      200,
      'the site is still there',
    );
    // Sign-in forms need the nonce-bound token too.
    assert.equal(
      (await new Browser(t).request('/login', { method: 'POST', form: { email: 'x@example.com' } })).status,
      403,
    );
  });

  test('the claimUrl: sign in, claim with one button, land on the site in the dashboard; a used, wrong or expired token gets a clear page', async () => {
    const anon = await publish(t, { 'index.html': '<h1>claim me</h1>' });
    assert.equal(anon.finalize?.status, 200);
    const claimUrl = new URL(anon.create.body.claimUrl);
    assert.equal(claimUrl.pathname, '/claim');
    const path = `${claimUrl.pathname}${claimUrl.search}`;
    const token = claimUrl.searchParams.get('token')!;

    // A wrong token is said at once, before any sign-in.
    const wrong = await new Browser(t).request(`/claim?slug=${anon.slug}&token=clm_wrong`);
    assert.equal(wrong.status, 400);
    assert.match(wrong.text, /cannot be claimed/);
    assert.match(wrong.text, /The claim token is not valid for this site/);
    assert.equal((await new Browser(t).request('/claim?slug=&token=')).status, 400);
    assert.equal((await new Browser(t).request(`/claim?slug=nope-not-here&token=${token}`)).status, 404);

    const b = new Browser(t);
    const first = await b.request(path);
    assert.equal(first.status, 303);
    const next = decodeURIComponent(/next=(.*)$/.exec(first.headers.get('location') ?? '')?.[1] ?? '');
    assert.equal(next, path);
    const signedIn = await signInWithBrowser(t, b, 'claimer@example.com', next);
    assert.equal(signedIn.headers.get('location'), path);
    const page = await b.request(path);
    assert.equal(page.status, 200);
    assert.match(page.text, new RegExp(`Claim ${anon.slug}`));
    const claimed = await b.request('/claim', {
      method: 'POST',
      form: { slug: anon.slug, token, _csrf: csrfOf(page.text) },
    });
    assert.equal(claimed.status, 303, claimed.text);
    const landing = claimed.headers.get('location') ?? '';
    assert.ok(landing.startsWith(`/dashboard/sites/${anon.slug}?done=`), landing);
    const sitePage = await b.request(landing);
    assert.equal(sitePage.status, 200);
    assert.match(sitePage.text, new RegExp(`${anon.slug} is yours now`));
    assert.match(
      (await b.request('/dashboard')).text,
      new RegExp(`>${anon.slug}</a>`),
      'listed in the dashboard',
    );

    // The same link again: for its new owner, the site's page; for anyone else, a clear refusal.
    const again = await b.request(path);
    assert.equal(again.status, 303);
    assert.match(
      again.headers.get('location') ?? '',
      new RegExp(`^/dashboard/sites/${anon.slug}\\?done=.*already%20yours`),
    );
    const other = new Browser(t);
    const used = await other.request(path);
    assert.equal(used.status, 400);
    assert.match(used.text, /This site has already been claimed/);

    // An anonymous site past its 24 hours.
    const late = await publish(t, { 'index.html': '<h1>too late</h1>' });
    t.clock.advance(25 * 3600 * 1000);
    const expired = await new Browser(t).request(
      new URL(late.create.body.claimUrl).pathname + new URL(late.create.body.claimUrl).search,
    );
    assert.equal(expired.status, 400);
    assert.match(expired.text, /has expired and can no longer be claimed/);
    assert.match(expired.text, /cannot be claimed/);
  });

  test('the dashboard links a site to the handle, and removes the link', async () => {
    const b = new Browser(t);
    const key = await signIn(t, 'linker@example.com');
    await upgradeToHobby(t, key);
    assert.equal(
      (await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle: 'web-linker' } })).status,
      200,
    );
    const site = await publish(t, { 'index.html': '<p>linked from the web</p>' }, { key });
    await signInWithBrowser(t, b, 'linker@example.com');
    const dash = await b.request('/dashboard');
    // The form offers the account's sites and the handle as a mount.
    assert.match(
      dash.text,
      new RegExp(`<select id="link-slug" name="slug" required><option>${site.slug}</option>`),
    );
    assert.match(dash.text, /<option value="">Your handle \(web-linker\)<\/option>/);
    const linked = await b.request('/dashboard/links', {
      method: 'POST',
      form: { slug: site.slug, domain: '', location: '/web', _csrf: csrfOf(dash.text) },
    });
    assert.equal(linked.status, 303);
    assert.match(
      decodeURIComponent(linked.headers.get('location') ?? ''),
      /is linked at http:\/\/web-linker\.localhost:\d+\/web\//,
    );
    const after = await b.request('/dashboard');
    assert.match(after.text, /web-linker\.localhost:\d+\/web\/<\/a> → /);
    const links = (await t.api('/api/v1/links', { key })).body.links;
    assert.equal(links.length, 1);
    const removed = await b.request('/dashboard/links/delete', {
      method: 'POST',
      form: { id: links[0].id, _csrf: csrfOf(after.text) },
    });
    assert.equal(removed.status, 303);
    assert.deepEqual((await t.api('/api/v1/links', { key })).body.links, []);
  });

  test("the site page's deploy tokens: create shows the token once, the list never; revoke stops it; CSRF applies", async () => {
    const b = new Browser(t);
    const key = await signIn(t, 'web-tokens@example.com');
    const site = await publish(t, { 'index.html': '<p>tokens</p>' }, { key });
    await signInWithBrowser(t, b, 'web-tokens@example.com');
    const page = await b.request(`/dashboard/sites/${site.slug}`);
    assert.match(page.text, /<h2 id="deploy-tokens-title">Deploy tokens<\/h2>/);
    assert.match(page.text, /No deploy tokens yet\./);
    assert.match(page.text, /<option value="90" selected>In 90 days<\/option>/);
    // Without the form's CSRF token nothing is created.
    const forged = await b.request('/dashboard/sites/tokens', {
      method: 'POST',
      form: { slug: site.slug, name: 'forged', days: '90' },
    });
    assert.equal(forged.status, 403);
    assert.deepEqual((await t.api(`/api/v1/publish/${site.slug}/tokens`, { key })).body.tokens, []);

    const created = await b.request('/dashboard/sites/tokens', {
      method: 'POST',
      form: { slug: site.slug, name: 'Web CI', days: '30', _csrf: csrfOf(page.text) },
    });
    // The POST answers a redirect (a reload never posts again); the page it leads to shows the token once.
    assert.equal(created.status, 303, created.text);
    assert.equal(created.headers.get('location'), `/dashboard/sites/${site.slug}/new-token`);
    const cookie = created.headers.getSetCookie().join('\n');
    assert.match(
      cookie,
      new RegExp(`Path=/dashboard/sites/${site.slug}/new-token; HttpOnly; SameSite=Strict`),
    );
    assert.equal(cookie.includes('svc_site_'), false, 'the cookie carries the token sealed');
    const shown = await b.request(`/dashboard/sites/${site.slug}/new-token`);
    assert.equal(shown.status, 200);
    assert.equal(shown.headers.get('cache-control'), 'no-store');
    const token = /<code id="deploy-token">(svc_site_[0-9a-f]{32})<\/code>/.exec(shown.text)?.[1];
    assert.ok(token, 'the token is on the page once');
    assert.match(shown.text, /shown once/);
    assert.ok(
      shown.text.includes(`SLIPWAY_URL=${t.ctx.config.baseUrl}`),
      'the CI command names this service',
    );
    const again = await b.request(`/dashboard/sites/${site.slug}/new-token`);
    assert.equal(again.text.includes(token), false, 'the second look shows nothing');
    assert.match(again.text, /shown once, right after it is created/);
    const listed = (await t.api(`/api/v1/publish/${site.slug}/tokens`, { key })).body.tokens;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].name, 'Web CI');
    assert.equal(Date.parse(listed[0].expiresAt) - Date.parse(listed[0].createdAt), 30 * 86_400_000);
    // It works for its site, and the site page lists it without the secret.
    const body = { files: [{ path: 'index.html', size: 3, contentType: 'text/html' }] };
    assert.equal(
      (await t.api(`/api/v1/publish/${site.slug}`, { method: 'PUT', key: token, body })).status,
      200,
    );
    const after = await b.request(`/dashboard/sites/${site.slug}`);
    assert.match(after.text, /<td data-label="Name">Web CI<\/td>/);
    assert.ok(!after.text.includes(token.slice(9)), 'the site page never shows the secret');
    // A bad name or lifetime comes back as a notice; nothing is created.
    const bad = await b.request('/dashboard/sites/tokens', {
      method: 'POST',
      form: { slug: site.slug, name: '<b>', days: '9999', _csrf: csrfOf(after.text) },
    });
    assert.equal(bad.status, 303);
    assert.match(decodeURIComponent(bad.headers.get('location') ?? ''), /INVALID_REQUEST/);
    // Revoke.
    const revoked = await b.request('/dashboard/sites/tokens/revoke', {
      method: 'POST',
      form: { slug: site.slug, id: listed[0].id, _csrf: csrfOf(after.text) },
    });
    assert.equal(revoked.status, 303);
    assert.equal(
      (await t.api(`/api/v1/publish/${site.slug}`, { method: 'PUT', key: token, body })).status,
      401,
    );
    // Another account's session cannot create tokens for the site.
    const other = new Browser(t);
    await signInWithBrowser(t, other, 'web-tokens-other@example.com');
    const dash = await other.request('/dashboard');
    const stolen = await other.request('/dashboard/sites/tokens', {
      method: 'POST',
      form: { slug: site.slug, name: 'mine', days: '90', _csrf: csrfOf(dash.text) },
    });
    assert.equal(stolen.status, 303);
    assert.match(decodeURIComponent(stolen.headers.get('location') ?? ''), /NOT_FOUND/);
    assert.deepEqual((await t.api(`/api/v1/publish/${site.slug}/tokens`, { key })).body.tokens, []);
  });

  test("the site page's expiry choice: keep leaves it, a duration sets it, never clears it; the link form offers the account's sites and mounts", async () => {
    const b = new Browser(t);
    const key = await signIn(t, 'expiry@example.com');
    const site = await publish(t, { 'index.html': '<p>expiring</p>' }, { key });
    await signInWithBrowser(t, b, 'expiry@example.com');
    const page = await b.request(`/dashboard/sites/${site.slug}`);
    assert.match(page.text, /<select id="ttl" name="ttl"><option value="keep">/);
    const save = (ttl: string) =>
      b.request('/dashboard/sites/metadata', {
        method: 'POST',
        form: { slug: site.slug, title: 'T', description: '', ttl, _csrf: csrfOf(page.text) },
      });
    const expiresAt = async () => (await t.api(`/api/v1/publish/${site.slug}`, { key })).body.expiresAt;

    assert.equal((await save('86400')).status, 303);
    const set = Date.parse(await expiresAt());
    assert.ok(Math.abs(set - (t.clock.now() + 86_400_000)) < 60_000, 'about a day from now');
    assert.equal((await save('keep')).status, 303);
    assert.equal(Date.parse(await expiresAt()), set, 'keep leaves the expiry alone');
    assert.equal((await save('never')).status, 303);
    assert.equal(await expiresAt(), null);
    const bad = await save('-5');
    assert.match(
      decodeURIComponent(bad.headers.get('location') ?? ''),
      /INVALID_REQUEST: ttlSeconds must be a positive/,
    );

    // No handle and no active domain: the dashboard says what links need instead of a form.
    const dash = await b.request('/dashboard');
    assert.match(dash.text, /Links need a handle \(Hobby\) or an active custom domain/);
    assert.doesNotMatch(dash.text, /id="link-slug"/);
  });

  test("the site page's versions link their preview hosts and aliases; Promote makes a preview live", async () => {
    const b = new Browser(t);
    const key = await signIn(t, 'previews-page@example.com');
    const site = await publish(t, { 'index.html': '<p>live</p>' }, { key });
    const next = await t.api(`/api/v1/publish/${site.slug}`, {
      method: 'PUT',
      key,
      body: { files: [{ path: 'a.txt', size: 1, contentType: 'text/plain' }] },
    });
    const versionId = next.body.upload.versionId;
    await fetch(next.body.upload.uploads[0].url.replace('//localhost:', '//127.0.0.1:'), {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    const fin = await t.api(`/api/v1/publish/${site.slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId, live: false, alias: 'staging' },
    });
    assert.equal(fin.status, 200, fin.text);
    await signInWithBrowser(t, b, 'previews-page@example.com');
    const page = await b.request(`/dashboard/sites/${site.slug}`);
    assert.ok(
      page.text.includes(
        `<a class="url" href="${fin.body.previewUrl}" rel="noopener" target="_blank">${fin.body.previewUrl.replace('--', '<span class="nowrap">--</span><wbr>')}</a>`,
      ),
      page.text,
    );
    assert.ok(
      page.text.includes(
        `<a href="http://${site.slug}--staging.localhost:${t.port}/" rel="noopener" target="_blank" aria-label="Open the alias staging">staging</a>`,
      ),
    );
    // Promote asks first: it changes what the site's visitors see.
    assert.match(page.text, /data-confirm="Make this version live\?/);
    assert.match(page.text, new RegExp(`aria-label="Promote ${versionId} to live">Promote</button>`));
    const promote = await b.request('/dashboard/sites/restore', {
      method: 'POST',
      form: { slug: site.slug, versionId, _csrf: csrfOf(page.text) },
    });
    assert.equal(promote.status, 303);
    const versions = (await t.api(`/api/v1/publish/${site.slug}/versions`, { key })).body.versions;
    assert.equal(versions.find((v: { current: boolean }) => v.current).versionId, versionId);
  });

  test('next= never leaves this host', async () => {
    const b = new Browser(t);
    const done = await signInWithBrowser(t, b, 'redirect@example.com', '//evil.example/x');
    assert.equal(done.headers.get('location'), '/dashboard');
  });

  // Each `next` as an attacker writes it in the query string of /login, and where the sign-in lands:
  // a path on this host (`/dashboard` when refused). Browsers drop tabs and newlines from a URL and read
  // `\` as `/` (WHATWG URL), so `/\t/evil.com` in a Location header would leave the host.
  const NEXT_VARIANTS: [query: string, landing: string][] = [
    ['/%09/evil.com/x', '/dashboard'],
    ['/%09%5Cevil.com', '/dashboard'],
    ['/%0a/evil.com/x', '/dashboard'],
    ['/%0d/evil.com/x', '/dashboard'],
    ['/%0d%0a/evil.com', '/dashboard'],
    ['/%0b/evil.com', '/dashboard'],
    ['/%00/evil.com', '/dashboard'],
    ['/%7f/evil.com', '/dashboard'],
    ['/%C2%85/evil.com', '/dashboard'],
    ['/%E2%80%A8/evil.com', '/dashboard'],
    ['/%E2%80%A9/evil.com', '/dashboard'],
    ['/%C2%A0/evil.com', '/dashboard'],
    ['/%20/evil.com', '/dashboard'],
    ['%20//evil.com', '/dashboard'],
    ['//evil.com', '/dashboard'],
    ['///evil.com', '/dashboard'],
    ['/%5Cevil.com', '/dashboard'],
    ['%5C%5Cevil.com', '/dashboard'],
    ['/%5C/evil.com', '/dashboard'],
    ['%2F%2Fevil.com', '/dashboard'],
    ['/.//evil.com', '/dashboard'],
    ['/..//evil.com', '/dashboard'],
    ['/%2e//evil.com', '/dashboard'],
    ['https:evil.com', '/dashboard'],
    ['https:/evil.com', '/dashboard'],
    ['http://evil.com/dashboard', '/dashboard'],
    ['HTTP://EVIL.COM', '/dashboard'],
    ['javascript:alert(1)', '/dashboard'],
    ['JaVaScRiPt:alert(1)', '/dashboard'],
    ['data:text/html,%3Cscript%3Ealert(1)%3C/script%3E', '/dashboard'],
    ['//%D0%B5vil.com', '/dashboard'],
    ['//xn--vil-8cd.com', '/dashboard'],
    ['/%D0%B5vil', '/dashboard'],
    ['//user@evil.com', '/dashboard'],
    ['http://127.0.0.1@evil.com/', '/dashboard'],
    [`/${'a'.repeat(600)}`, '/dashboard'],
    ['', '/dashboard'],
    // Paths on this host stay what they are (an encoded `//` or `@` is a harmless path here).
    ['/dashboard/sites/kept', '/dashboard/sites/kept'],
    ['%2Fdashboard%2Fsites%2Fkept%3Fdone%3Dyes', '/dashboard/sites/kept?done=yes'],
    ['/claim%3Fslug%3Dabc%26token%3Dclm_x', '/claim?slug=abc&token=clm_x'],
    ['/dashboard/sites/kept%23versions', '/dashboard/sites/kept#versions'],
    ['/%252F%252Fevil.com', '/%2F%2Fevil.com'],
    ['/@evil.com', '/@evil.com'],
  ];

  test(`next= variants (${NEXT_VARIANTS.length}): the Location after sign-in is a path on this host, never a 500`, async () => {
    assert.ok(NEXT_VARIANTS.length >= 30);
    const base = new URL(t.url);
    const field = (page: string, name: string) => {
      const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1];
      assert.ok(value !== undefined, `the page has a ${name} field`);
      return value.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)));
    };
    const failures: string[] = [];
    for (const [query, landing] of NEXT_VARIANTS) {
      const email = 'variants@example.com';
      const b = new Browser(t);
      // The way a browser goes: the link, the email form, the code form (each echoes `next`).
      const page = await b.request(`/login?next=${query}`);
      const sent = await b.request('/login', {
        method: 'POST',
        form: { email, next: field(page.text, 'next'), _csrf: csrfOf(page.text) },
      });
      const done = await b.request('/login/code', {
        method: 'POST',
        form: {
          email,
          code: lastCodeFor(t, email),
          next: field(sent.text, 'next'),
          _csrf: csrfOf(sent.text),
        },
      });
      // Signed in already: /login answers with the redirect at once.
      const again = await b.request(`/login?next=${query}`);
      const statuses = [page.status, sent.status, done.status, again.status];
      const locations = [done.headers.get('location'), again.headers.get('location')];
      const ok =
        statuses.join() === '200,200,303,303' &&
        locations.every((l) => l === landing && new URL(l, base).origin === base.origin);
      if (!ok) failures.push(`${JSON.stringify(query)}: ${statuses.join()} -> ${locations.join(' | ')}`);
    }
    assert.deepEqual(failures, []);
  });
});

describe('web sessions under an https BASE_URL', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ BASE_URL: 'https://slipway.test', SITE_DOMAIN: 'sites.slipway.test' });
  });
  after(() => t.close());

  test('the session and nonce cookies are __Host- cookies, so a sibling site cannot set or shadow them', async () => {
    const b = new Browser(t);
    const page = await b.request('/login');
    const nonce = page.headers.getSetCookie().find((c) => c.includes('slipway_csrf='));
    assert.match(
      String(nonce),
      /^__Host-slipway_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/,
    );
    const done = await signInWithBrowser(t, b, 'host-prefix@example.com');
    const session = done.headers.getSetCookie().find((c) => c.includes('slipway_session='));
    assert.match(String(session), /^__Host-slipway_session=[^;]+;.*Secure/);
    assert.doesNotMatch(String(session), /Domain=/i);
    // A site under the same parent sets `slipway_session` for the parent domain: the browser sends it
    // first (a longer Path), and the visitor still reaches their own dashboard.
    const own = b.cookies.get('__Host-slipway_session')!;
    const shadowed = await b.request('/dashboard', {
      headers: { cookie: `slipway_session=attacker-session; __Host-slipway_session=${own}` },
    });
    assert.equal(shadowed.status, 200);
    assert.match(shadowed.text, /host-prefix@example\.com/);
  });
});
