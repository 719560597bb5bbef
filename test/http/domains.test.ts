// Custom domains through real HTTP with a real DNS server (dns2) as DNS_SERVERS (spec "Custom domains";
// CONTRACT "Custom domains", "Hosts"): add, verify (TXT + CNAME, apex by A records), serve, delete.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { upgradeToHobby } from '../helpers/hobby.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { hostRequest } from '../serve/site-client.js';

const TARGET = 'sites.slipway-target.example';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function assertError(res: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

describe('custom domains', () => {
  let dns: DnsPeer;
  let t: TestApp;
  let key: string;
  let slug: string;

  before(async () => {
    dns = await startDnsPeer({ [TARGET]: { A: ['203.0.113.10'], AAAA: ['2001:db8::10'] } });
    t = await startTestApp({ DNS_SERVERS: dns.server, CNAME_TARGET: TARGET });
    key = await signIn(t, 'domains@example.com');
    slug = assertPublished(await publish(t, { 'index.html': '<h1>shop</h1>', 'a.txt': 'A' }, { key })).slug;
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  const verify = (domain: string, k = key) =>
    t.api(`/api/v1/domains/${domain}/verify`, { method: 'POST', key: k });

  test('POST /api/v1/domains answers 201 pending with the CNAME and TXT records', async () => {
    const res = await t.api('/api/v1/domains', {
      method: 'POST',
      key,
      body: { domain: 'Shop.Customer.example' },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.domain, 'shop.customer.example');
    assert.equal(res.body.status, 'pending');
    assert.equal(typeof res.body.dns.instructions, 'string');
    const [cname, txt] = res.body.dns.records;
    assert.deepEqual(
      { ...cname, note: undefined },
      { type: 'CNAME', name: 'shop.customer.example', value: TARGET, note: undefined },
    );
    assert.equal(txt.type, 'TXT');
    assert.equal(txt.name, '_service.shop.customer.example');
    assert.match(txt.value, /^service-verify=[0-9a-f]{32}$/);
    const list = await t.api('/api/v1/domains', { key });
    assert.equal(list.body.total, 1);
    const d = list.body.domains[0];
    assert.deepEqual(Object.keys(d).sort(), [
      'createdAt', 'domain', 'isApex', 'sslStatus', 'status', 'verificationTxtName', 'verificationTxtValue', 'verifiedAt',
    ]); // biome-ignore format: a field list
    assert.equal(d.status, 'pending');
    assert.equal(d.sslStatus, 'pending');
    assert.equal(d.isApex, false);
    assert.equal(d.verificationTxtName, '_service.shop.customer.example');
    assert.equal(d.verificationTxtValue, txt.value);
    assert.match(d.createdAt, ISO);
    assert.equal(d.verifiedAt, null);
  });

  test('verify: no records, TXT only, wrong TXT, CNAME elsewhere stay pending naming the record; TXT + CNAME -> active', async () => {
    const domain = 'shop.customer.example';
    const txtValue = (await t.api('/api/v1/domains', { key })).body.domains[0].verificationTxtValue;

    let res = await verify(domain);
    assert.equal(res.status, 200);
    assert.equal(res.body.verified, false);
    assert.equal(res.body.status, 'pending');
    assert.match(res.body.message, /TXT _service\.shop\.customer\.example/);
    assert.match(res.body.message, /CNAME shop\.customer\.example/);

    dns.records[`_service.${domain}`] = { TXT: [txtValue] };
    res = await verify(domain);
    assert.equal(res.body.verified, false, 'TXT alone is not enough');
    assert.doesNotMatch(res.body.message, /TXT/);
    assert.match(res.body.message, /CNAME/);

    dns.records[`_service.${domain}`] = { TXT: ['service-verify=not-the-token'] };
    dns.records[domain] = { CNAME: TARGET };
    res = await verify(domain);
    assert.equal(res.body.verified, false, 'a wrong TXT value');
    assert.match(res.body.message, /TXT _service\.shop\.customer\.example does not hold/);

    dns.records[`_service.${domain}`] = { TXT: [txtValue] };
    dns.records[domain] = { CNAME: 'elsewhere.example.net' };
    res = await verify(domain);
    assert.equal(res.body.verified, false, 'a CNAME to another target');
    assert.match(res.body.message, /points at elsewhere\.example\.net/);

    dns.records[domain] = { CNAME: TARGET };
    res = await verify(domain);
    assert.deepEqual(
      { status: res.body.status, verified: res.body.verified },
      { status: 'active', verified: true },
      res.body.message,
    );
    const d = (await t.api('/api/v1/domains', { key })).body.domains[0];
    assert.equal(d.status, 'active');
    assert.equal(d.sslStatus, 'provisioning');
    assert.match(d.verifiedAt, ISO);
  });

  test('an active domain serves the site linked to it by Host; the TLS ask says yes; DELETE stops it at once', async () => {
    const domain = 'shop.customer.example';
    assertError(
      await t.api('/api/v1/links', { method: 'POST', key, body: { slug, domain: 'other.example' } }),
      404,
      'NOT_FOUND',
    );
    const link = await t.api('/api/v1/links', { method: 'POST', key, body: { slug, domain } });
    assert.equal(link.status, 201, link.text);
    assert.equal(link.body.url, `https://${domain}/`);
    assert.equal(link.body.domain, domain);

    const page = await hostRequest(t, domain, '/');
    assert.equal(page.status, 200);
    assert.equal(page.text, '<h1>shop</h1>');
    assert.equal((await hostRequest(t, domain, '/a.txt')).text, 'A');

    const ask = await fetch(`${t.url}/internal/tls-ask?domain=${domain}`);
    assert.equal(ask.status, 200);
    assert.equal((await t.api('/api/v1/domains', { key })).body.domains[0].sslStatus, 'active');
    assert.equal((await fetch(`${t.url}/internal/tls-ask?domain=unknown.example`)).status, 404);
    assert.equal(
      (await fetch(`${t.url}/internal/tls-ask?domain=${slug}.localhost`)).status,
      200,
      'a live site host',
    );
    assert.equal((await fetch(`${t.url}/internal/tls-ask?domain=nosuchsite.localhost`)).status, 404);
    assert.equal((await fetch(`${t.url}/internal/tls-ask`)).status, 404);

    const del = await t.api(`/api/v1/domains/${domain}`, { method: 'DELETE', key });
    assert.deepEqual(del.body, { domain, deleted: true });
    assert.equal((await hostRequest(t, domain, '/')).status, 404, 'served after DELETE');
    assert.equal((await fetch(`${t.url}/internal/tls-ask?domain=${domain}`)).status, 404);
    assert.deepEqual((await t.api('/api/v1/links', { key })).body.links, [], 'the link went with the domain');
    assertError(await t.api(`/api/v1/domains/${domain}`, { method: 'DELETE', key }), 404, 'NOT_FOUND');
  });

  test('an apex domain verifies by A/AAAA records that are all among the target addresses', async () => {
    const apexKey = await signIn(t, 'apex@example.com');
    const res = await t.api('/api/v1/domains', {
      method: 'POST',
      key: apexKey,
      body: { domain: 'customer-apex.co.uk' },
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.dns.records[0].note, /ALIAS|ANAME|flattening/);
    const list = await t.api('/api/v1/domains', { key: apexKey });
    assert.equal(list.body.domains[0].isApex, true);
    dns.records['_service.customer-apex.co.uk'] = { TXT: [list.body.domains[0].verificationTxtValue] };
    dns.records['customer-apex.co.uk'] = { A: ['203.0.113.10', '198.51.100.99'] };
    let v = await verify('customer-apex.co.uk', apexKey);
    assert.equal(v.body.verified, false);
    assert.match(v.body.message, /198\.51\.100\.99/);
    dns.records['customer-apex.co.uk'] = { A: ['203.0.113.10'], AAAA: ['2001:db8::10'] };
    v = await verify('customer-apex.co.uk', apexKey);
    assert.equal(v.body.verified, true, v.body.message);
  });

  test('a DNS server that does not answer makes a failed verify within seconds, not a 500', async () => {
    const k = await signIn(t, 'silent@example.com');
    assert.equal(
      (await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: 'quiet.example.org' } }))
        .status,
      201,
    );
    dns.silent = true;
    try {
      const started = Date.now();
      const res = await verify('quiet.example.org', k);
      const elapsed = Date.now() - started;
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.verified, false);
      assert.match(res.body.message, /did not answer/);
      assert.ok(elapsed < 8000, `took ${elapsed} ms`);
    } finally {
      dns.silent = false;
    }
  });

  test('invalid, IP, reserved-host and duplicate domains answer 400; a second domain on Free is 403 PLAN_LIMIT', async () => {
    const k = await signIn(t, 'limits@example.com');
    for (const domain of [
      'not a domain',
      'https://x.example.com',
      '*.example.com',
      'x.example.com:8443',
      '127.0.0.1',
      '[::1]',
      'localhost',
      'com',
      'co.uk',
      `${slug}.localhost`,
      'a'.repeat(64) + '.example.com',
      42,
    ]) {
      assertError(
        await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain } }),
        400,
        'INVALID_REQUEST',
      );
    }
    assert.equal(
      (await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: 'one.example.net' } }))
        .status,
      201,
    );
    // Registered by this account, then by another.
    assertError(
      await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: 'one.example.net' } }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await t.api('/api/v1/domains', { method: 'POST', key, body: { domain: 'one.example.net' } }),
      400,
      'INVALID_REQUEST',
    );
    assertError(
      await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: 'two.example.net' } }),
      403,
      'PLAN_LIMIT',
    );
    // Hobby: 5.
    await upgradeToHobby(t, k);
    for (const n of ['two', 'three', 'four', 'five']) {
      assert.equal(
        (await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: `${n}.example.net` } }))
          .status,
        201,
      );
    }
    assertError(
      await t.api('/api/v1/domains', { method: 'POST', key: k, body: { domain: 'six.example.net' } }),
      403,
      'PLAN_LIMIT',
    );
    // Another account's domain is not found.
    assertError(await verify('one.example.net'), 404, 'NOT_FOUND');
    assertError(await t.api('/api/v1/domains/one.example.net', { method: 'DELETE', key }), 404, 'NOT_FOUND');
  });
});
