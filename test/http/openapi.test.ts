// The OpenAPI document at /api/openapi.json (issue 14: "every endpoint of the spec and the CONTRACT is in
// the OpenAPI document with request and response schemas and examples"): every operation is there, each
// JSON body and answer has a schema and an example, each example fits its schema (checked with Ajv, as a
// client generator would), and the documented schemas describe what the running service really answers.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import { ERROR_STATUS } from '../../src/core/errors.js';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';

/** The spec's endpoints, then those CONTRACT.md adds (versions, links, uploads, callbacks, operations). */
const OPERATIONS = [
  'post /api/auth/agent/request-code',
  'post /api/auth/agent/verify-code',
  'get /api/v1/account',
  'post /api/v1/publish',
  'put /api/v1/publish/{slug}',
  'get /api/v1/publish/{slug}',
  'delete /api/v1/publish/{slug}',
  'post /api/v1/publish/{slug}/finalize',
  'post /api/v1/publish/{slug}/duplicate',
  'post /api/v1/publish/{slug}/claim',
  'patch /api/v1/publish/{slug}/metadata',
  'get /api/v1/publishes',
  'put /api/v1/_upload/{*}',
  'get /api/v1/publish/{slug}/variables',
  'put /api/v1/publish/{slug}/variables',
  'delete /api/v1/publish/{slug}/variables/{name}',
  'get /api/v1/publish/{slug}/proxy-hosts',
  'put /api/v1/publish/{slug}/proxy-hosts',
  'delete /api/v1/publish/{slug}/proxy-hosts/{hostname}',
  'post /api/v1/proxy/{slug}',
  'get /api/v1/handle',
  'put /api/v1/handle',
  'delete /api/v1/handle',
  'post /api/v1/domains',
  'get /api/v1/domains',
  'post /api/v1/domains/{domain}/verify',
  'delete /api/v1/domains/{domain}',
  'post /api/billing/checkout',
  'post /api/billing/portal',
  // CONTRACT.md
  'get /api/v1/publish/{slug}/versions',
  'post /api/v1/publish/{slug}/versions/{versionId}/restore',
  'get /api/v1/links',
  'post /api/v1/links',
  'delete /api/v1/links/{id}',
  'post /api/billing/webhook',
  'get /internal/tls-ask',
  'get /healthz',
  'get /readyz',
  'get /metrics',
  'get /api/openapi.json',
];

