// A gallery of every human-facing page (web pages on the BASE_URL host, billing pages, the site host's
// built-in pages) at desktop and phone widths, in headless Chromium. Each page is screenshotted to
// test-artifacts/screenshots/<name>-<desktop|phone>.png and checked for: its HTTP status; no console
// error, page error or request to another host; no horizontal overflow of the document at phone width;
// an accessible label on every visible form control; exactly one <h1> and a <title>; the shared
// stylesheet (linked on the BASE_URL host, /docs included; inlined on site hosts; none on /llms.txt).
// One app, one browser, one signed-in context (and account) per width.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page, Response } from 'playwright-core';
import { PASSWORD_ATTEMPT_WINDOW_MS } from '../../src/serve/password-gate.js';
import { APP_CSS } from '../../src/shared/html.js';
import { clearOfWindowEdge, lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, startBrowser } from '../helpers/browser.js';
import { cancelHobby, upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish, update } from '../helpers/publish.js';
import { seedSite } from '../helpers/seed.js';
import { hostRequest } from '../serve/site-client.js';

const DAY_MS = 86_400_000;
/** Wrong site-password attempts allowed per site and address in a window (serve/password-gate.ts). */
const PASSWORD_ATTEMPTS = 10;

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

/** Which stylesheet a page must use. */
type Styles = 'link' | 'inline' | 'none';

interface Expect {
  status: number;
  /** Default 'link' (the BASE_URL host's pages). */
  styles?: Styles;
  /** Check <h1>, <title> and labels (default true; false for plain text). */
  document?: boolean;
  /** Check the phone width for horizontal overflow (default true; false for plain text). */
  overflow?: boolean;
  contentType?: RegExp;
}

/** What the page itself says about its structure (run in the browser; the tsconfig has no DOM types). */
interface Facts {
  h1: number;
  title: string;
  unlabelled: string[];
  stylesheets: string[];
  loadedSheets: string[];
  inlineStyles: string[];
  viewport: number;
  innerWidth: number;
  metaViewport: string | null;
  scrollWidth: number;
  overflowing: string[];
}

const FACTS = `(() => {
  const doc = document.documentElement;
  // The screen's width too: without <meta name=viewport> a phone lays the page out 980px wide.
  const viewport = Math.min(window.innerWidth, doc.clientWidth, screen.width);
  const describe = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    if (el.getAttribute('name')) s += '[name=' + el.getAttribute('name') + ']';
    if (el.getAttribute('type')) s += '[type=' + el.getAttribute('type') + ']';
    if (typeof el.className === 'string' && el.className.trim()) s += '.' + el.className.trim().split(/\\s+/).join('.');
    return s;
  };
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const unlabelled = [...document.querySelectorAll('input, select, textarea')]
    .filter((el) => !(el.tagName === 'INPUT' && el.type === 'hidden') && visible(el))
    .filter((el) => {
      if ([...(el.labels ?? [])].some((l) => l.textContent.trim() !== '')) return false;
      if ((el.getAttribute('aria-label') ?? '').trim() !== '') return false;
      const by = (el.getAttribute('aria-labelledby') ?? '').split(/\\s+/).filter(Boolean);
      return !by.some((id) => (document.getElementById(id)?.textContent ?? '').trim() !== '');
    })
    .map(describe);
  // The outermost elements past the right edge that no scrolling ancestor contains: what widens the page.
  const overflowing = [];
  const walk = (el) => {
    for (const child of el.children) {
      const style = getComputedStyle(child);
      const rect = child.getBoundingClientRect();
      if (rect.right > viewport + 0.5 && style.position !== 'fixed') {
        const text = (child.textContent ?? '').trim().replace(/\\s+/g, ' ').slice(0, 60);
        overflowing.push(describe(child) + ' (right edge ' + Math.round(rect.right) + 'px, width ' +
          Math.round(rect.width) + 'px) "' + text + '"');
        continue;
      }
      if (['auto', 'scroll', 'hidden', 'clip'].includes(style.overflowX)) continue;
      walk(child);
    }
  };
  if (document.body) walk(document.body);
  return {
    h1: document.querySelectorAll('h1').length,
    title: document.title.trim(),
    unlabelled,
    stylesheets: [...document.querySelectorAll('link[rel~=stylesheet]')].map((l) => l.getAttribute('href')),
    loadedSheets: [...document.styleSheets].filter((s) => s.href && s.cssRules.length > 0)
      .map((s) => new URL(s.href).pathname),
    inlineStyles: [...document.querySelectorAll('style')].map((s) => s.textContent ?? ''),
    viewport,
    innerWidth: window.innerWidth,
    metaViewport: document.querySelector('meta[name=viewport]')?.getAttribute('content') ?? null,
    scrollWidth: doc.scrollWidth,
    overflowing: overflowing.slice(0, 8),
  };
})()`;

