// Operators on two nodes sharing PostgreSQL, S3 and Redis (issue 26 part 0): a takedown or suspension made
// on node A is what node B answers on its very next requests, though B had the site cached (451 on every
// host, 403 for a suspended owner's sites; the owner's key, deploy token and session 401 on B); restoring on
// A brings everything back on B; a hash blocked on A is refused at finalize on B for another account.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from '../helpers/app.js';
import {
  type Cluster,
  createVersion,
  finalizeOn,
  publishOn,
  type ServiceNode,
  signInOn,
  startCluster,
  uploadFile,
} from '../helpers/cluster.js';
import { sha256 } from '../helpers/publish.js';

const OPERATOR = 'cluster-ops@example.com';

/** A browser session on `node` (the web sign-in through its dev outbox): the Cookie header value. */
async function sessionOn(node: ServiceNode, email: string): Promise<string> {
  const jar = new Map<string, string>();
  const call = async (path: string, form?: Record<string, string>) => {
    const res = await fetch(node.url + path, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return { status: res.status, text: await res.text() };
  };
  const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const page = await call('/login');
  const sent = await call('/login', { email, next: '/dashboard', _csrf: csrf(page.text) });
  const outbox = await readFile(join(node.dataDir, 'outbox.log'), 'utf8');
  const code = [...outbox.matchAll(/([A-Z0-9]{4}-[A-Z0-9]{4})/g)].at(-1)?.[1] ?? '';
  const done = await call('/login/code', { email, code, next: '/dashboard', _csrf: csrf(sent.text) });
  assert.equal(done.status, 303, done.text);
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

describe('operators on two nodes', { timeout: 120_000 }, () => {
  let cluster: Cluster;
  let a: ServiceNode;
  let b: ServiceNode;

  before(async () => {
    cluster = await startCluster({
      env: { ADMIN_EMAILS: OPERATOR, RATE_LIMIT_FREE: '100000', RATE_LIMIT_ANONYMOUS: '1000' },
    });
    [a, b] = await Promise.all([cluster.startNode(), cluster.startNode()]);
  });

  after(() => cluster?.dispose());

  const onA = (key: string, method: string, path: string, body?: unknown) =>
    fetch(`${a.url}/api/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const pageOnB = (host: string) => rawRequest(b.port, { host: `${host}.localhost:${b.port}`, path: '/' });
  /** B's answer once it is `status`, polling for at most a second (Redis carries the event). */
  const statusOnB = async (host: string, status: number) => {
    const deadline = Date.now() + 1000;
    let got = 0;
    do got = (await pageOnB(host)).status;
    while (got !== status && Date.now() < deadline);
    return got;
  };

  test('takedown, suspension and their undoing on A are what B answers at once', async () => {
    const op = await signInOn(a, OPERATOR);
    const owner = await signInOn(a, 'cluster-owner@example.com');
    const slug = await publishOn(a, owner, { 'index.html': '<h1>owned</h1>' });
    const tokenRes = await fetch(`${a.url}/api/v1/publish/${slug}/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ci' }),
    });
    const token = ((await tokenRes.json()) as { token: string }).token;
    const cookie = await sessionOn(a, 'cluster-owner@example.com');
    assert.equal((await pageOnB(slug)).status, 200, 'B has the site cached');
    const onB = (path: string, headers: Record<string, string>) =>
      fetch(b.url + path, { headers, redirect: 'manual' }).then((r) => r.status);

    assert.equal((await onA(op, 'POST', `/sites/${slug}/takedown`, { reason: 'phishing' })).status, 200);
    assert.equal(await statusOnB(slug, 451), 451, 'B answers 451 within a second');
    assert.equal((await onA(op, 'DELETE', `/sites/${slug}/takedown`)).status, 200);
    assert.equal(await statusOnB(slug, 200), 200, 'restored on B');

    const search = (await (await onA(op, 'GET', '/search?q=cluster-owner%40example.com')).json()) as {
      accounts: Array<{ id: string }>;
    };
    const id = search.accounts[0]!.id;
    assert.equal((await onA(op, 'POST', `/accounts/${id}/suspend`, { reason: 'spam' })).status, 200);
    assert.equal(await statusOnB(slug, 403), 403, "B answers the suspended owner's site 403");
    assert.equal(await onB('/api/v1/publishes', { authorization: `Bearer ${owner}` }), 401, 'key on B');
    assert.equal(
      await onB(`/api/v1/publish/${slug}/tokens`, { authorization: `Bearer ${token}` }),
      401,
      'token on B',
    );
    assert.equal(await onB('/dashboard', { cookie }), 401, 'session on B');

    assert.equal((await onA(op, 'DELETE', `/accounts/${id}/suspend`)).status, 200);
    assert.equal(await statusOnB(slug, 200), 200, 'site back on B');
    assert.equal(await onB('/api/v1/publishes', { authorization: `Bearer ${owner}` }), 200, 'key back on B');
    assert.equal(await onB('/dashboard', { cookie }), 200, 'session back on B');
    // The operator API answers 404 on B too for anyone else.
    assert.equal(await onB('/api/admin/blocks', { authorization: `Bearer ${owner}` }), 404);
    assert.equal(await onB('/api/admin/blocks', { authorization: `Bearer ${op}` }), 200);
  });

  test('a hash blocked on A is refused at finalize on B, on another account', async () => {
    const op = await signInOn(a, OPERATOR);
    const owner = await signInOn(a, 'cluster-kit@example.com');
    const other = await signInOn(b, 'cluster-other@example.com');
    const kit = `<form>kit ${Date.now()}</form>`;
    const slug = await publishOn(a, owner, { 'index.html': kit });
    const down = await onA(op, 'POST', `/sites/${slug}/takedown`, { reason: 'kit', blockContent: true });
    assert.equal(((await down.json()) as { blockedHashes: number }).blockedHashes, 1);

    const pending = await createVersion(b, other, { 'login.html': kit });
    for (const u of pending.uploads) await uploadFile(pending, u.path, kit);
    assert.equal(await finalizeOn(b, other, pending), 403, 'refused on B');
    const fine = await publishOn(b, other, { 'index.html': `${kit} but different` });
    assert.ok(fine, 'other content publishes on B');
    assert.notEqual(sha256(kit), sha256(`${kit} but different`));
  });
});
