// Every refusal on the API host carries the spec's error body {error, code, status}, whatever layer
// produced it: a path parameter that is not valid percent-encoded UTF-8, NUL, an overlong segment, a
// method the route lacks, a head node:http cannot parse or that is too large, a body on a GET. The routes
// are read from the running app, so a route added later is covered without touching this file.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { registeredRoutes } from '../../src/http/errors.js';
import { isRateExempt } from '../../src/http/rate-limit.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../src/serve/exchange.js';
import { rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { assertPublished, publish } from '../helpers/publish.js';

/** Path segments no route may turn into a 5xx or a non-spec body. */
const BAD_SEGMENTS: Record<string, string> = {
  'invalid UTF-8 (%C3%28)': '%C3%28',
  'invalid UTF-8 (%FF%FE)': '%FF%FE',
  'lone surrogate (%ED%A0%80)': '%ED%A0%80',
  'overlong encoding of / (%C0%AF)': '%C0%AF',
  'overlong 3-byte encoding (%E0%80%AF)': '%E0%80%AF',
  'truncated escape (%E2%82)': '%E2%82',
  'not an escape (%zz)': '%zz',
  'NUL (%00)': '%00',
  'encoded slash and dots (..%2F..%2Fetc)': '..%2F..%2Fetc',
  'overlong segment (3000 characters)': 'a'.repeat(3000),
};

/** A well-formed stand-in for each parameter, so only the parameter under test is bad. */
const GOOD_VALUE = 'abc';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: error bodies are inspected field by field.
  body: any;
}

async function send(t: TestApp, method: string, path: string, key: string): Promise<Answer> {
  const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  const res = await rawRequest(t.port, {
    host: `127.0.0.1:${t.port}`,
    path,
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(withBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(withBody ? { body: '{}' } : {}),
  });
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    body = res.body.toString('utf8');
  }
  return { status: res.status, headers: res.headers, body };
}

/** The spec's error body, a 4xx, and (unless the route is exempt) the rate-limit window headers. */
function assertSpecRefusal(res: Answer, what: string, rateHeaders: boolean): void {
  assert.ok(
    res.status >= 400 && res.status < 500,
    `${what}: status ${res.status} ${JSON.stringify(res.body)}`,
  );
  assert.equal(typeof res.body, 'object', `${what}: body is not JSON: ${String(res.body).slice(0, 200)}`);
  assert.equal(typeof res.body.error, 'string', `${what}: no error message in ${JSON.stringify(res.body)}`);
  assert.ok(res.body.code in ERROR_STATUS, `${what}: code ${res.body.code} is not in the catalogue`);
  assert.equal(res.body.status, res.status, `${what}: body status differs from the HTTP status`);
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  if (rateHeaders) assert.ok(res.headers['x-ratelimit-limit'], `${what}: no X-RateLimit-Limit`);
}

