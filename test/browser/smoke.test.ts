// Proves the browser harness: a site published anonymously opens in headless Chromium, the health
// check answers through BASE_URL, nothing logs an error or reaches past the machine.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';
import { assertPublished, publish } from '../helpers/publish.js';

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

const SITE = {
  'index.html':
    '<!doctype html><html><head><meta charset="utf-8"><title>Smoke</title>' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<link rel="stylesheet" href="style.css"></head>' +
    '<body><h1>Hello from the smoke test</h1><p id="js">script did not run</p>' +
    '<script src="app.js"></script></body></html>',
  'style.css': 'body { font-family: sans-serif; margin: 2rem; } h1 { color: #0a5; }',
  'app.js': 'document.getElementById("js").textContent = "script ran";',
};

for (const mobile of [false, true]) {
  test(`a published site and /healthz open cleanly (${mobile ? 'phone' : 'desktop'})`, async () => {
    const { slug } = assertPublished(await publish(t, SITE));
    const p = await browser.page(t, { mobile });
    try {
      const site = await p.page.goto(`${p.siteUrl(slug)}/`);
      assert.equal(site?.status(), 200);
      assert.equal(await p.page.title(), 'Smoke');
      assert.equal(await p.page.textContent('h1'), 'Hello from the smoke test');
      assert.equal(await p.page.textContent('#js'), 'script ran');
      const path = await p.screenshot('smoke-site');
      assert.match(path, new RegExp(`smoke-site-${mobile ? 'phone' : 'desktop'}\\.png$`));

      const health = await p.page.goto(`${p.baseUrl}/healthz`);
      assert.equal(health?.status(), 200);
      assert.deepEqual(JSON.parse(await p.page.innerText('body')), { ok: true });

      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}

test('the harness records console errors, page errors and foreign requests', async () => {
  const { slug } = assertPublished(
    await publish(t, {
      'index.html':
        '<!doctype html><html><head><meta charset="utf-8"><title>Leaky</title>' +
        '<link rel="stylesheet" href="https://cdn.example.com/x.css"></head>' +
        '<body><p>leaky</p><script>console.error("boom"); setTimeout(() => { throw new Error("kaput"); });</script>' +
        '</body></html>',
    }),
  );
  const p = await browser.page(t);
  try {
    await p.page.goto(`${p.siteUrl(slug)}/`);
    // The page error is thrown from a timer: give it a moment to arrive.
    for (let i = 0; i < 50 && !p.errors.some((e) => e.includes('kaput')); i++)
      await p.page.waitForTimeout(20);
    assert.deepEqual(p.foreignRequests, ['https://cdn.example.com/x.css']);
    assert.ok(
      p.errors.some((e) => e.includes('boom')),
      p.errors.join('\n'),
    );
    assert.ok(
      p.errors.some((e) => e.startsWith('pageerror:') && e.includes('kaput')),
      p.errors.join('\n'),
    );
  } finally {
    await p.close();
  }
});
