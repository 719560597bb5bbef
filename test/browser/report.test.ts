// The abuse report form in headless Chromium (issue 26), at desktop and phone widths: reached from a
// site's 404 page, filled with the keyboard, sent without JavaScript too; the report reaches the
// operators' list; no console errors and no request to another host.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';
import { assertPublished, publish } from '../helpers/publish.js';

let t: TestApp;
let browser: BrowserHarness;
let slug: string;

before(async () => {
  t = await startTestApp({ ABUSE_CONTACT: 'abuse@example.com' });
  browser = await startBrowser();
  slug = assertPublished(await publish(t, { 'index.html': '<h1>suspicious</h1>' })).slug;
});

after(async () => {
  await browser?.close();
  await t?.close();
});

for (const mobile of [false, true]) {
  const width = mobile ? 'phone' : 'desktop';

  test(`a visitor reports a site from its 404 page with the keyboard (${width})`, async () => {
    const p = await browser.page(t, { mobile });
    try {
      const missing = await p.page.goto(`${p.siteUrl(slug)}/login-copy.html`);
      assert.equal(missing?.status(), 404);
      await p.screenshot('site-404-report-link');
      await p.page.click('text=Report abuse');
      await p.page.waitForURL(/\/report/);
      assert.match((await p.page.textContent('h1')) ?? '', /Report abuse/);
      assert.match((await p.page.textContent('main')) ?? '', /abuse@example\.com/);

      await p.page.fill('#url', `${p.siteUrl(slug)}/`);
      await p.page.focus('#category');
      await p.page.selectOption('#category', 'phishing');
      await p.page.fill('#details', `Asks for a bank password (${width}). <b>not bold</b>`);
      await p.page.fill('#contact', 'visitor@example.org');
      await p.screenshot('report-form');
      await p.page.focus('button[type=submit]');
      await p.page.keyboard.press('Enter');
      await p.page.waitForSelector('text=Thank you');
      assert.match((await p.page.textContent('main')) ?? '', /rpt_/);
      await p.screenshot('report-sent');

      // An invalid address comes back with the message and what was typed.
      await p.page.goto(`${p.baseUrl}/report`);
      await p.page.fill('#url', 'https://example.com/elsewhere');
      await p.page.selectOption('#category', 'spam');
      await p.page.fill('#details', 'spam');
      await p.page.click('button[type=submit]');
      await p.page.waitForSelector('[role=alert]');
      assert.match((await p.page.textContent('[role=alert]')) ?? '', /not a site on this service/);
      assert.equal(await p.page.inputValue('#details'), 'spam');
      await p.screenshot('report-refused');

      // The 404 and the refused form's 400 are what Chromium logs as failed loads; nothing else may appear.
      assert.deepEqual(
        p.errors.filter(
          (e) => !/Failed to load resource: the server responded with a status of (404|400)/.test(e),
        ),
        [],
      );
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}

test('the form works with JavaScript off', async () => {
  const context = await browser.browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(
      `${t.ctx.config.baseUrl}/report?url=${encodeURIComponent(`http://${slug}.localhost:${t.port}/`)}`,
    );
    await page.selectOption('#category', 'malware');
    await page.fill('#details', 'A download that is not what it says.');
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Thank you');
    const stored = await t.ctx.db.kysely
      .selectFrom('reports')
      .select(['category', 'site_slug'])
      .where('category', '=', 'malware')
      .execute();
    assert.deepEqual(stored, [{ category: 'malware', site_slug: slug }]);
  } finally {
    await context.close();
  }
});
