// A site's page in headless Chromium, as its owner uses it for CI and previews (issue 24): signed in
// through the real pages, with a live version and a preview behind the alias `pr-42`, they create a
// deploy token (shown once, on a page no cache keeps; gone after a reload), revoke it (after a
// question), open a preview link from the versions list and promote the preview (after a question).
// At desktop and phone widths, with screenshots of each step in test-artifacts/screenshots/site-ci-*.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, SCREENSHOT_DIR, startBrowser } from '../helpers/browser.js';
import { assertPublished, publish, update } from '../helpers/publish.js';

let t: TestApp;
let browser: BrowserHarness;
let key: string;
const email = 'ci-owner@example.com';

before(async () => {
  t = await startTestApp();
  browser = await startBrowser();
  // The API key publishes; the browser then signs in through the pages (a page sign-in keeps the key).
  key = await signIn(t, email);
});

after(async () => {
  await browser?.close();
  await t?.close();
});

/** A site with a live version and a preview (not live) that the alias `pr-42` points at. */
async function siteWithPreview(): Promise<{ slug: string; liveId: string; previewId: string }> {
  const live = assertPublished(await publish(t, { 'index.html': '<h1>the live one</h1>' }, { key }));
  const next = await update(
    t,
    key,
    live.slug,
    { 'index.html': '<h1>the preview one</h1>' },
    { finalize: false },
  );
  const fin = await t.api(`/api/v1/publish/${live.slug}/finalize`, {
    method: 'POST',
    key,
    body: { versionId: next.versionId, live: false, alias: 'pr-42' },
  });
  assert.equal(fin.status, 200, fin.text);
  assert.equal(fin.body.live, false);
  return { slug: live.slug, liveId: live.versionId, previewId: next.versionId };
}

async function signInThroughPages(p: BrowserPage) {
  await p.page.goto(`${p.baseUrl}/login`);
  await p.page.fill('#email', email);
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('#code');
  await p.page.fill('#code', lastCodeFor(t, email));
  await p.page.click('button[type=submit]');
  await p.page.waitForURL(`${p.baseUrl}/dashboard`);
}

/** Answers the next dialog (a data-confirm question) and returns its message. */
function answerNextDialog(p: BrowserPage, accept: boolean): Promise<string> {
  return new Promise((resolve) =>
    p.page.once('dialog', (d) => {
      resolve(d.message());
      void (accept ? d.accept() : d.dismiss());
    }),
  );
}

/** Whether any part of the page sticks out past the viewport's right edge (a horizontal scroll). */
const overflowsSideways = (p: BrowserPage) =>
  p.page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');

