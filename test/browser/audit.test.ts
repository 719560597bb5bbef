// The dashboard's Activity log in headless Chromium (issue 26): after changes made with the API key and in
// the dashboard, the signed-in owner follows "Activity log" from the dashboard and reads them, newest
// first, with who, from where and what; no variable value on the page; no console errors or foreign
// requests. Screenshots test-artifacts/screenshots/audit-log-{desktop,phone}.png.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, startBrowser } from '../helpers/browser.js';
import { assertPublished, publish } from '../helpers/publish.js';

let t: TestApp;
let browser: BrowserHarness;
const EMAIL = 'log-reader@example.com';
const VALUE = 'sk-browser-visible-never-0011';

before(async () => {
  t = await startTestApp();
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function signInThroughPages(p: BrowserPage) {
  await p.page.goto(`${p.baseUrl}/login?next=/dashboard`);
  await p.page.fill('#email', EMAIL);
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('#code');
  await p.page.fill('#code', lastCodeFor(t, EMAIL));
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('text=Your sites');
}

test('the owner reads the activity log from the dashboard, at desktop and phone width', async () => {
  const key = await signIn(t, EMAIL);
  const slug = assertPublished(await publish(t, { 'index.html': '<h1>logged</h1>' }, { key })).slug;
  const put = await t.api(`/api/v1/publish/${slug}/variables`, {
    method: 'PUT',
    key,
    body: { STRIPE_KEY: VALUE },
  });
  assert.equal(put.status, 200, put.text);
  await t.api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', key, body: { title: 'Logged site' } });

  for (const mobile of [false, true]) {
    const p = await browser.page(t, { mobile });
    try {
      await signInThroughPages(p);
      await p.page.click('a:text-is("Activity log")');
      await p.page.waitForSelector('h1:text-is("Activity log")');
      const rows = p.page.locator('tbody tr');
      assert.ok((await rows.count()) >= 4);
      // Newest first: the metadata change, then the variable, then the publish.
      const text = (await p.page.locator('tbody').textContent()) ?? '';
      assert.ok(text.indexOf('site.update') < text.indexOf('variable.set'));
      assert.ok(text.indexOf('variable.set') < text.indexOf('site.create'));
      assert.match(text, /STRIPE_KEY/);
      assert.ok(!(await p.page.content()).includes(VALUE), 'no variable value on the page');
      assert.match(text, /API key/);
      await p.screenshot('audit-log');
      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  }
});