/**
 * Runs `action` and returns the main-frame document response it ends on (past any redirect). The page
 * checked next is the one this lands on: errors and requests of earlier steps are not its own.
 */
async function navigation(w: Width, action: () => Promise<unknown>): Promise<Response> {
  const { page } = w.p;
  w.seenErrors = w.p.errors.length;
  w.seenForeign = w.p.foreignRequests.length;
  const done = page.waitForResponse(
    (r) =>
      r.request().isNavigationRequest() &&
      r.frame() === page.mainFrame() &&
      (r.status() < 300 || r.status() >= 400),
    { timeout: 15_000 },
  );
  // The new document commits after its response: the old one must not be taken for it.
  const committed = page.waitForEvent('framenavigated', {
    predicate: (frame) => frame === page.mainFrame(),
    timeout: 15_000,
  });
  await action();
  const [res] = await Promise.all([done, committed]);
  await page.waitForLoadState('load');
  return res;
}

/** Waits until the page is settled: loaded, fonts ready, two frames painted. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('load');
  await page.evaluate(
    'document.fonts.ready.then(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))))',
  );
}

interface Width {
  label: 'desktop' | 'phone';
  mobile: boolean;
  p: BrowserPage;
  /** Console errors and foreign requests already seen (each page looks only at its own). */
  seenErrors: number;
  seenForeign: number;
}

/** Screenshots the page, then checks everything the gallery asks of it; all problems in one failure. */
async function checkPage(w: Width, name: string, res: Response, expect: Expect): Promise<void> {
  const { page } = w.p;
  await settle(page);
  await w.p.screenshot(name);
  const problems: string[] = [];
  const styles = expect.styles ?? 'link';
  const checkDocument = expect.document ?? true;

  if (res.status() !== expect.status) problems.push(`HTTP status ${res.status()}, expected ${expect.status}`);
  if (expect.contentType && !expect.contentType.test(res.headers()['content-type'] ?? ''))
    problems.push(`content-type ${res.headers()['content-type']}, expected ${expect.contentType}`);

  // Chromium logs the load of a 4xx/5xx document as a console error: that one is the expected status.
  const errors = w.p.errors
    .slice(w.seenErrors)
    .filter(
      (e) =>
        !(
          expect.status >= 400 &&
          e.startsWith(
            `console.error: Failed to load resource: the server responded with a status of ${expect.status} `,
          ) &&
          e.includes(res.url())
        ),
    );
  w.seenErrors = w.p.errors.length;
  if (errors.length > 0) problems.push(`console/page errors: ${errors.join(' | ')}`);
  const foreign = w.p.foreignRequests.slice(w.seenForeign);
  w.seenForeign = w.p.foreignRequests.length;
  if (foreign.length > 0) problems.push(`requests to other hosts: ${foreign.join(', ')}`);

  const facts = (await page.evaluate(FACTS)) as Facts;
  if (w.mobile && (expect.overflow ?? true) && facts.scrollWidth > facts.viewport) {
    problems.push(
      `horizontal overflow at ${w.label} width: document scrollWidth ${facts.scrollWidth}px > viewport ` +
        `${facts.viewport}px (innerWidth ${facts.innerWidth}px, meta viewport ${JSON.stringify(facts.metaViewport)}); ` +
        `widened by: ${facts.overflowing.join('; ') || '?'}`,
    );
  }
  if (checkDocument) {
    if (facts.h1 !== 1) problems.push(`${facts.h1} <h1> elements, expected exactly one`);
    if (facts.title === '') problems.push('no <title> (or an empty one)');
    if (facts.unlabelled.length > 0)
      problems.push(`form controls without an accessible label: ${facts.unlabelled.join(', ')}`);
  }
  if (styles === 'link') {
    const linked = facts.stylesheets.filter((h) => /^\/assets\/app-[0-9a-f]+\.css$/.test(h));
    if (linked.length !== 1)
      problems.push(
        `shared stylesheet link: found ${JSON.stringify(facts.stylesheets)}, expected one /assets/app-*.css`,
      );
    else if (!facts.loadedSheets.includes(linked[0]!)) problems.push(`stylesheet ${linked[0]} did not load`);
  } else if (styles === 'inline') {
    if (!facts.inlineStyles.some((css) => css.trim() === APP_CSS))
      problems.push('the shared stylesheet is not inlined in a <style> element');
  }

  assert.deepEqual(problems, [], `${name}-${w.label} (${res.url()}):\n  ${problems.join('\n  ')}`);
}

