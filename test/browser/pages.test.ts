// The web pages in headless Chromium (issue 14): the landing page and the API docs at desktop and phone
// widths, and a keyboard-only sign-in with the emailed code that lands on the dashboard. No console
// errors (the strict CSP would log them) and no request to any other host.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lastCodeFor, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';

let t: TestApp;
let browser: BrowserHarness;

before(async () => {
  t = await startTestApp();
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

for (const mobile of [false, true]) {
  const width = mobile ? 'phone' : 'desktop';

  test(`the landing page and /docs render with their own assets only (${width})`, async () => {
    const p = await browser.page(t, { mobile });
    try {
      const home = await p.page.goto(`${p.baseUrl}/`);
      assert.equal(home?.status(), 200);
      assert.match((await p.page.textContent('h1')) ?? '', /Slipway/);
      assert.match((await p.page.textContent('pre')) ?? '', new RegExp(`${p.baseUrl}/api/v1/publish`));
      await p.screenshot('landing');

      const docs = await p.page.goto(`${p.baseUrl}/docs`);
      assert.equal(docs?.status(), 200);
      await p.page.waitForSelector('.opblock', { timeout: 15_000 });
      assert.ok((await p.page.locator('.opblock').count()) > 30, 'every endpoint is rendered');
      await p.screenshot('docs');

      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}

test('keyboard-only sign-in with the emailed code lands on the dashboard', async () => {
  const p = await browser.page(t);
  try {
    await p.page.goto(`${p.baseUrl}/login`);
    await p.screenshot('login');
    // The email field has focus; type, then Enter submits.
    await p.page.keyboard.type('keyboard@example.com');
    await p.page.keyboard.press('Enter');
    await p.page.waitForSelector('#code');
    await p.page.keyboard.type(lastCodeFor(t, 'keyboard@example.com'));
    await p.page.keyboard.press('Enter');
    await p.page.waitForURL(`${p.baseUrl}/dashboard`);
    assert.match((await p.page.textContent('main')) ?? '', /keyboard@example\.com/);
    await p.screenshot('dashboard');
    // Tab reaches the sign-out button, and Enter signs out.
    let focused = '';
    for (let i = 0; i < 60 && focused !== 'Sign out'; i++) {
      await p.page.keyboard.press('Tab');
      focused = String(
        await p.page.evaluate('document.activeElement ? document.activeElement.textContent : ""'),
      ).trim();
    }
    assert.equal(focused, 'Sign out');
    await p.page.keyboard.press('Enter');
    await p.page.waitForURL(`${p.baseUrl}/`);
    assert.deepEqual(p.errors, []);
    assert.deepEqual(p.foreignRequests, []);
  } finally {
    await p.close();
  }
});
