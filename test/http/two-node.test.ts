// Two service processes on different ports sharing PostgreSQL, S3 (s3rver) and Redis: changes made on
// one node are served by the other at once, limits are shared, and only one node sweeps.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freePort, rawRequest, TEST_DATABASE_URL } from '../helpers/app.js';
import { manifestOf, reachable, sha256 } from '../helpers/publish.js';
import { redisTestPrefix, TEST_REDIS_URL } from '../helpers/redis.js';
import { type S3rverHandle, startS3rver } from '../helpers/s3.js';

interface Node {
  port: number;
  dataDir: string;
  child: ChildProcess;
  output: string[];
  url: string;
}

async function waitHealthy(url: string, node: Node): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`node on ${url} did not start:\n${node.output.join('')}`);
}

describe('two nodes sharing PostgreSQL, S3 and Redis', { timeout: 120_000 }, () => {
  let s3: S3rverHandle;
  let database: string;
  let env: Record<string, string>;
  const nodes: Node[] = [];

  async function startNode(extra: Record<string, string> = {}): Promise<Node> {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'slipway-node-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, ...env, ...extra, PORT: String(port), DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const node: Node = { port, dataDir, child, output: [], url: `http://127.0.0.1:${port}` };
    child.stdout?.on('data', (c) => node.output.push(String(c)));
    child.stderr?.on('data', (c) => node.output.push(String(c)));
    nodes.push(node);
    await waitHealthy(node.url, node);
    return node;
  }

  const stopNode = async (node: Node, signal: NodeJS.Signals = 'SIGTERM') => {
    if (node.child.exitCode !== null || node.child.signalCode !== null) return;
    const exited = new Promise((r) => node.child.once('exit', r));
    node.child.kill(signal);
    await exited;
  };

  const admin = () => new pg.Client({ connectionString: TEST_DATABASE_URL });

  before(async () => {
    s3 = await startS3rver();
    database = `slipway_two_node_${randomBytes(4).toString('hex')}`;
    const c = admin();
    await c.connect();
    await c.query(`create database ${database}`);
    await c.end();
    const dbUrl = new URL(TEST_DATABASE_URL);
    dbUrl.pathname = `/${database}`;
    env = {
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: redisTestPrefix(),
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
      SECRETS_KEY: randomBytes(32).toString('base64'),
      RATE_LIMIT_ANONYMOUS: '10',
      TRUST_PROXY: 'true',
      RATE_LIMIT_FREE: '100000',
      LOG_LEVEL: 'debug',
      SWEEP_INTERVAL_S: '1',
    };
  });

  after(async () => {
    await Promise.all(nodes.map((n) => stopNode(n, 'SIGKILL')));
    await Promise.all(nodes.map((n) => rm(n.dataDir, { recursive: true, force: true })));
    await s3?.close();
    const c = admin();
    await c.connect();
    await c.query(`drop database if exists ${database} with (force)`);
    await c.end();
  });

  test('publish on A is served by B at once; delete on A stops B; rate limit shared; one sweeper', async () => {
    // Start the two nodes together: migrations must not race.
    const [a, b] = await Promise.all([startNode(), startNode()]);

    // Sign in on A (the code arrives in A's dev outbox).
    const email = 'two-node@example.com';
    const post = (node: Node, path: string, body: unknown, key?: string) =>
      fetch(node.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify(body),
      });
    assert.equal((await post(a, '/api/auth/agent/request-code', { email })).status, 200);
    const outbox = await readFile(join(a.dataDir, 'outbox.log'), 'utf8');
    const code = /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(outbox)?.[1];
    const verified = await post(a, '/api/auth/agent/verify-code', { email, code });
    assert.equal(verified.status, 201);
    const { apiKey: key } = (await verified.json()) as { apiKey: string };

    const publishVersion = async (html: string, slug?: string): Promise<{ slug: string }> => {
      const files = { 'index.html': html };
      const res = await fetch(a.url + (slug ? `/api/v1/publish/${slug}` : '/api/v1/publish'), {
        method: slug ? 'PUT' : 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ files: manifestOf(files) }),
      });
      assert.ok(res.status === 200 || res.status === 201, await res.clone().text());
      const body = (await res.json()) as {
        slug: string;
        upload: { versionId: string; uploads: Array<{ url: string; headers: Record<string, string> }> };
      };
      for (const u of body.upload.uploads) {
        const put = await fetch(reachable(u.url).replace(`:${a.port}`, `:${a.port}`), {
          method: 'PUT',
          headers: u.headers,
          body: html,
        });
        assert.equal(put.status, 200);
      }
      const fin = await post(
        a,
        `/api/v1/publish/${body.slug}/finalize`,
        { versionId: body.upload.versionId },
        key,
      );
      assert.equal(fin.status, 200);
      return { slug: body.slug };
    };
    const fetchFromB = (slug: string) =>
      rawRequest(b.port, { host: `${slug}.localhost:${b.port}`, path: '/' });

    const { slug } = await publishVersion('<h1>version one</h1>');
    const first = await fetchFromB(slug);
    assert.equal(first.status, 200);
    assert.equal(first.body.toString(), '<h1>version one</h1>');

    // B has version one cached; an update finalized on A is what B serves on the very next request.
    await publishVersion('<h1>version two</h1>', slug);
    const second = await fetchFromB(slug);
    assert.equal(
      second.body.toString(),
      '<h1>version two</h1>',
      'B never serves the old version after finalize',
    );
    assert.equal(second.headers.etag, `"${sha256('<h1>version two</h1>')}"`);

    // Delete on A: B stops serving within a second.
    const del = await fetch(`${a.url}/api/v1/publish/${slug}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(del.status, 200);
    const deadline = Date.now() + 1000;
    let status = 200;
    while (Date.now() < deadline && status !== 404) status = (await fetchFromB(slug)).status;
    assert.equal(status, 404, 'B stops serving a deleted site within 1 s');

    // A shared anonymous limit of 10 across both nodes admits exactly 10 of 40 concurrent requests
    // (from one fresh client address, so the sign-in calls above do not count).
    const client = { 'x-forwarded-for': '198.51.100.7' };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        fetch(`${(i % 2 ? a : b).url}/api/openapi.json`, { headers: client }).then((r) => r.status),
      ),
    );
    assert.equal(answers.filter((s) => s === 200).length, 10);
    assert.equal(answers.filter((s) => s === 429).length, 30);

    // Only one node sweeps (SWEEP_INTERVAL_S=1): watch both logs for a few intervals.
    const sweepsOf = (n: Node) =>
      n.output.join('').split('sweeping (holder of the sweeper lease)').length - 1;
    const before = [sweepsOf(a), sweepsOf(b)];
    await new Promise((r) => setTimeout(r, 3500));
    const during = [sweepsOf(a) - before[0]!, sweepsOf(b) - before[1]!];
    assert.equal(during.filter((n) => n > 0).length, 1, `exactly one node swept: ${during}`);
    assert.ok(Math.max(...during) >= 2, `the holder swept on every interval: ${during}`);

    // The holder stops; the other node takes over (lease released on shutdown).
    const [holder, other] = during[0]! > 0 ? [a, b] : [b, a];
    await stopNode(holder);
    const otherBefore = sweepsOf(other);
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(sweepsOf(other) > otherBefore, 'the remaining node took over the sweeper');
  });
});