/** Submits a form on the current page from the page itself (no click), after `prepare` ran on it. */
function submitForm(page: Page, formSelector: string, prepare: string): Promise<unknown> {
  return page.evaluate(
    `(() => { const f = document.querySelector(${JSON.stringify(formSelector)}); ${prepare}; HTMLFormElement.prototype.submit.call(f); })()`,
  );
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** A site's files: what a small real site ships (a build's hashed asset names included). */
const SITE_FILES = {
  'index.html': '<!doctype html><title>Field notes</title><h1>Field notes</h1><p>Hello.</p>',
  'about/index.html': '<!doctype html><title>About</title><h1>About</h1>',
  'assets/index-4f3a9c2b.css': 'body{font-family:system-ui}',
  'assets/vendor-react-dom.production.min-8c1d2e3f.js': '/* bundle */',
};

for (const mobile of [false, true]) {
  const label = mobile ? 'phone' : 'desktop';

  describe(`every page at ${label} width`, () => {
    const email = `gallery-${label}@example.com`;
    const handle = `gallery-${label}`;
    let w: Width;
    let key: string;
    let home: string; // plain site, linked on the handle
    let guarded: string; // password, variable, proxy host, two versions
    let anon: { slug: string; claimUrl: string };
    let gone: string;
    let throttled: string;
    let checkoutUrl: string;

    before(async () => {
      // The API's sign-in gives the key for the fixtures; the pages sign in on their own below.
      key = await signIn(t, email);
      home = assertPublished(await publish(t, SITE_FILES, { key })).slug;
      assertPublished(
        await publish(t, { 'index.html': '<h1>Second</h1>', 'robots.txt': 'User-agent: *' }, { key }),
      );
      guarded = assertPublished(await publish(t, SITE_FILES, { key })).slug;
      assertPublished(
        await update(t, key, guarded, {
          ...SITE_FILES,
          'index.html': '<h1>Field notes, second edition</h1>',
        }),
      );
      const patch = await t.api(`/api/v1/publish/${guarded}/metadata`, {
        method: 'PATCH',
        key,
        body: { password: 'correct horse', title: 'Field notes', description: 'Notes from the field' },
      });
      assert.equal(patch.status, 200, patch.text);
      const vars = await t.api(`/api/v1/publish/${guarded}/variables`, {
        method: 'PUT',
        key,
        body: { WEATHER_API_KEY: 'wk_live_0123456789abcdef' },
      });
      assert.equal(vars.status, 200, vars.text);
      const hosts = await t.api(`/api/v1/publish/${guarded}/proxy-hosts`, {
        method: 'PUT',
        key,
        body: { hosts: ['api.weather.example.com'] },
      });
      assert.equal(hosts.status, 200, hosts.text);

      const anonymous = assertPublished(await publish(t, { 'index.html': '<h1>Anonymous</h1>' }));
      anon = { slug: anonymous.slug, claimUrl: anonymous.create.body.claimUrl };
      gone = (await seedSite(t.ctx, { files: { 'index.html': 'expired' }, expiresAt: t.clock.now() - 1 }))
        .slug;
      throttled = (await seedSite(t.ctx, { files: { 'index.html': 'x' }, password: 'right' })).slug;
      // The suite reaches its 429 page ~20 s after these attempts: they must fall in the same window.
      clearOfWindowEdge(t.clock, PASSWORD_ATTEMPT_WINDOW_MS, 5 * 60_000);
      for (let i = 0; i < PASSWORD_ATTEMPTS; i++) {
        const res = await hostRequest(t, `${throttled}.localhost:${t.port}`, '/', form({ password: 'nope' }));
        assert.equal(res.status, 401);
      }

      const p = await browser.page(t, { mobile });
      w = { label, mobile, p, seenErrors: 0, seenForeign: 0 };
    });

    after(async () => {
      await w?.p.close();
    });

    // ---- signed out: landing and sign-in ----------------------------------------------------------

    test(`landing (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/`));
      await checkPage(w, 'landing', res, { status: 200 });
    });

    test(`login (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/login`));
      await checkPage(w, 'login', res, { status: 200 });
    });

    test(`login-code (${label})`, async () => {
      await w.p.page.fill('#email', email);
      const res = await navigation(w, () => w.p.page.click('button[type=submit]'));
      await checkPage(w, 'login-code', res, { status: 200 });
    });

    test(`login-code-error (${label})`, async () => {
      const right = lastCodeFor(t, email);
      await w.p.page.fill('#code', right === 'AAAA-AAAA' ? 'BBBB-BBBB' : 'AAAA-AAAA');
      const res = await navigation(w, () => w.p.page.click('button[type=submit]'));
      assert.ok(await w.p.page.isVisible('p.error[role=alert]'), 'the error is shown');
      await checkPage(w, 'login-code-error', res, { status: 400 });
    });

    // ---- signed in --------------------------------------------------------------------------------

    test(`dashboard (${label})`, async () => {
      // The code page after the error still holds the form: the right code signs in.
      await w.p.page.fill('#code', lastCodeFor(t, email));
      const res = await navigation(w, () => w.p.page.click('button[type=submit]'));
      assert.equal(new URL(w.p.page.url()).pathname, '/dashboard');
      assert.ok(await w.p.page.isVisible(`a[href="/dashboard/sites/${home}"]`));
      await checkPage(w, 'dashboard', res, { status: 200 });
    });

    test(`site (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/dashboard/sites/${guarded}`));
      const main = (await w.p.page.textContent('main')) ?? '';
      assert.match(main, /password set/);
      assert.match(main, /WEATHER_API_KEY/);
      assert.match(main, /api\.weather\.example\.com/);
      assert.equal(await w.p.page.locator('form[action="/dashboard/sites/restore"]').count(), 1);
      await checkPage(w, 'site', res, { status: 200 });
    });

    test(`dashboard-404 (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/dashboard/sites/nope-not-mine`));
      await checkPage(w, 'dashboard-404', res, { status: 404 });
    });

    test(`page-404 (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/no/such/page`));
      assert.ok(await w.p.page.isVisible('text=Page not found'));
      await checkPage(w, 'page-404', res, { status: 404 });
    });

    test(`claim (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(anon.claimUrl));
      assert.ok(await w.p.page.isVisible(`text=Claim ${anon.slug}`));
      await checkPage(w, 'claim', res, { status: 200 });
    });

    test(`claim-invalid (${label})`, async () => {
      // A wrong token is said at once, before any button.
      const res = await navigation(w, () =>
        w.p.page.goto(`${w.p.baseUrl}/claim?slug=${anon.slug}&token=not-the-claim-token`),
      );
      assert.match((await w.p.page.textContent('main')) ?? '', /cannot be claimed/);
      await checkPage(w, 'claim-invalid', res, { status: 400 });
    });

    test(`claim-missing (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/claim`));
      await checkPage(w, 'claim-missing', res, { status: 400 });
    });

    test(`refused (${label})`, async () => {
      await w.p.page.goto(`${w.p.baseUrl}/dashboard`);
      const res = await navigation(w, () =>
        submitForm(
          w.p.page,
          'form[action="/dashboard/domains"]',
          `f.elements.domain.value = 'www.refused.example.com'; f.elements._csrf.value = 'tampered'`,
        ),
      );
      assert.match((await w.p.page.textContent('h1')) ?? '', /refused/);
      await checkPage(w, 'refused', res, { status: 403 });
    });

    // ---- billing ----------------------------------------------------------------------------------

    test(`checkout (${label})`, async () => {
      const started = await t.api('/api/billing/checkout', { method: 'POST', key });
      assert.equal(started.status, 200, started.text);
      checkoutUrl = started.body.checkoutUrl;
      const res = await navigation(w, () => w.p.page.goto(checkoutUrl));
      await checkPage(w, 'checkout', res, { status: 200 });
    });

    test(`checkout-paid (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.click('button:text-is("Pay")'));
      assert.match((await w.p.page.textContent('h1')) ?? '', /Payment complete/);
      await checkPage(w, 'checkout-paid', res, { status: 200 });
    });

    test(`checkout-used (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(checkoutUrl));
      await checkPage(w, 'checkout-used', res, { status: 410 });
    });

    test(`checkout-unknown (${label})`, async () => {
      const res = await navigation(w, () =>
        w.p.page.goto(`${w.p.baseUrl}/billing/test-checkout/no-such-checkout-token`),
      );
      await checkPage(w, 'checkout-unknown', res, { status: 404 });
    });

    test(`portal (${label})`, async () => {
      const portal = await t.api('/api/billing/portal', { method: 'POST', key });
      assert.equal(portal.status, 200, portal.text);
      const res = await navigation(w, () => w.p.page.goto(portal.body.portalUrl));
      assert.ok(await w.p.page.isVisible('button:text-is("Cancel subscription")'));
      await checkPage(w, 'portal', res, { status: 200 });
    });

    // ---- Hobby: handle (nothing linked yet), then a domain and a link ------------------------------

    test(`handle-unlinked (${label})`, async () => {
      const put = await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } });
      assert.equal(put.status, 200, put.text);
      const res = await navigation(w, () => w.p.page.goto(`${w.p.siteUrl(handle)}/`));
      assert.match((await w.p.page.textContent('body')) ?? '', /No site is linked/);
      await checkPage(w, 'handle-unlinked', res, { status: 404, styles: 'inline' });
    });

    test(`dashboard-hobby (${label})`, async () => {
      const domain = await t.api('/api/v1/domains', {
        method: 'POST',
        key,
        body: { domain: `www.${handle}.example.com` },
      });
      assert.equal(domain.status, 201, domain.text);
      const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug: home } });
      assert.equal(link.status, 201, link.text);
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/dashboard`));
      const main = (await w.p.page.textContent('main')) ?? '';
      assert.match(main, /Plan: hobby/);
      assert.match(main, new RegExp(`Your handle: http://${handle}\\.`));
      assert.match(main, new RegExp(`www\\.${handle}\\.example\\.com`));
      assert.ok(await w.p.page.isVisible('form[action="/dashboard/links/delete"]'));
      await checkPage(w, 'dashboard-hobby', res, { status: 200 });
    });

    // ---- reference pages --------------------------------------------------------------------------

    test(`docs (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/docs`));
      await w.p.page.waitForSelector('.opblock', { timeout: 15_000 });
      await checkPage(w, 'docs', res, { status: 200 });
    });

    test(`llms (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.baseUrl}/llms.txt`));
      await checkPage(w, 'llms', res, {
        status: 200,
        styles: 'none',
        document: false,
        overflow: false,
        contentType: /^text\/plain\b/,
      });
    });

    // ---- the site host's built-in pages -------------------------------------------------------------

    test(`site-404 (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.siteUrl(home)}/no/such/page`));
      await checkPage(w, 'site-404', res, { status: 404, styles: 'inline' });
    });

    test(`site-405 (${label})`, async () => {
      // A form posted to a site without a password (sites answer GET and HEAD).
      await w.p.page.goto(`${w.p.siteUrl(home)}/no/such/page`);
      const res = await navigation(w, () =>
        w.p.page.evaluate(
          `(() => { const f = document.createElement('form'); f.method = 'post'; f.action = '/'; document.body.append(f); f.submit(); })()`,
        ),
      );
      await checkPage(w, 'site-405', res, { status: 405, styles: 'inline' });
    });

    test(`site-400 (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.siteUrl(home)}/about%2Findex.html`));
      await checkPage(w, 'site-400', res, { status: 400, styles: 'inline' });
    });

    test(`site-gone (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.siteUrl(gone)}/`));
      await checkPage(w, 'site-gone', res, { status: 410, styles: 'inline' });
    });

    test(`password-gate (${label})`, async () => {
      const res = await navigation(w, () => w.p.page.goto(`${w.p.siteUrl(guarded)}/`));
      assert.ok(await w.p.page.isVisible('input[type=password]'));
      await checkPage(w, 'password-gate', res, { status: 401, styles: 'inline' });
    });

    test(`password-gate-wrong (${label})`, async () => {
      await w.p.page.fill('#password', 'wrong horse');
      const res = await navigation(w, () => w.p.page.click('button[type=submit]'));
      assert.match((await w.p.page.textContent('.error')) ?? '', /Wrong password/);
      await checkPage(w, 'password-gate-wrong', res, { status: 401, styles: 'inline' });
    });

    test(`password-gate-415 (${label})`, async () => {
      await w.p.page.goto(`${w.p.siteUrl(guarded)}/`);
      const res = await navigation(w, () =>
        submitForm(w.p.page, 'form', `f.enctype = 'multipart/form-data'; f.elements.password.value = 'x'`),
      );
      await checkPage(w, 'password-gate-415', res, { status: 415, styles: 'inline' });
    });

    test(`password-gate-413 (${label})`, async () => {
      await w.p.page.goto(`${w.p.siteUrl(guarded)}/`);
      const res = await navigation(w, () =>
        submitForm(w.p.page, 'form', `f.elements.password.value = 'x'.repeat(5000)`),
      );
      await checkPage(w, 'password-gate-413', res, { status: 413, styles: 'inline' });
    });

    test(`password-gate-429 (${label})`, async () => {
      await w.p.page.goto(`${w.p.siteUrl(throttled)}/`);
      await w.p.page.fill('#password', 'still wrong');
      const res = await navigation(w, () => w.p.page.click('button[type=submit]'));
      await checkPage(w, 'password-gate-429', res, { status: 429, styles: 'inline' });
    });

    // ---- last: the new API key (the fixtures' key stops working) ------------------------------------

    test(`api-key (${label})`, async () => {
      await w.p.page.goto(`${w.p.baseUrl}/dashboard`);
      // The page asks before replacing the key: yes.
      w.p.page.once('dialog', (d) => void d.accept());
      const res = await navigation(w, () => w.p.page.click('button:text-is("Regenerate the API key")'));
      assert.match(((await w.p.page.textContent('#api-key')) ?? '').trim(), /^svc_live_[0-9a-f]{32}$/);
      await checkPage(w, 'api-key', res, { status: 200 });
    });
  });
}

