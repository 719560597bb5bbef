// `slipway webhooks` as a subprocess against the real app: add prints the secret once, list, deliveries,
// remove (with confirmation), and refusals answered as one JSON error document.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';

describe('slipway webhooks', () => {
  let t: TestApp;
  let cli: CliEnv;

  before(async () => {
    t = await startTestApp();
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'cli-hooks@example.com') });
  });
  after(async () => {
    await t.close();
    await cli.dispose();
  });

  test('add, list, deliveries, remove', async () => {
    const added = await cli.run([
      'webhooks',
      'add',
      'https://hooks.example.com/slipway',
      '--events',
      'site.published,site.deleted',
      '--json',
    ]);
    assert.equal(added.code, 0, added.stderr);
    const { id, secret, events } = added.json;
    assert.match(secret, /^whsec_/);
    assert.deepEqual(events, ['site.published', 'site.deleted']);

    const human = await cli.run(['webhooks', 'list']);
    assert.match(human.stdout, /^ID +URL +SITE +EVENTS\n/);
    assert.ok(human.stdout.includes(id));
    assert.ok(!human.stdout.includes(secret), 'the secret is printed by add only');

    const log = await cli.run(['webhooks', 'deliveries', id, '--json']);
    assert.deepEqual(log.json, { deliveries: [] });

    const refused = await cli.run(['webhooks', 'add', 'http://hooks.example.com/', '--json']);
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.json.code, 'INVALID_REQUEST');

    const unconfirmed = await cli.run(['webhooks', 'remove', id, '--json']);
    assert.notEqual(unconfirmed.code, 0);
    const removed = await cli.run(['webhooks', 'remove', id, '--yes', '--json']);
    assert.deepEqual(removed.json, { id, deleted: true });
  });
});
