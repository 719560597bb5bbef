// A handle passes to another account: the service worker the old owner's page registered on the handle
// host must not go on answering for the new owner's sites (it read their password-protected page and the
// password typed into it; issue 19, attack pass). The browser's update check of the old worker gets a
// script that unregisters it.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';
import { upgradeToHobby } from '../helpers/hobby.js';
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

const OLD_WORKER = `self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  if (e.request.mode !== 'navigate') return;
  e.respondWith(new Response('<title>old</title><h1>Served by the old owner’s worker</h1>', { headers: { 'content-type': 'text/html' } }));
});`;

async function linkedOnHandle(key: string, handle: string, files: Record<string, string>) {
  await upgradeToHobby(t, key);
  const put = await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } });
  assert.equal(put.status, 200, put.text);
  const slug = assertPublished(await publish(t, files, { key })).slug;
  const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug } });
  assert.equal(link.status, 201, link.text);
  return slug;
}

test('the old owner’s service worker on a handle is unregistered once the handle serves someone else', async () => {
  const bob = await signIn(t, 'sw-bob@example.com');
  await linkedOnHandle(bob, 'sw-shared', {
    'index.html': `<title>bob</title><script>navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => { document.title = 'registered'; });</script>`,
    'sw.js': OLD_WORKER,
  });
  const p = await browser.page(t, { serviceWorkers: true });
  try {
    const handleUrl = `${t.ctx.config.scheme}://sw-shared.${t.ctx.config.siteDomain}/`;
    await p.page.goto(handleUrl);
    await p.page.waitForFunction("document.title === 'registered'");
    await p.page.goto(handleUrl);
    assert.equal(await p.page.title(), 'old', 'the worker answers for the handle (the set-up of the attack)');

    // Bob moves to another handle; Alice takes this one for a password-protected site of hers.
    assert.equal(
      (await t.api('/api/v1/handle', { method: 'PUT', key: bob, body: { handle: 'sw-bob-two' } })).status,
      200,
    );
    const alice = await signIn(t, 'sw-alice@example.com');
    const slug = await linkedOnHandle(alice, 'sw-shared', {
      'index.html': '<title>alice</title><p>private</p>',
    });
    const meta = await t.api(`/api/v1/publish/${slug}/metadata`, {
      method: 'PATCH',
      key: alice,
      body: { password: 'alice-secret' },
    });
    assert.equal(meta.status, 200, meta.text);

    // The returning visitor: the old worker still answers, until the browser checks it for an update,
    // which Chromium does on navigations once the worker is idle; the page asks for that check at once.
    await p.page.goto(handleUrl);
    await p.page
      .evaluate('navigator.serviceWorker.getRegistration().then((r) => r && r.update())')
      .catch(() => {}); // the reload of the unregistering worker may come first
    let registrations = 1;
    for (let i = 0; i < 50 && registrations > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      // The unregistering worker reloads the page it controlled: an evaluation may meet that navigation.
      registrations = await p.page
        .evaluate('navigator.serviceWorker.getRegistrations().then((r) => r.length)')
        .then(Number, () => registrations);
    }
    assert.equal(registrations, 0, 'the old worker is still registered');
    const res = await p.page.goto(handleUrl);
    assert.equal(res?.fromServiceWorker(), false);
    assert.equal(res?.status(), 401, 'Alice’s password page, from the service itself');
    assert.doesNotMatch(await p.page.content(), /old owner/);
    await p.screenshot('handle-after-worker');
  } finally {
    await p.close();
  }
});
