// The dashboard's analytics (issue 25) in headless Chromium at desktop and phone width: the site list
// shows each site's visitors of the last 7 days; a site's analytics page draws the chart on the server
// (SVG, no script needed), lists top pages, referrers and 404s, switches between 24 h / 7 d / 30 d, and
// switches counting off. No console errors, no foreign requests, nothing wider than the phone.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lastCodeFor, rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, startBrowser } from '../helpers/browser.js';
import { assertPublished, publish } from '../helpers/publish.js';

let t: TestApp;
let browser: BrowserHarness;
let slug: string;
let previewHost: string;
const EMAIL = 'analytics-browser@example.com';
const UA = (n: number) => `Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/13${n}.0`;

before(async () => {
  t = await startTestApp({ ANALYTICS_FLUSH_S: '3600' });
  browser = await startBrowser();
  const key = await signIn(t, EMAIL);
  const published = assertPublished(
    await publish(
      t,
      {
        'index.html': '<h1>home</h1>',
        'docs/index.html': '<h1>docs</h1>',
        'a-rather-long-page-name-for-phones.html': '<p>x</p>',
      },
      { key },
    ),
  );
  slug = published.slug;
  previewHost = new URL(published.finalize!.body.previewUrl as string).hostname;
  const host = `${slug}.${t.ctx.config.siteHost}`;
  for (let v = 0; v < 3; v++) {
    for (const path of ['/', '/docs/', '/a-rather-long-page-name-for-phones.html', '/missing.png'])
      await rawRequest(t.port, {
        host,
        path,
        headers: {
          'user-agent': UA(v),
          referer: v === 0 ? 'https://news.example.org/' : 'https://search.example.com/',
        },
      });
  }
  // The first visitor again, through the version's preview host: one more page view, no new visitor.
  await rawRequest(t.port, { host: previewHost, path: '/', headers: { 'user-agent': UA(0) } });
  await t.service.analytics!.flush();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

async function signInThroughPages(p: BrowserPage) {
  await p.page.goto(`${p.baseUrl}/login`);
  await p.page.fill('#email', EMAIL);
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('#code');
  await p.page.fill('#code', lastCodeFor(t, EMAIL));
  await p.page.click('button[type=submit]');
  await p.page.waitForURL(`${p.baseUrl}/dashboard`);
}

for (const mobile of [false, true]) {
  test(`the site list and a site's analytics page (${mobile ? 'phone' : 'desktop'})`, async () => {
    const p = await browser.page(t, { mobile });
    try {
      await signInThroughPages(p);
      const cell = p.page.locator(`a[href="/dashboard/sites/${slug}/analytics"]`).first();
      assert.equal((await cell.textContent())?.trim(), '3', 'three visitors in the last 7 days');
      await p.screenshot('analytics-site-list');
      await cell.click();
      await p.page.waitForSelector('svg.chart');
      const totals = await p.page.locator('p.totals').textContent();
      assert.match(totals ?? '', /3 visitors · 10 page views · 3 not found/);
      // One pair of bars per day of the 7 days, drawn by the server.
      assert.equal(await p.page.locator('svg.chart rect').count(), 14);
      const pages = await p.page.locator('table.stack').nth(1).textContent();
      assert.match(pages ?? '', /\/docs\//);
      assert.match(await p.page.content(), /news\.example\.org/);
      assert.match(await p.page.content(), /\/missing\.png/);
      // Reached at two hosts: the table of hosts shows both.
      const hosts = await p.page.locator('table.stack').last().textContent();
      assert.match(hosts ?? '', new RegExp(`${previewHost.replaceAll('.', '\\.')}\\s*1`));
      const overflow = (await p.page.evaluate(
        'document.documentElement.scrollWidth - window.innerWidth',
      )) as number;
      assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
      await p.screenshot('analytics-7d');
      await p.page.click('text=24 hours');
      await p.page.waitForURL(/range=24h/);
      assert.equal(await p.page.locator('svg.chart rect').count(), 48);
      await p.screenshot('analytics-24h');
      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}

test('the page works without JavaScript, and switches counting off and on', async () => {
  const p = await browser.page(t);
  try {
    await signInThroughPages(p);
    await p.page.goto(`${p.baseUrl}/dashboard/sites/${slug}/analytics?range=30d`);
    assert.equal(await p.page.locator('svg.chart rect').count(), 60);
    await p.page.click('text=Switch counting off');
    await p.page.waitForSelector('text=Counting is switched off for this site');
    await p.screenshot('analytics-off');
    const host = `${slug}.${t.ctx.config.siteHost}`;
    await rawRequest(t.port, { host, path: '/', headers: { 'user-agent': UA(9) } });
    await t.service.analytics!.flush();
    await p.page.reload();
    assert.match((await p.page.locator('p.totals').textContent()) ?? '', /10 page views/);
    await p.page.click('text=Switch counting on');
    await p.page.waitForSelector('text=Counting is on.');
    assert.deepEqual(p.errors, []);
    // Another account's site is not found.
    await p.page.goto(`${p.baseUrl}/dashboard/sites/no-such-site-zz/analytics`);
    assert.match(await p.page.content(), /Site not found/);
  } finally {
    await p.close();
  }
});
