// Service processes (src/server.ts, as `npm start` runs it) on the scale-out set: a fresh PostgreSQL
// database, an s3rver of their own and a Redis key prefix, shared by every node started from one cluster.
// With `relays`, nodes reach each backing service through a TCP relay (helpers/relay.ts) a test can cut.

import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminQuery, freePort, TEST_DATABASE_URL } from './app.js';
import { type Files, manifestOf, reachable } from './publish.js';
import { redisTestPrefix, TEST_REDIS_URL } from './redis.js';
import { type Relay, startRelay } from './relay.js';
import { startS3rver } from './s3.js';

export interface ServiceNode {
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote on stdout and stderr, in chunks. */
  output: string[];
  /** `http://127.0.0.1:<port>` (the API host). */
  url: string;
}

export interface Cluster {
  env: Record<string, string>;
  nodes: ServiceNode[];
  /** The relays in front of PostgreSQL, Redis and S3 (only with `relays: true`). */
  relays: { postgres: Relay; redis: Relay; s3: Relay } | undefined;
  startNode(extra?: Record<string, string>): Promise<ServiceNode>;
  stopNode(node: ServiceNode, signal?: NodeJS.Signals): Promise<void>;
  dispose(): Promise<void>;
}

async function waitHealthy(node: ServiceNode): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (node.child.exitCode !== null) break;
    try {
      if ((await fetch(`${node.url}/healthz`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`node on ${node.url} did not start:\n${node.output.join('')}`);
}

/**
 * Starts `src/server.ts` (as `npm start` runs it) on a free port with a DATA_DIR of its own and `env` on top
 * of this process's; waits until it answers /healthz. `started` sees the node before that wait, so a node
 * that fails to start is still disposed of.
 */
export async function spawnNode(
  env: Record<string, string>,
  started: (node: ServiceNode) => void = () => {},
): Promise<ServiceNode> {
  const port = await freePort();
  const dataDir = await mkdtemp(join(tmpdir(), 'slipway-node-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    // One process per node unless a test asks for WORKERS (test/http/workers.test.ts).
    env: { ...process.env, WORKERS: '1', ...env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const node: ServiceNode = { port, dataDir, child, output: [], url: `http://127.0.0.1:${port}` };
  child.stdout?.on('data', (c) => node.output.push(String(c)));
  child.stderr?.on('data', (c) => node.output.push(String(c)));
  started(node);
  await waitHealthy(node);
  return node;
}

export async function startCluster(
  options: { relays?: boolean; env?: Record<string, string> } = {},
): Promise<Cluster> {
  const s3 = await startS3rver();
  const database = `slipway_cluster_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create database ${database}`);
  const relays = options.relays
    ? {
        postgres: await startRelay(Number(new URL(TEST_DATABASE_URL).port || 5432)),
        redis: await startRelay(Number(new URL(TEST_REDIS_URL).port || 6379)),
        s3: await startRelay(Number(new URL(s3.endpoint).port)),
      }
    : undefined;
  const dbUrl = new URL(TEST_DATABASE_URL);
  dbUrl.pathname = `/${database}`;
  const redisUrl = new URL(TEST_REDIS_URL);
  const s3Url = new URL(s3.endpoint);
  if (relays) {
    dbUrl.host = `127.0.0.1:${relays.postgres.port}`;
    redisUrl.host = `127.0.0.1:${relays.redis.port}`;
    s3Url.host = `127.0.0.1:${relays.s3.port}`;
  }
  const env: Record<string, string> = {
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: redisUrl.toString(),
    REDIS_PREFIX: redisTestPrefix(),
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3Url.toString().replace(/\/$/, ''),
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    ...options.env,
  };
  const nodes: ServiceNode[] = [];

  const stopNode = async (node: ServiceNode, signal: NodeJS.Signals = 'SIGTERM') => {
    if (node.child.exitCode !== null || node.child.signalCode !== null) return;
    const exited = new Promise((r) => node.child.once('exit', r));
    node.child.kill(signal);
    await exited;
  };

  return {
    env,
    nodes,
    relays,
    async startNode(extra = {}) {
      const node = await spawnNode({ ...env, ...extra }, (started) => nodes.push(started));
      return node;
    },
    stopNode,
    async dispose() {
      await Promise.all(nodes.map((n) => stopNode(n, 'SIGKILL')));
      await Promise.all(nodes.map((n) => rm(n.dataDir, { recursive: true, force: true })));
      if (relays) await Promise.all(Object.values(relays).map((r) => r.close()));
      await s3.close();
      await adminQuery(`drop database if exists ${database} with (force)`);
    },
  };
}

/** POST a JSON body to a node's API. */
export function postJson(node: ServiceNode, path: string, body: unknown, key?: string): Promise<Response> {
  return fetch(node.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
}

/** Signs in through `node`'s dev outbox; returns the API key. */
export async function signInOn(node: ServiceNode, email: string): Promise<string> {
  const requested = await postJson(node, '/api/auth/agent/request-code', { email });
  if (requested.status !== 200)
    throw new Error(`request-code: ${requested.status} ${await requested.text()}`);
  const outbox = await readFile(join(node.dataDir, 'outbox.log'), 'utf8');
  const codes = [...outbox.matchAll(/([A-Z0-9]{4}-[A-Z0-9]{4})/g)];
  const code = codes.at(-1)?.[1];
  const verified = await postJson(node, '/api/auth/agent/verify-code', { email, code });
  if (verified.status !== 200 && verified.status !== 201)
    throw new Error(`verify-code: ${verified.status} ${await verified.text()}`);
  return ((await verified.json()) as { apiKey: string }).apiKey;
}

export interface PendingPublish {
  slug: string;
  versionId: string;
  uploads: Array<{ path: string; url: string; headers: Record<string, string> }>;
}

/** Create (POST) or update (PUT `slug`) on `node`; returns the pending version and its upload addresses. */
export async function createVersion(
  node: ServiceNode,
  key: string,
  files: Files,
  slug?: string,
): Promise<PendingPublish> {
  const res = await fetch(node.url + (slug ? `/api/v1/publish/${slug}` : '/api/v1/publish'), {
    method: slug ? 'PUT' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ files: manifestOf(files) }),
  });
  if (res.status !== 200 && res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as {
    slug: string;
    upload: { versionId: string; uploads: PendingPublish['uploads'] };
  };
  return { slug: body.slug, versionId: body.upload.versionId, uploads: body.upload.uploads };
}

/** PUTs one file's bytes to its upload address; returns the status. */
export async function uploadFile(
  pending: PendingPublish,
  path: string,
  bytes: string | Buffer,
): Promise<number> {
  const entry = pending.uploads.find((u) => u.path === path);
  if (!entry) throw new Error(`no upload address for ${path}`);
  const res = await fetch(reachable(entry.url), { method: 'PUT', headers: entry.headers, body: bytes });
  await res.arrayBuffer();
  return res.status;
}

export async function finalizeOn(node: ServiceNode, key: string, pending: PendingPublish): Promise<number> {
  const res = await postJson(
    node,
    `/api/v1/publish/${pending.slug}/finalize`,
    { versionId: pending.versionId },
    key,
  );
  await res.arrayBuffer();
  return res.status;
}

/** Create, upload every file, finalize; throws unless every step succeeds. Returns the slug. */
export async function publishOn(
  node: ServiceNode,
  key: string,
  files: Files,
  slug?: string,
): Promise<string> {
  const pending = await createVersion(node, key, files, slug);
  for (const u of pending.uploads) {
    const spec = files[u.path]!;
    const status = await uploadFile(
      pending,
      u.path,
      typeof spec === 'object' && 'body' in spec ? spec.body : spec,
    );
    if (status !== 200) throw new Error(`upload ${u.path}: ${status}`);
  }
  const status = await finalizeOn(node, key, pending);
  if (status !== 200) throw new Error(`finalize: ${status}`);
  return pending.slug;
}
