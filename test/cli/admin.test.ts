// `slipway admin ...` as subprocesses against the real app (issue 26 part 0): an operator finds an
// account by email, takes its site down and reinstates it, suspends and unsuspends it by email, blocks and
// unblocks; an action without a terminal needs --yes; anyone else's key gets the server's 404.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { rawRequest, signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, type CliResult, cliEnv } from '../helpers/cli.js';
import { assertPublished, publish } from '../helpers/publish.js';

function ok(res: CliResult) {
  assert.equal(res.code, 0, `exit ${res.code}: ${res.stderr}`);
  assert.notEqual(res.json, undefined, `stdout is one JSON document: ${res.stdout}`);
  return res.json;
}

describe('slipway admin', () => {
  let t: TestApp;
  let op: CliEnv;
  let plain: CliEnv;
  let ownerKey: string;

  before(async () => {
    t = await startTestApp({ ADMIN_EMAILS: 'cli-ops@example.com' });
    op = await cliEnv(t.url, { SLIPWAY_API_KEY: await signIn(t, 'cli-ops@example.com') });
    ownerKey = await signIn(t, 'cli-owner@example.com');
    plain = await cliEnv(t.url, { SLIPWAY_API_KEY: ownerKey });
  });

  after(async () => {
    await op?.dispose();
    await plain?.dispose();
    await t?.close();
  });

  test('search, takedown, reinstate, suspend, unsuspend, block, blocks, unblock', async () => {
    const { slug } = assertPublished(await publish(t, { 'index.html': 'cli site' }, { key: ownerKey }));
    const page = () => rawRequest(t.port, { host: `${slug}.localhost:${t.port}`, path: '/' });

    const found = ok(await op.run(['admin', 'search', 'cli-owner@example.com', '--json']));
    assert.equal(found.accounts[0].email, 'cli-owner@example.com');
    assert.ok(found.sites.some((s: { slug: string }) => s.slug === slug));
    const table = await op.run(['admin', 'search', slug]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /cli-owner@example\.com/);

    const unconfirmed = await op.run(['admin', 'takedown', slug, '--reason', 'phishing', '--json']);
    assert.notEqual(unconfirmed.code, 0, 'no terminal and no --yes: refused');
    assert.equal((await page()).status, 200);
    ok(await op.run(['admin', 'takedown', slug, '--reason', 'phishing', '--yes', '--json']));
    assert.equal((await page()).status, 451);
    ok(await op.run(['admin', 'reinstate', slug, '--yes', '--json']));
    assert.equal((await page()).status, 200);

    ok(await op.run(['admin', 'suspend', 'cli-owner@example.com', '--reason', 'spam', '--yes', '--json']));
    assert.equal((await page()).status, 403);
    assert.equal(
      (await plain.run(['list', '--json'])).code !== 0,
      true,
      "the suspended owner's CLI is refused",
    );
    ok(await op.run(['admin', 'unsuspend', 'cli-owner@example.com', '--yes', '--json']));
    assert.equal((await page()).status, 200);

    const block = ok(
      await op.run(['admin', 'block', 'email_domain', 'spam.test', '--reason', 'spam', '--json']),
    );
    const listed = ok(await op.run(['admin', 'blocks', '--json']));
    assert.deepEqual(
      listed.blocks.map((b: { value: string }) => b.value),
      ['spam.test'],
    );
    ok(await op.run(['admin', 'unblock', block.id, '--json']));
    assert.deepEqual(ok(await op.run(['admin', 'blocks', '--json'])).blocks, []);

    // The log of what was just done: the owner's entries (by email), newest first, and every account's.
    const log = ok(await op.run(['admin', 'audit', '--account', 'cli-owner@example.com', '--json']));
    const ownerId = log.entries[0].accountId as string;
    assert.match(ownerId, /^acct_/);
    assert.deepEqual(
      log.entries
        .filter((e: { actor: { kind: string } }) => e.actor.kind === 'operator')
        .map((e: { action: string; accountId: string }) => [e.action, e.accountId]),
      [
        ['account.unsuspend', ownerId],
        ['account.suspend', ownerId],
        ['site.takedown_lift', ownerId],
        ['site.takedown', ownerId],
      ],
    );
    const two = ok(await op.run(['admin', 'audit', '--limit', '2', '--json']));
    assert.deepEqual(
      two.entries.map((e: { action: string; accountId: string | null }) => [e.action, e.accountId]),
      [
        ['block.remove', null],
        ['block.add', null],
      ],
    );
    const older = ok(
      await op.run(['admin', 'audit', '--limit', '1', '--before', two.entries[1].id, '--json']),
    );
    assert.equal(older.entries[0].action, 'account.unsuspend');
    const shown = await op.run(['admin', 'audit', '--account', ownerId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /site\.takedown/);
    assert.notEqual((await plain.run(['admin', 'audit', '--json'])).code, 0, 'not an operator: refused');

    // Reports: listed, closed without acting (needs --yes without a terminal), then among the closed.
    const filed = await t.api('/api/v1/reports', {
      method: 'POST',
      body: { url: `http://${slug}.${t.ctx.config.siteDomain}/`, category: 'spam', details: 'ads' },
    });
    assert.equal(filed.status, 201, filed.text);
    const open = ok(await op.run(['admin', 'reports', '--json']));
    assert.deepEqual(
      open.reports.map((r: { id: string }) => r.id),
      [filed.body.id],
    );
    assert.notEqual((await op.run(['admin', 'close-report', filed.body.id, '--reason', 'ok'])).code, 0);
    ok(await op.run(['admin', 'close-report', filed.body.id, '--reason', 'not spam', '--yes', '--json']));
    assert.deepEqual(ok(await op.run(['admin', 'reports', '--json'])).reports, []);
    const closedList = await op.run(['admin', 'reports', '--closed']);
    assert.match(closedList.stdout, new RegExp(filed.body.id));

    const refused = await plain.run(['admin', 'blocks', '--json']);
    assert.notEqual(refused.code, 0);
    assert.equal(refused.json?.code, 'NOT_FOUND', refused.stdout);
  });
});
