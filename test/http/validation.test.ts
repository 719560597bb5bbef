// A request that does not fit its route's schema (src/api/) is refused with 400 INVALID_REQUEST and one
// sentence naming the field as the API spells it and what is wrong with it (src/http/validation.ts),
// never quoting a value back: bodies hold secrets, and refusals are logged.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let key: string;
before(async () => {
  t = await startTestApp();
  key = await signIn(t, 'validation@example.com');
});
after(async () => {
  await t?.close();
});

/** The refusal of a request, checked to be the spec's 400 body; its message. */
async function refusal(path: string, method: string, body?: unknown): Promise<string> {
  const res = await t.api(path, { method, key, ...(body === undefined ? {} : { body }) });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.code, 'INVALID_REQUEST');
  assert.equal(res.body.status, 400);
  assert.equal(res.body.hint, 'See /api/openapi.json for the expected shape.');
  return res.body.error;
}

describe('a request that does not fit its schema', () => {
  test('without a key, to an operation that needs one, is answered 401 before its body is looked at', async () => {
    for (const [method, path, body] of [
      ['POST', '/api/v1/domains', undefined],
      ['PUT', '/api/v1/handle', { handle: 'ab' }],
      ['PUT', '/api/v1/publish/some-site/variables', {}],
      ['POST', '/api/v1/links', { slug: 42 }],
    ] as const) {
      const res = await t.api(path, { method, ...(body === undefined ? {} : { body }) });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.code, 'UNAUTHORIZED');
    }
  });

  test('is refused with a sentence naming the field and what is wrong', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['PUT', '/api/v1/handle', { handle: 'ab' }, 'handle must have 3 to 30 characters; it has 2.'],
      ['PUT', '/api/v1/handle', { handle: 42 }, 'handle: a string is required; got 42.'],
      [
        'PUT',
        '/api/v1/handle',
        { handle: 'Ab-' },
        'handle is not valid: 3 to 30 lowercase letters, digits and hyphens, not starting or ending with a hyphen; no "--"; not a reserved name.',
      ],
      [
        'POST',
        '/api/v1/publish',
        { files: [{ size: 1, contentType: 'text/html' }] },
        'files[0].path is required: relative path, no leading /, no .. segment, at most 500 characters.',
      ],
      ['POST', '/api/v1/links', { location: '/x' }, 'slug is required: the site to link.'],
      ['POST', '/api/v1/links', { slug: 'a', location: 5 }, 'location: a string or null is required; got 5.'],
      [
        'POST',
        '/api/v1/links',
        { slug: 'a', location: `/${'a'.repeat(200)}` },
        'location must have at most 200 characters; it has 201.',
      ],
      [
        'PUT',
        '/api/v1/publish/some-site/variables',
        { GOOD: 'x', '1BAD': 'y' },
        'variable name "1BAD" is not valid: a letter, then letters, digits and underscores; at most 64 characters.',
      ],
      ['PUT', '/api/v1/publish/some-site/variables', ['A'], 'the body: an object is required; got an array.'],
      [
        'PUT',
        '/api/v1/publish/some-site/proxy-hosts',
        { hosts: [] },
        'hosts must have 1 to 50 entries; it has 0.',
      ],
      [
        'PUT',
        '/api/v1/publish/some-site/proxy-hosts',
        { hosts: ['a.example', 7] },
        'hosts[1]: a string is required; got 7.',
      ],
      ['GET', '/api/v1/publishes?limit=0', undefined, 'limit is not valid: 1 to 500.'],
    ];
    for (const [method, path, body, sentence] of cases) {
      assert.equal(await refusal(path, method, body), `Invalid request: ${sentence}`, `${method} ${path}`);
    }
  });

  test('has its values described, never quoted back nor logged (a body may hold secrets)', async () => {
    const secret = 'sk_live_not-to-be-echoed-'.repeat(400);
    const variables = await refusal('/api/v1/publish/some-site/variables', 'PUT', { STRIPE_KEY: secret });
    assert.equal(variables, 'Invalid request: STRIPE_KEY must have 1 to 8192 characters; it has 10000.');
    const metadata = await refusal('/api/v1/publish/some-site/metadata', 'PATCH', { ttlSeconds: 'hunter2' });
    assert.equal(
      metadata,
      'Invalid request: ttlSeconds: a number or null is required; got a string of 7 characters.',
    );
    const logs = t.logs.join('\n');
    assert.ok(!logs.includes('not-to-be-echoed') && !logs.includes('hunter2'), 'a refused value was logged');
  });
});
