// Operational endpoints and the OpenAPI document.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest, startTestApp, type TestApp } from '../helpers/app.js';

describe('operations', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('GET /healthz answers 200', async () => {
    const res = await t.api('/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
  });

  test('GET /readyz checks the database and the blob store', async () => {
    const res = await t.api('/readyz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true, database: 'ok', storage: 'ok' });
  });

  test('GET /metrics exposes requests by route and status and durations', async () => {
    await t.api('/api/v1/account');
    const res = await t.api('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(
      res.text,
      /slipway_http_requests_total\{method="GET",route="\/api\/v1\/account",status="401"\} 1/,
    );
    assert.match(res.text, /slipway_http_request_duration_seconds_bucket\{/);
  });

  test('GET /api/openapi.json is an OpenAPI 3 document generated from the routes', async () => {
    const res = await t.api('/api/openapi.json');
    assert.equal(res.status, 200);
    assert.match(res.body.openapi, /^3\./);
    const paths = Object.keys(res.body.paths);
    for (const p of ['/api/auth/agent/request-code', '/api/auth/agent/verify-code', '/api/v1/account']) {
      assert.ok(paths.includes(p), `${p} documented`);
    }
    const verify = res.body.paths['/api/auth/agent/verify-code'].post;
    assert.ok(verify.requestBody.content['application/json'].schema.properties.code);
    assert.ok(verify.responses['201']);
  });

  test('the BASE_URL host reaches the API; another host reaches the site server', async () => {
    const api = await rawRequest(t.port, { host: `localhost:${t.port}`, path: '/healthz' });
    assert.equal(api.status, 200);
    const site = await rawRequest(t.port, { host: `unknown-site.localhost:${t.port}`, path: '/healthz' });
    assert.equal(site.status, 404);
    assert.match(String(site.headers['content-type']), /^text\/html/);
    const other = await rawRequest(t.port, { host: 'www.example.org', path: '/' });
    assert.equal(other.status, 404);
    assert.match(other.body.toString(), /Not found/);
  });
});
