// Issue 21 item 0 in a browser: visiting /docs (its page fetches /api/openapi.json) spends nothing of the
// anonymous window, and /docs still renders once that window is spent (no "Failed to load API definition").

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';

let t: TestApp;
let browser: BrowserHarness;

before(async () => {
  t = await startTestApp({ RATE_LIMIT_ANONYMOUS: '5' });
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

test('/docs visits do not spend the anonymous window, and /docs renders after it is spent', async () => {
  const p = await browser.page(t);
  try {
    const renders = async () => {
      const definition = p.page.waitForResponse((r) => r.url().endsWith('/api/openapi.json'));
      assert.equal((await p.page.goto(`${p.baseUrl}/docs`))?.status(), 200);
      assert.equal((await definition).status(), 200);
      await p.page.waitForSelector('.opblock', { timeout: 15_000 });
      assert.doesNotMatch((await p.page.textContent('body')) ?? '', /Failed to load API definition/);
    };
    for (let i = 0; i < 3; i++) await renders();
    // A new user's sign-in after three /docs visits still has the whole window but this call.
    const signInCall = await t.api('/api/auth/agent/request-code', {
      method: 'POST',
      body: { email: 'docs-reader@example.com' },
    });
    assert.equal(signInCall.headers.get('x-ratelimit-remaining'), '4');
    for (let i = 0; i < 5; i++) await t.api('/api/v1/nothing-here');
    assert.equal((await t.api('/api/v1/nothing-here')).status, 429);
    await renders();
    assert.deepEqual(p.foreignRequests, []);
  } finally {
    await p.close();
  }
});