// A handle whose owner's plan ended: the site host's "paused" page. Moves the clock past the paid
// period, so it runs after everything else.
describe('a paused handle after the plan ends', () => {
  const handle = 'gallery-paused';

  before(async () => {
    const key = await signIn(t, 'gallery-paused@example.com');
    await upgradeToHobby(t, key);
    assert.equal((await t.api('/api/v1/handle', { method: 'PUT', key, body: { handle } })).status, 200);
    const slug = assertPublished(await publish(t, { 'index.html': '<h1>paused</h1>' }, { key })).slug;
    assert.equal((await t.api('/api/v1/links', { method: 'POST', key, body: { slug } })).status, 201);
    await cancelHobby(t, key);
    t.clock.advance(31 * DAY_MS);
    assert.equal((await t.api('/api/v1/account', { key })).body.plan, 'free');
  });

  for (const mobile of [false, true]) {
    const label = mobile ? 'phone' : 'desktop';
    test(`handle-paused (${label})`, async () => {
      const p = await browser.page(t, { mobile });
      try {
        const w: Width = { label, mobile, p, seenErrors: 0, seenForeign: 0 };
        const res = await navigation(w, () => p.page.goto(`${p.siteUrl(handle)}/`));
        assert.match((await p.page.textContent('body')) ?? '', /paused/);
        await checkPage(w, 'handle-paused', res, { status: 404, styles: 'inline' });
      } finally {
        await p.close();
      }
    });
  }
});