interface Media {
  schema?: Record<string, unknown>;
  example?: unknown;
}
interface Operation {
  summary?: string;
  tags?: string[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>>; servers: { url: string }[] };

let t: TestApp;
let doc: Doc;
const ajv = new Ajv({ strict: false, allErrors: true });
formats.default(ajv);

function validator(schema: Record<string, unknown> | undefined, where: string): ValidateFunction {
  assert.ok(schema, `${where} has no schema`);
  return ajv.compile(schema);
}

function assertFits(schema: Record<string, unknown> | undefined, value: unknown, where: string) {
  const validate = validator(schema, where);
  assert.ok(validate(value), `${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
}

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ id: `${method} ${path}`, op })),
  );

before(async () => {
  // The admin API's bodies are checked with an operator's key (anyone else gets 404 before validation).
  t = await startTestApp({ ADMIN_EMAILS: 'documented-bodies@example.com' });
  doc = (await (await fetch(`${t.url}/api/openapi.json`)).json()) as Doc;
});
after(async () => {
  await t?.close();
});

describe('the OpenAPI document', () => {
  test('lists every endpoint of the spec and CONTRACT, each with a summary and a tag, and nothing internal to the web pages', () => {
    const found = operations().map((o) => o.id);
    for (const id of OPERATIONS) assert.ok(found.includes(id), `missing ${id}`);
    for (const { id, op } of operations()) {
      assert.ok(op.summary, `${id} has no summary`);
      assert.ok(op.tags?.length, `${id} has no tag`);
    }
    // Pages and their forms are for browsers, not API clients.
    for (const id of found) assert.doesNotMatch(id, /^\w+ \/(dashboard|login|logout|claim|billing\/test)/);
    assert.equal(doc.servers[0]?.url, t.ctx.config.baseUrl);
  });

  test('every request body has a schema, and every JSON one an example that fits it', () => {
    let checked = 0;
    for (const { id, op } of operations()) {
      if (!op.requestBody) continue;
      for (const [type, media] of Object.entries(op.requestBody.content)) {
        assert.ok(media.schema, `${id} ${type} body has no schema`);
        if (!type.includes('json')) continue;
        assert.notEqual(media.example, undefined, `${id} has no request example`);
        assertFits(media.schema, media.example, `${id} request example`);
        checked++;
      }
    }
    assert.ok(checked >= 14, `only ${checked} JSON request examples`);
  });

  test('every answer has a description; JSON answers have a schema and an example that fits it', () => {
    let checked = 0;
    for (const { id, op } of operations()) {
      assert.ok(Object.keys(op.responses).length > 0, `${id} has no responses`);
      for (const [status, response] of Object.entries(op.responses)) {
        assert.ok(response.description, `${id} ${status} has no description`);
        const json = response.content?.['application/json'];
        if (!json) continue;
        assert.notEqual(json.example, undefined, `${id} ${status} has no example`);
        assertFits(json.schema, json.example, `${id} ${status} example`);
        checked++;
      }
    }
    assert.ok(checked >= 100, `only ${checked} JSON answer examples`);
  });

  test('every JSON request body is a schema the service holds requests to (documented = validated)', async () => {
    // A body the document refuses is refused by the service before anything but the key looks at it (no
    // such site): the schema shown is the one the route validates with. The proxy checks its caller first
    // (and is off here); raw bodies (uploads, the provider callback) are bytes, not JSON.
    const key = await signIn(t, 'documented-bodies@example.com');
    const schemaOf = (op: Operation) => op.requestBody?.content['application/json']?.schema;
    /** A value the property's schema refuses: `true`, unless it takes booleans. */
    const wrong = (property: Record<string, unknown> = {}) => {
      const branches = (property.anyOf ?? [property]) as Array<{ type?: string }>;
      return branches.some((b) => b.type === 'boolean') ? 'x' : true;
    };
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const schema = schemaOf(op) as
          | {
              required?: string[];
              properties?: Record<string, Record<string, unknown>>;
              propertyNames?: unknown;
            }
          | undefined;
        if (!schema || path.startsWith('/api/v1/proxy/') || path === '/api/billing/webhook') continue;
        const example = op.requestBody!.content['application/json']!.example as Record<string, unknown>;
        const bad: Array<[Record<string, unknown>, string]> = schema.propertyNames
          ? [[{ '0 not a name': 'x' }, '0 not a name']]
          : (schema.required ?? Object.keys(schema.properties ?? {}).slice(0, 1)).map((name) => [
              { ...example, [name]: wrong(schema.properties?.[name]) },
              name,
            ]);
        assert.ok(bad.length > 0, `${method} ${path}: its body has no required field to break`);
        for (const [body, field] of bad) {
          const res = await t.api(path.replace(/\{[^}]+\}/g, 'no-such-thing'), {
            method: method.toUpperCase(),
            key,
            body,
          });
          assert.equal(res.status, 400, `${method} ${path} with ${JSON.stringify(body)}: ${res.text}`);
          assert.equal(res.body.code, 'INVALID_REQUEST');
          assert.ok(
            res.body.error.includes(field),
            `${method} ${path}: "${res.body.error}" names no ${field}`,
          );
          checked++;
        }
      }
    }
    assert.ok(checked >= 13, `only ${checked} bodies checked`);
  });

  test("error examples are the spec's error body with a catalogue code and a status in their range", () => {
    for (const { id, op } of operations()) {
      for (const range of ['4XX', '5XX'] as const) {
        const example = op.responses[range]?.content?.['application/json']?.example as
          | { code: keyof typeof ERROR_STATUS; status: number; error: string }
          | undefined;
        if (!example) continue;
        assert.ok(example.code in ERROR_STATUS, `${id} ${range}: unknown code ${example.code}`);
        assert.equal(String(example.status)[0], range[0], `${id} ${range}: status ${example.status}`);
        assert.ok(example.error.length > 0);
      }
    }
  });

  test("URLs in examples are this server's (BASE_URL and the site domain)", () => {
    const publish = doc.paths['/api/v1/publish']!.post!.responses['201']!.content!['application/json']!
      .example as { siteUrl: string; claimUrl: string; upload: { uploads: { url: string }[] } };
    assert.ok(publish.claimUrl.startsWith(`${t.ctx.config.baseUrl}/claim?`), publish.claimUrl);
    assert.ok(publish.upload.uploads[0]!.url.startsWith(`${t.ctx.config.baseUrl}/api/v1/_upload/`));
    assert.match(publish.siteUrl, new RegExp(`^http://[a-z0-9-]+\\.${t.ctx.config.siteDomain}/$`));
  });

  test('the documented schemas describe what the service answers (request examples sent for real)', async () => {
    const call = async (method: string, path: string, body?: unknown, key?: string) => {
      const res = await fetch(`${t.url}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const media = (path: string, method: string, status: string) =>
      doc.paths[path]![method]!.responses[status]!.content!['application/json']!;
    const requestExample = (path: string, method: string) =>
      doc.paths[path]![method]!.requestBody!.content['application/json']!.example;

    const sent = await call(
      'POST',
      '/api/auth/agent/request-code',
      requestExample('/api/auth/agent/request-code', 'post'),
    );
    assert.equal(sent.status, 200);
    assertFits(media('/api/auth/agent/request-code', 'post', '200').schema, sent.body, 'request-code answer');

    const created = await call('POST', '/api/v1/publish', requestExample('/api/v1/publish', 'post'));
    assert.equal(created.status, 201);
    assertFits(media('/api/v1/publish', 'post', '201').schema, created.body, 'publish answer');

    const refused = await call('GET', '/api/v1/account', undefined, 'svc_live_0000');
    assert.equal(refused.status, 401);
    assertFits(media('/api/v1/account', 'get', '4XX').schema, refused.body, 'account refusal');
    assert.deepEqual(refused.body, media('/api/v1/account', 'get', '4XX').example);

    const health = await call('GET', '/readyz');
    assertFits(media('/readyz', 'get', '200').schema, health.body, 'readyz answer');
    assert.deepEqual(health.body, media('/readyz', 'get', '200').example);
  });
});