describe('refusals on the API host carry the spec error body', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'refusals@example.com');
  });
  after(() => t.close());

  test('every path parameter of every registered route refuses bad encodings with the error body', async () => {
    const routes = registeredRoutes(t.app).filter(
      (r) => r.method !== 'HEAD' && (r.url.includes(':') || r.url.includes('*')),
    );
    // The service registers parameterised routes (sites, uploads, and whatever comes later).
    assert.ok(routes.length >= 8, `only ${routes.length} parameterised routes found`);
    let requests = 0;
    for (const route of routes) {
      const params = route.url.split('/').filter((s) => s.startsWith(':') || s === '*');
      for (const param of params) {
        for (const [label, segment] of Object.entries(BAD_SEGMENTS)) {
          const path = route.url
            .split('/')
            .map((s) => (s === param ? segment : s.startsWith(':') || s === '*' ? GOOD_VALUE : s))
            .join('/');
          const res = await send(t, route.method, path, key);
          requests++;
          const what = `${route.method} ${route.url} with ${param} = ${label}`;
          if (!path.startsWith('/api/')) {
            // Web pages answer people with a page; only the status is the API's concern.
            assert.ok(res.status >= 400 && res.status < 500, `${what}: status ${res.status}`);
            continue;
          }
          assertSpecRefusal(res, what, !isRateExempt(route.method, path));
        }
      }
    }
    assert.ok(requests >= routes.length * Object.keys(BAD_SEGMENTS).length);
  });

  test('invalid percent-encoding answers 400 INVALID_REQUEST (not the framework body)', async () => {
    const res = await send(t, 'GET', '/api/v1/publish/%C3%28', key);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_REQUEST');
    assert.ok(!('statusCode' in res.body), 'no framework fields');
    assert.ok(res.headers['x-request-id'], 'the request id is there for support');
  });

  test('a method the route lacks answers 405 with Allow and the error body', async () => {
    const res = await send(t, 'PATCH', '/api/v1/publishes', key);
    assertSpecRefusal(res, 'PATCH /api/v1/publishes', true);
    assert.equal(res.status, 405);
    assert.match(String(res.headers.allow), /GET/);
  });

  test('a JSON body on a GET is refused or ignored, never a 5xx', async () => {
    const res = await rawRequest(t.port, {
      host: `127.0.0.1:${t.port}`,
      path: '/api/v1/account',
      method: 'GET',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{"x":',
    });
    assert.ok(res.status === 200 || (res.status >= 400 && res.status < 500), `status ${res.status}`);
    if (res.status !== 200) {
      const body = JSON.parse(res.body.toString('utf8'));
      assert.equal(body.status, res.status);
      assert.ok(body.code in ERROR_STATUS);
    }
  });

  test('a NUL in a path parameter reaching the database is a 4xx on every backend', async () => {
    // SQLite finds no such site (404); PostgreSQL refuses NUL in text (SQLSTATE 22021), mapped to 400.
    for (const path of ['/api/v1/publish/a%00b', '/api/v1/publish/a%00b/versions']) {
      const res = await send(t, 'GET', path, key);
      assertSpecRefusal(res, path, true);
    }
  });

  /** Writes raw bytes on a new connection and reads until the server closes it. */
  function rawExchange(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(t.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.on('error', reject);
      socket.write(bytes);
    });
  }

  function parseRaw(text: string): { status: number; body: Record<string, unknown> } {
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    return { status, body };
  }

  test('an oversized request head answers 431 with the error body', async () => {
    const text = await rawExchange(
      `GET /api/v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(MAX_REQUEST_HEAD_BYTES)}\r\n\r\n`,
    );
    const { status, body } = parseRaw(text);
    assert.equal(status, 431);
    assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'status']);
    assert.equal(body.status, 431);
    assert.equal(body.code, 'INVALID_REQUEST');
  });

  test('the asterisk form is for OPTIONS only: GET * answers 400 with the error body on every host', async () => {
    for (const host of ['127.0.0.1', `localhost:${t.port}`, `some-site.localhost:${t.port}`]) {
      const text = await rawExchange(`GET * HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      const { status, body } = parseRaw(text);
      assert.equal(status, 400, `${host}: ${text.slice(0, 200)}`);
      assert.equal(body.code, 'INVALID_REQUEST');
    }
    const options = await rawExchange(
      `OPTIONS * HTTP/1.1\r\nHost: localhost:${t.port}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(options, /^HTTP\/1\.1 204 /);
    assert.match(options, /\r\nAllow: [A-Z, ]*GET/i);
  });

  test('a request in absolute form is served by the target’s host, not the Host field (RFC 9112 §3.2.2)', async () => {
    const slug = assertPublished(await publish(t, { 'index.html': '<p>absolute</p>' }, { key })).slug;
    const toSite = await rawExchange(
      `GET http://${slug}.localhost:${t.port}/ HTTP/1.1\r\nHost: localhost:${t.port}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(toSite, /^HTTP\/1\.1 200 /);
    assert.ok(toSite.endsWith('<p>absolute</p>'), toSite.slice(0, 300));
    const toApi = await rawExchange(
      `GET http://localhost:${t.port}/api/v1/account HTTP/1.1\r\nHost: ${slug}.localhost:${t.port}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(parseRaw(toApi).status, 401);
  });

  test('a head that is not HTTP answers 400 with the error body', async () => {
    const text = await rawExchange('GET /api/v1/account HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header\r\n\r\n');
    const { status, body } = parseRaw(text);
    assert.equal(status, 400);
    assert.equal(body.status, 400);
    assert.equal(body.code, 'INVALID_REQUEST');
  });
});
