// Abuse reports (issue 26): POST /api/v1/reports and the /report form store a report, mail it to the
// operators over real SMTP and share one limit per client address; bad input is a 4xx; the fields are
// escaped wherever a page shows them; GET /api/admin/reports answers operators only (404 to anyone else);
// ABUSE_CONTACT is on the landing page, the report page and /.well-known/security.txt.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_REPORT_DETAILS_CHARS, REPORT_MAILS_PER_HOUR } from '../../src/core/reports.js';
import { rawRequest, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { siteHost } from '../helpers/seed.js';
import { startSmtpServer } from '../helpers/smtp.js';
import { Browser, csrfOf } from '../helpers/web.js';

const OPERATOR = 'ops@example.com';
const XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>';

describe('abuse reports', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let slug: string;
  let siteUrl: string;

  const keys = new Map<string, string>();
  /** An API key of `email`, signed in with the code the SMTP peer received (once: a new key ends the old). */
  async function keyOf(email: string): Promise<string> {
    const known = keys.get(email);
    if (known) return known;
    const asked = await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
    assert.equal(asked.status, 200, asked.text);
    const mail = smtp.mails.findLast((m) => m.to.includes(email));
    const code = mail && /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(mail.raw)?.[1];
    assert.ok(code);
    const res = await t.api('/api/auth/agent/verify-code', { method: 'POST', body: { email, code } });
    assert.ok(res.status === 200 || res.status === 201, res.text);
    keys.set(email, res.body.apiKey);
    return res.body.apiKey;
  }

  const report = (body: unknown, headers: Record<string, string> = {}) =>
    t.api('/api/v1/reports', { method: 'POST', body, headers });

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({
      SMTP_URL: smtp.url,
      ADMIN_EMAILS: ` ${OPERATOR.toUpperCase()} , second@example.com`,
      ABUSE_CONTACT: 'abuse@example.com',
      RATE_LIMIT_REPORTS: '4',
      // Each test below reports from its own address (TRUST_PROXY: the X-Forwarded-For entry).
      TRUST_PROXY: '1',
    });
    const out = assertPublished(await publish(t, { 'index.html': '<h1>a site</h1>' }));
    slug = out.slug;
    siteUrl = out.create.body.siteUrl;
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  test('a report is stored, mailed to every operator and listed for operators with the site', async () => {
    const before = smtp.mails.length;
    const res = await report(
      {
        url: `${siteUrl}login.html`,
        category: 'phishing',
        details: 'A bank sign-in copy.',
        contact: 'me@example.org',
      },
      { 'x-forwarded-for': '198.51.100.1' },
    );
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.id, /^rpt_/);
    const mails = smtp.mails.slice(before);
    assert.deepEqual(mails.flatMap((m) => m.to).sort(), ['ops@example.com', 'second@example.com']);
    assert.match(mails[0]!.raw, /Subject: Abuse report \(phishing\)/);
    assert.match(mails[0]!.raw, /A bank sign-in copy\./);
    assert.match(mails[0]!.raw, new RegExp(slug));

    const key = await keyOf(OPERATOR);
    const list = await t.api('/api/admin/reports', { key });
    assert.equal(list.status, 200, list.text);
    const mine = list.body.reports.find((r: { id: string }) => r.id === res.body.id);
    assert.ok(mine);
    assert.equal(mine.category, 'phishing');
    assert.equal(mine.contact, 'me@example.org');
    assert.equal(mine.status, 'open');
    assert.equal(mine.reporterIp, '198.51.100.1');
    assert.equal(mine.site.slug, slug);
    assert.equal(mine.site.deleted, false);
    assert.ok(mine.openReportsForHost >= 1);
  });

  test('an operator closes a report without acting on the site; nobody else can', async () => {
    const filed = await report(
      { url: siteUrl, category: 'spam', details: 'Looks like ads.' },
      { 'x-forwarded-for': '198.51.100.40' },
    );
    assert.equal(filed.status, 201, filed.text);
    const id = filed.body.id as string;
    const close = (body: unknown, key?: string, which = id) =>
      t.api(`/api/admin/reports/${which}/close`, { method: 'POST', body, ...(key ? { key } : {}) });
    // Anyone but an operator: the unknown-route 404, and the report stays open.
    for (const key of [undefined, await keyOf('someone@example.com')]) {
      const res = await close({ reason: 'x' }, key);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.error, `No route POST /api/admin/reports/${id}/close`);
    }
    const opKey = await keyOf(OPERATOR);
    for (const bad of [{}, { reason: '' }, { reason: 'x'.repeat(1001) }, { reason: 'ok', extra: 1 }]) {
      const res = await close(bad, opKey);
      assert.equal(res.status, 400, `${JSON.stringify(bad).slice(0, 40)}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_REQUEST');
    }
    assert.equal((await close({ reason: 'ok' }, opKey, 'rpt_nosuchreport')).status, 404);
    const isOpen = async () =>
      (await t.api('/api/admin/reports', { key: opKey })).body.reports.some(
        (r: { id: string }) => r.id === id,
      );
    assert.equal(await isOpen(), true);

    const done = await close({ reason: 'Ordinary ads, not spam.' }, opKey);
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.body, { id, status: 'closed' });
    assert.equal(await isOpen(), false);
    const closed = await t.api('/api/admin/reports?status=closed', { key: opKey });
    assert.equal(closed.body.reports.find((r: { id: string }) => r.id === id)?.status, 'closed');
    // Closing again changes nothing; the audit log has one entry, with the reason.
    assert.equal((await close({ reason: 'again' }, opKey)).status, 200);
    const entries = await t.ctx.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'report.close')
      .where('target', '=', id)
      .execute();
    assert.equal(entries.length, 1);
    assert.equal(JSON.parse(entries[0]!.details).reason, 'Ordinary ads, not spam.');
    assert.equal(entries[0]!.account_id, null);
  });

  test('GET /api/admin/reports is an unknown route to anyone but an operator', async () => {
    const unknown = await t.api('/api/admin/no-such-thing');
    const anonymous = await t.api('/api/admin/reports');
    const other = await t.api('/api/admin/reports', { key: await keyOf('someone@example.com') });
    for (const res of [anonymous, other]) {
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, unknown.body.code);
      assert.equal(res.body.error, 'No route GET /api/admin/reports');
      assert.equal(res.body.reports, undefined, 'no report leaks');
    }
  });

  test('bad input is a 4xx and stores nothing', async () => {
    const ip = { 'x-forwarded-for': '198.51.100.2' };
    const cases: Array<[string, unknown]> = [
      ['not a URL', { url: 'not a url', category: 'spam', details: 'x' }],
      ['not http', { url: `ftp://${slug}.localhost/`, category: 'spam', details: 'x' }],
      ['not hosted here', { url: 'https://example.com/', category: 'spam', details: 'x' }],
      ['unknown category', { url: siteUrl, category: 'rude', details: 'x' }],
      [
        'oversize details',
        { url: siteUrl, category: 'spam', details: 'x'.repeat(MAX_REPORT_DETAILS_CHARS + 1) },
      ],
      ['no details', { url: siteUrl, category: 'spam' }],
      ['extra field', { url: siteUrl, category: 'spam', details: 'x', admin: true }],
    ];
    const key = await keyOf(OPERATOR);
    const count = async () => {
      const res = await t.api('/api/admin/reports?limit=200', { key });
      assert.equal(res.status, 200, res.text);
      return res.body.reports.length;
    };
    const stored = await count();
    for (const [what, body] of cases) {
      // A fresh address per case: the limit is not what answers.
      const res = await report(body, {
        'x-forwarded-for': `198.51.100.${100 + cases.findIndex((c) => c[0] === what)}`,
      });
      assert.equal(res.status, 400, `${what}: ${res.text}`);
      assert.equal(res.body.code, 'INVALID_REQUEST', what);
    }
    assert.equal(await count(), stored);
    // Not JSON at all.
    const raw = await t.api('/api/v1/reports', {
      method: 'POST',
      body: '{',
      headers: { 'content-type': 'application/json', ...ip },
    });
    assert.equal(raw.status, 400);
  });

  test('reports are limited per client address, the API and the form together', async () => {
    const ip = { 'x-forwarded-for': '198.51.100.3' };
    const body = { url: siteUrl, category: 'spam', details: 'spam' };
    for (let i = 0; i < 3; i++) assert.equal((await report(body, ip)).status, 201);
    // The fourth through the form.
    const b = new Browser(t);
    const page = await b.request('/report', { headers: ip });
    const sent = await b.request('/report', {
      method: 'POST',
      headers: ip,
      form: { ...body, _csrf: csrfOf(page.text) },
    });
    assert.equal(sent.status, 201, sent.text);
    const limited = await report(body, ip);
    assert.equal(limited.status, 429, limited.text);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const formLimited = await b.request('/report', {
      method: 'POST',
      headers: ip,
      form: { ...body, _csrf: csrfOf(page.text) },
    });
    assert.equal(formLimited.status, 429);
    assert.match(formLimited.text, /Too many reports/);
    // Another address is not limited.
    assert.equal((await report(body, { 'x-forwarded-for': '198.51.100.4' })).status, 201);
  });

  test('the form works without JavaScript, refuses a post without its CSRF token, and escapes what it shows', async () => {
    const ip = { 'x-forwarded-for': '198.51.100.5' };
    const b = new Browser(t);
    const target = `${siteUrl}?q="><b>`;
    const page = await b.request(`/report?url=${encodeURIComponent(target)}`, { headers: ip });
    assert.equal(page.status, 200);
    assert.ok(page.text.includes('value="http://'), 'the address is prefilled');
    assert.equal(page.text.includes('"><b>'), false, 'the prefilled address is escaped');
    assert.match(page.text, /abuse@example\.com/);

    const forged = await new Browser(t).request('/report', {
      method: 'POST',
      headers: ip,
      form: { url: siteUrl, category: 'spam', details: 'x', _csrf: 'forged' },
    });
    assert.equal(forged.status, 403);

    // A refusal shows the form again with what was typed, escaped.
    const bad = await b.request('/report', {
      method: 'POST',
      headers: ip,
      form: { url: siteUrl, category: 'nonsense', details: XSS, contact: XSS, _csrf: csrfOf(page.text) },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /category must be one of/);
    assert.equal(bad.text.includes('<script>alert'), false);
    assert.equal(bad.text.includes('<img src=x'), false);
    assert.ok(bad.text.includes('&#60;script&#62;alert'), 'the details come back escaped');

    const ok = await b.request('/report', {
      method: 'POST',
      headers: ip,
      form: {
        url: `${siteUrl}<x>`,
        category: 'malware',
        details: XSS,
        contact: XSS,
        _csrf: csrfOf(page.text),
      },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.text.includes('<x>'), false);
    assert.match(ok.text, /rpt_/);
    // The operators' list is JSON, never sniffed into a page.
    const list = await t.api('/api/admin/reports', { key: await keyOf(OPERATOR) });
    assert.match(list.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(list.headers.get('x-content-type-options'), 'nosniff');
    assert.ok(
      list.body.reports.some((r: { details: string }) => r.details === XSS),
      'stored as sent',
    );
  });

  test('ABUSE_CONTACT and the report link: landing page, llms.txt, security.txt, the site server pages', async () => {
    const landing = await t.api('/');
    assert.match(landing.text, /href="\/report"/);
    assert.match(landing.text, /href="mailto:abuse@example.com">abuse@example.com</);
    assert.match((await t.api('/llms.txt')).text, /\/report\?url=/);

    const sec = await t.api('/.well-known/security.txt');
    assert.equal(sec.status, 200);
    assert.match(sec.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(sec.text, /^Contact: mailto:abuse@example\.com$/m);
    assert.match(sec.text, new RegExp(`^Contact: ${t.ctx.config.baseUrl}/report$`, 'm'));
    const expires = /^Expires: (\S+)$/m.exec(sec.text)?.[1];
    assert.ok(expires);
    const ahead = Date.parse(expires) - t.clock.now();
    assert.ok(ahead > 30 * 86_400_000 && ahead < 366 * 86_400_000, `Expires ${expires}`);

    const notFound = await rawRequest(t.port, { host: siteHost(slug, t.port), path: '/no-such-page' });
    assert.equal(notFound.status, 404);
    assert.ok(notFound.body.toString().includes(`href="${t.ctx.config.baseUrl}/report"`));
    const nowhere = await rawRequest(t.port, { host: siteHost('no-such-site-here', t.port), path: '/' });
    assert.ok(nowhere.body.toString().includes('/report"'));
  });
});

describe('abuse reports without ABUSE_CONTACT or operators', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('security.txt still has a Contact (the report page), and a report is stored though no one is mailed', async () => {
    const sec = await t.api('/.well-known/security.txt');
    assert.match(sec.text, /^Contact: http.*\/report$/m);
    assert.equal(/mailto:/.test(sec.text), false);
    const out = assertPublished(await publish(t, { 'index.html': 'x' }));
    const res = await t.api('/api/v1/reports', {
      method: 'POST',
      body: { url: out.create.body.siteUrl, category: 'other', details: 'odd' },
    });
    assert.equal(res.status, 201, res.text);
  });
});

describe('abuse report mail budget', () => {
  test(`past ${REPORT_MAILS_PER_HOUR} reports an hour from everyone, reports are stored but not mailed`, async () => {
    const smtp = await startSmtpServer();
    const t = await startTestApp({
      SMTP_URL: smtp.url,
      ADMIN_EMAILS: OPERATOR,
      RATE_LIMIT_REPORTS: '1000',
      TRUST_PROXY: '1',
    });
    try {
      const out = assertPublished(await publish(t, { 'index.html': 'x' }));
      const body = { url: out.create.body.siteUrl, category: 'spam', details: 'flood' };
      for (let i = 0; i < REPORT_MAILS_PER_HOUR + 5; i++) {
        const res = await t.api('/api/v1/reports', {
          method: 'POST',
          body,
          headers: { 'x-forwarded-for': `203.0.113.${i % 250}` },
        });
        assert.equal(res.status, 201, res.text);
      }
      assert.equal(smtp.mails.filter((m) => m.raw.includes('flood')).length, REPORT_MAILS_PER_HOUR);
      const stored = await t.ctx.db.kysely.selectFrom('reports').select('id').execute();
      assert.equal(stored.length, REPORT_MAILS_PER_HOUR + 5);
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