for (const mobile of [false, true]) {
  const width = mobile ? 'phone' : 'desktop';

  test(`deploy tokens and previews on a site's page (${width})`, async () => {
    const { slug, liveId, previewId } = await siteWithPreview();
    const p = await browser.page(t, { mobile });
    /** The whole page, and the two sections this test is about (a phone's full page is very tall). */
    const shot = async (step: string, sections: string[] = []) => {
      await p.screenshot(`site-ci-${step}`);
      for (const id of sections) {
        const section = p.page.locator(`section#${id}`);
        await section.screenshot({ path: join(SCREENSHOT_DIR, `site-ci-${step}-${id}-${width}.png`) });
      }
    };
    try {
      await signInThroughPages(p);
      await p.page.goto(`${p.baseUrl}/dashboard/sites/${slug}`);
      const tokens = p.page.locator('section#deploy-tokens');
      await shot('1-site-page', ['deploy-tokens', 'versions']);
      // No token yet: the section says so, and what one is for.
      assert.match((await tokens.textContent()) ?? '', /No deploy tokens yet/);
      assert.equal(await overflowsSideways(p), false, 'the site page fits the viewport');

      // Create a token: it is shown once, with a Copy button, on a page no cache keeps.
      await p.page.fill('#token-name', 'GitHub Actions');
      await p.page.selectOption('#token-days', '30');
      const [shown] = await Promise.all([
        p.page.waitForResponse((r) => r.url().endsWith(`/dashboard/sites/${slug}/new-token`)),
        p.page.click('button:text-is("Create token")'),
      ]);
      assert.equal(shown.headers()['cache-control'], 'no-store');
      const token = ((await p.page.textContent('#deploy-token')) ?? '').trim();
      assert.match(token, /^svc_site_[0-9a-f]{32}$/);
      // What the CI job needs besides the secret: this service's address (the CLI's default is localhost).
      assert.match((await p.page.textContent('main')) ?? '', new RegExp(`SLIPWAY_URL=${p.baseUrl}`));
      await p.page.waitForSelector('button.copy:text-is("Copy")');
      await shot('2-token-once');
      assert.equal(await overflowsSideways(p), false, 'the token page fits the viewport');
      // The Copy button puts exactly the token on the clipboard.
      await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.baseUrl });
      await p.page.locator('button.copy').first().click();
      await p.page.waitForSelector('button.copy:text-is("Copied")');
      assert.equal(await p.page.evaluate('navigator.clipboard.readText()'), token);
      // The token publishes this site (a known credential the API answers 403 on the account, not 401).
      assert.equal((await t.api('/api/v1/account', { key: token })).status, 403);

      // Reloading the page does not show it again, nor create another.
      await p.page.reload();
      await p.page.waitForSelector('text=shown once');
      assert.equal((await p.page.content()).includes(token), false, 'a reload does not show the token');
      await shot('2b-token-reloaded');
      const listed = await t.api(`/api/v1/publish/${slug}/tokens`, { key });
      assert.deepEqual(
        listed.body.tokens.map((tk: { name: string }) => tk.name),
        ['GitHub Actions'],
      );

      // Back on the site page, and after a reload: the token is listed by name, its secret nowhere.
      await p.page.click(`a:text-is("Back to ${slug}")`);
      await p.page.waitForURL(`${p.baseUrl}/dashboard/sites/${slug}`);
      await p.page.reload();
      const html = await p.page.content();
      assert.equal(html.includes(token), false, 'the token is not shown again');
      const row = tokens.locator('tr', { hasText: 'GitHub Actions' });
      await shot('3-token-listed', ['deploy-tokens']);
      // Its one use so far (the call above) shows as its last use.
      assert.doesNotMatch((await row.locator('td[data-label="Last used"]').textContent()) ?? '', /never/);

      // Revoke asks first; declining keeps the token working.
      const declined = answerNextDialog(p, false);
      await row.locator('button:text-is("Revoke")').click();
      assert.match(await declined, /Revoke GitHub Actions\?/);
      await p.page.evaluate('1');
      assert.equal((await t.api('/api/v1/account', { key: token })).status, 403);
      const accepted = answerNextDialog(p, true);
      await row.locator('button:text-is("Revoke")').click();
      await accepted;
      await p.page.waitForSelector('text=revoked');
      assert.equal(
        (await t.api('/api/v1/account', { key: token })).status,
        401,
        'a revoked token is unknown',
      );
      assert.match((await tokens.textContent()) ?? '', /No deploy tokens yet/);
      await shot('4-token-revoked', ['deploy-tokens']);

      // The versions list: the live one is marked, the preview has its link and its alias.
      const versions = p.page.locator('section#versions');
      const preview = versions.locator('tr', { hasText: previewId });
      const current = versions.locator('tr', { hasText: liveId });
      assert.match((await current.textContent()) ?? '', /live/);
      assert.match((await preview.textContent()) ?? '', /pr-42/);
      assert.equal(await current.locator('button:text-is("Promote")').count(), 0);
      await shot('5-versions', ['versions']);

      // The address shown is the address opened.
      const link = preview.locator('td[data-label="Preview"] a');
      assert.equal(await link.textContent(), await link.getAttribute('href'));
      // The preview link opens the preview (in a new tab), the alias link too; the live site is unchanged.
      const [tab] = await Promise.all([p.context.waitForEvent('page'), link.click()]);
      await tab.waitForLoadState();
      assert.equal(await tab.textContent('h1'), 'the preview one');
      assert.match(new URL(tab.url()).hostname, new RegExp(`^${slug}--[0-9][a-z0-9]{9}\\.`));
      await tab.goto(`${p.siteUrl(slug)}/`);
      assert.equal(await tab.textContent('h1'), 'the live one');
      await tab.close();
      const aliasHref = await preview.locator('a', { hasText: 'pr-42' }).getAttribute('href');
      assert.equal(aliasHref, `${p.siteUrl(`${slug}--pr-42`)}/`);

      // Promote asks first (it replaces what visitors see); declining changes nothing.
      const notYet = answerNextDialog(p, false);
      await preview.locator('button:text-is("Promote")').click();
      assert.match(await notYet, /visitors/i);
      await p.page.evaluate('1');
      const site = await p.context.newPage();
      await site.goto(`${p.siteUrl(slug)}/`);
      assert.equal(await site.textContent('h1'), 'the live one');
      const promote = answerNextDialog(p, true);
      await preview.locator('button:text-is("Promote")').click();
      await promote;
      await p.page.waitForSelector('text=it is live now');
      await shot('6-promoted', ['versions']);
      assert.equal(await overflowsSideways(p), false);
      // The promoted version is live at the site's address, and marked live in the list.
      await site.reload();
      assert.equal(await site.textContent('h1'), 'the preview one');
      await site.close();
      assert.match((await versions.locator('tr', { hasText: previewId }).textContent()) ?? '', /live/);
      assert.equal(
        await versions.locator('tr', { hasText: liveId }).locator('button:text-is("Promote")').count(),
        1,
      );

      assert.deepEqual(p.errors, []);
      assert.deepEqual(p.foreignRequests, []);
    } finally {
      await p.close();
    }
  });
}
