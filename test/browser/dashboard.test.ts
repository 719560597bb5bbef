// The dashboard in headless Chromium (issue 14 acceptance): sign in with the code read from an SMTP
// peer; claim an anonymous site through its claimUrl; set a password and see the gate on the site; add a
// domain and see its DNS records; upgrade through the test checkout; regenerate the key and see the old
// one refused. No console errors, no foreign requests; screenshots at desktop and phone widths.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, type BrowserPage, startBrowser } from '../helpers/browser.js';
import { publish } from '../helpers/publish.js';
import { startSmtpServer } from '../helpers/smtp.js';

let t: TestApp;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let browser: BrowserHarness;

before(async () => {
  smtp = await startSmtpServer();
  t = await startTestApp({ SMTP_URL: smtp.url });
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

/** The newest code mailed to `email` (the subject carries it). */
async function mailedCode(email: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const mail = [...smtp.mails].reverse().find((m) => m.to.includes(email));
    const code = mail && /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(mail.raw)?.[1];
    if (code) return code;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail to ${email}`);
}

async function signInThroughPages(p: BrowserPage, email: string) {
  await p.page.fill('#email', email);
  await p.page.click('button[type=submit]');
  await p.page.waitForSelector('#code');
  await p.page.fill('#code', await mailedCode(email));
  await p.page.click('button[type=submit]');
}

test('claimUrl -> sign in (code from SMTP) -> claim -> the site is in the dashboard; password gate; domain records; upgrade; key regeneration', async () => {
  const anon = await publish(t, { 'index.html': '<h1>claimed in a browser</h1>' });
  assert.equal(anon.finalize?.status, 200);
  const email = 'browser-user@example.com';
  const p = await browser.page(t);
  try {
    // The claim link asks for a sign-in first, then comes back to the claim.
    await p.page.goto(anon.create.body.claimUrl);
    await p.page.waitForSelector('#email');
    await signInThroughPages(p, email);
    await p.page.waitForSelector(`text=Claim ${anon.slug}`);
    await p.screenshot('claim');
    await p.page.click('button[type=submit]');
    // The claim lands on the site's own page, and the site is in the list.
    await p.page.waitForSelector(`text=${anon.slug} is yours now`);
    assert.equal(new URL(p.page.url()).pathname, `/dashboard/sites/${anon.slug}`);
    await p.page.click('a:text-is("← Your sites")');
    assert.ok(await p.page.isVisible(`a[href="/dashboard/sites/${anon.slug}"]`));
    await p.screenshot('dashboard-with-site');

    // A password set in the dashboard gates the site.
    await p.page.click(`a[href="/dashboard/sites/${anon.slug}"]`);
    await p.page.waitForSelector('#password');
    await p.screenshot('site-page');
    // Times are written in UTC and shown in the reader's zone once the script ran.
    const stamp = p.page.locator('time').first();
    assert.match((await stamp.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d/);
    assert.doesNotMatch((await stamp.textContent()) ?? '', /UTC$/);
    await p.page.fill('#password', 'correct horse');
    await p.page.click('button:text-is("Set password")');
    await p.page.waitForSelector('text=Password set.');
    const gate = await p.page.goto(`${p.siteUrl(anon.slug)}/`);
    assert.equal(gate?.status(), 401);
    assert.ok(await p.page.isVisible('input[type=password]'));
    await p.screenshot('password-gate');

    // A domain and the DNS records to create.
    await p.page.goto(`${p.baseUrl}/dashboard`);
    await p.page.fill('#domain', 'www.browser-customer.example.com');
    await p.page.click('button:text-is("Add")');
    await p.page.waitForSelector('text=www.browser-customer.example.com added');
    const records = await p.page.textContent('table:has-text("DNS records to create")');
    assert.match(records ?? '', /CNAME www\.browser-customer\.example\.com/);
    assert.match(
      records ?? '',
      /TXT _service\.www\.browser-customer\.example\.com = service-verify=[0-9a-f]{32}/,
    );

    // Upgrade through the test checkout.
    await p.page.click('button:text-is("Upgrade to Hobby")');
    await p.page.waitForSelector('text=test checkout');
    await p.screenshot('checkout');
    await p.page.click('button:text-is("Pay")');
    await p.page.waitForSelector('text=Payment complete');
    await p.page.goto(`${p.baseUrl}/dashboard`);
    assert.match((await p.page.textContent('main')) ?? '', /Plan: hobby/);

    // Regenerate the key: shown once; the previous key is refused by the API.
    // The API's own sign-in issues a key (the dashboard then replaces it).
    const before = smtp.mails.length;
    await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
    while (smtp.mails.length === before) await new Promise((r) => setTimeout(r, 20));
    const verified = await t.api('/api/auth/agent/verify-code', {
      method: 'POST',
      body: { email, code: await mailedCode(email) },
    });
    const oldKey: string = verified.body.apiKey;
    assert.equal((await t.api('/api/v1/account', { key: oldKey })).status, 200);
    // That new key ended this browser's session: the dashboard asks for a sign-in again (which keeps the key).
    await p.page.goto(`${p.baseUrl}/dashboard`);
    await p.page.waitForSelector('#email');
    await signInThroughPages(p, email);
    await p.page.waitForURL(`${p.baseUrl}/dashboard`);
    assert.equal((await t.api('/api/v1/account', { key: oldKey })).status, 200);
    // The page asks first; declining sends nothing and the key keeps working.
    const keyPosts: string[] = [];
    p.page.on('request', (r) => {
      if (r.url().endsWith('/dashboard/api-key')) keyPosts.push(r.method());
    });
    const asked = new Promise<string>((resolve) =>
      p.page.once('dialog', (d) => {
        resolve(d.message());
        void d.dismiss();
      }),
    );
    await p.page.click('button:text-is("Regenerate the API key")');
    assert.match(await asked, /current key stop working/);
    await p.page.evaluate('1');
    assert.deepEqual(keyPosts, []);
    assert.equal((await t.api('/api/v1/account', { key: oldKey })).status, 200);
    p.page.once('dialog', (d) => void d.accept());
    await p.page.click('button:text-is("Regenerate the API key")');
    await p.page.waitForSelector('#api-key');
    assert.deepEqual(keyPosts, ['POST']);
    const newKey = ((await p.page.textContent('#api-key')) ?? '').trim();
    assert.match(newKey, /^svc_live_[0-9a-f]{32}$/);
    await p.screenshot('api-key');
    // The Copy button puts exactly the key on the clipboard.
    await p.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.baseUrl });
    await p.page.click('button.copy');
    await p.page.waitForSelector('button.copy:text-is("Copied")');
    assert.equal(await p.page.evaluate('navigator.clipboard.readText()'), newKey);
    assert.equal((await t.api('/api/v1/account', { key: oldKey })).status, 401);
    assert.equal((await t.api('/api/v1/account', { key: newKey })).status, 200);

    // The gate answers 401 by design (CONTRACT "Serving"); Chromium logs any 4xx document load.
    const gateUrl = `${p.siteUrl(anon.slug)}/`;
    assert.deepEqual(
      p.errors.filter((e) => !(e.includes('status of 401') && e.includes(gateUrl))),
      [],
    );
    assert.deepEqual(p.foreignRequests, []);
  } finally {
    await p.close();
  }
});

test('the dashboard and a site page at phone width', async () => {
  const p = await browser.page(t, { mobile: true });
  try {
    await p.page.goto(`${p.baseUrl}/login`);
    await signInThroughPages(p, 'phone-user@example.com');
    await p.page.waitForURL(`${p.baseUrl}/dashboard`);
    await p.screenshot('dashboard');
    assert.deepEqual(p.errors, []);
    assert.deepEqual(p.foreignRequests, []);
  } finally {
    await p.close();
  }
});
