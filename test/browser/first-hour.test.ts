// The dashboard a new user meets, in headless Chromium (issue 21, item 4), at desktop and phone widths:
// a refused first publish shown as not published, a live site, a site of 61 files (collapsed); the
// page's icon loads and no request of the pages answers 404; the "check your email" page names the
// dev mailer's outbox. Screenshots in test-artifacts/screenshots/first-hour-*.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, startBrowser } from '../helpers/browser.js';
import { assertPublished, type Files, manifestOf, publish, putUpload } from '../helpers/publish.js';

let t: TestApp;
let browser: BrowserHarness;
const EMAIL = 'first-hour@example.com';
let refusedSlug = '';
let manySlug = '';

/** A publish whose uploads go one at a time (the upload cap is 16 at once per address). */
async function publishOneByOne(key: string, files: Files): Promise<string> {
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
  const done = await t.api(`/api/v1/publish/${create.body.slug}/finalize`, {
    method: 'POST',
    key,
    body: { versionId: create.body.upload.versionId },
  });
  assert.equal(done.status, 200, done.text);
  return create.body.slug as string;
}

before(async () => {
  t = await startTestApp();
  browser = await startBrowser();
  const key = await signIn(t, EMAIL);
  assertPublished(await publish(t, { 'index.html': `<p>${'live '.repeat(3000)}</p>` }, { key }));
  const secret = `sk_live_${randomBytes(24).toString('hex')}`;
  const refused = await publish(t, { 'index.html': `<script>const k = "${secret}";</script>` }, { key });
  assert.equal(refused.finalize?.body.code, 'SECRET_DETECTED');
  refusedSlug = refused.slug;
  const files: Files = { 'index.html': '<h1>many</h1>' };
  for (let i = 0; i < 60; i++) files[`docs/page-${String(i).padStart(2, '0')}.html`] = `<p>page ${i}</p>`;
  manySlug = await publishOneByOne(key, files);
});

after(async () => {
  await browser?.close();
  await t?.close();
});

/** Signs in through the pages with the dev mailer's code; records every answer of 400 and above. */
async function signedIn(p: BrowserPage): Promise<string[]> {
  const failed: string[] = [];
  p.page.on('response', (res) => {
    if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
  });
  await p.page.goto(`${p.baseUrl}/login`);
  await p.page.fill('#email', EMAIL);
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('#code');
  assert.match((await p.page.textContent('main')) ?? '', /outbox\.log/);
  await p.screenshot('first-hour-check-email');
  await p.page.fill('#code', lastCodeFor(t, EMAIL));
  await p.page.click('button[type=submit]');
  await p.page.waitForURL(`${p.baseUrl}/dashboard`);
  return failed;
}

/** The status of each request whose path matches, from the service's request log. */
function answersTo(path: RegExp, from = 0): Array<{ url: string; status: number }> {
  const urls = new Map<string, string>();
  const answers: Array<{ url: string; status: number }> = [];
  for (const line of t.logs.slice(from)) {
    const entry = JSON.parse(line) as { reqId?: string; req?: { url: string }; res?: { statusCode: number } };
    if (!entry.reqId) continue;
    if (entry.req) urls.set(entry.reqId, entry.req.url);
    const url = urls.get(entry.reqId);
    if (entry.res && url && path.test(url)) answers.push({ url, status: entry.res.statusCode });
  }
  return answers;
}

async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

for (const mobile of [false, true]) {
  test(`dashboard of a new user (${mobile ? 'phone' : 'desktop'}): not-published site, sizes, icon, files collapsed`, async () => {
    const p = await browser.page(t, { mobile });
    const from = t.logs.length;
    try {
      const failed = await signedIn(p);
      const row = p.page.locator('tr', { has: p.page.locator(`a[href="/dashboard/sites/${refusedSlug}"]`) });
      assert.match((await row.textContent()) ?? '', /Not published yet/);
      assert.match((await p.page.textContent('main')) ?? '', /\d+(\.\d)? KB/);
      await p.screenshot('first-hour-dashboard');

      // The icon the page names is what the browser asks for by itself, and it loads: the service's
      // log has each request the browser made (favicon requests are the browser's, not the page's).
      assert.equal(await p.page.getAttribute('link[rel=icon]', 'href'), '/favicon.svg');
      const iconAnswers = await waitFor(() => {
        const answers = answersTo(/^\/favicon\./, from);
        return answers.length > 0 ? answers : undefined;
      });
      assert.ok(
        iconAnswers.every((a) => a.status === 200),
        JSON.stringify(iconAnswers),
      );

      await p.page.goto(`${p.baseUrl}/dashboard/sites/${manySlug}`);
      assert.equal(await p.page.locator('details#files').getAttribute('open'), null, 'collapsed');
      assert.ok(
        await p.page.isVisible('#password'),
        'the settings are on the first screen, the 61 files are not in the way',
      );
      assert.equal(await p.page.isVisible('td:text-is("docs/page-00.html")'), false);
      await p.screenshot('first-hour-site-many-files');
      await p.page.click('details#files summary');
      assert.ok(await p.page.isVisible('td:text-is("docs/page-00.html")'));

      await p.page.goto(`${p.baseUrl}/dashboard/sites/${refusedSlug}`);
      assert.match((await p.page.textContent('main')) ?? '', /the last publish was refused: secrets found/);
      await p.screenshot('first-hour-site-refused');

      assert.deepEqual(failed, [], 'no request of the pages failed');
      assert.deepEqual(
        answersTo(/./, from).filter((a) => a.status >= 400),
        [],
        'no request the browser made (icons included) answered an error',
      );
      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}

test('a claim link at phone width: "Sign in to claim <slug>", then the code page says the same', async () => {
  const anon = assertPublished(await publish(t, { 'index.html': '<p>to claim</p>' }));
  const p = await browser.page(t, { mobile: true });
  try {
    await p.page.goto(anon.create.body.claimUrl as string);
    await p.page.waitForSelector(`h1:text-is("Sign in to claim ${anon.slug}")`);
    await p.screenshot('first-hour-claim-sign-in');
    await p.page.fill('#email', 'claim-phone@example.com');
    await p.page.click('button[type=submit]');
    await p.page.waitForSelector('#code');
    assert.match((await p.page.textContent('main')) ?? '', new RegExp(`then you can claim ${anon.slug}`));
    await p.page.fill('#code', lastCodeFor(t, 'claim-phone@example.com'));
    await p.page.click('button[type=submit]');
    await p.page.waitForSelector(`button:text-is("Claim ${anon.slug}")`);
    assert.deepEqual(p.errors, []);
  } finally {
    await p.close();
  }
});
