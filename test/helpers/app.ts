// Test harness: the real app on a real port with a fresh DATA_DIR, a movable clock and captured logs.

import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type PeerCertificate, type TLSSocket, connect as tlsConnect } from 'node:tls';
import pg from 'pg';
import type { App } from '../../src/app.js';
import { type ComposeOptions, composeService, type Service, type Stores } from '../../src/compose.js';
import { loadConfig } from '../../src/config.js';
import { type SweepReport, sweepOnce } from '../../src/core/sweeper.js';
import { MovableClock } from '../../src/shared/clock.js';
import { Db } from '../../src/store/db/db.js';
import { cleanupRedisPrefix, connectTestRedis, redisTestPrefix, TEST_REDIS_URL } from './redis.js';
import { startS3rver } from './s3.js';
import { issueCertificate, makeCa, type TestCa, type TestCertificate } from './tls.js';

/**
 * The transport the serving tests speak to site hosts (SLIPWAY_TEST_TRANSPORT): `plain` HTTP on PORT,
 * or `tls`: every app also listens on TLS_PORT with a certificate for `localhost` and `*.localhost`, and
 * rawRequest / connectTo (so siteRequest and the fast path's raw-socket tests) go over TLS, with SNI.
 * scripts/test.mjs runs test/serve once more this way.
 */
export const TEST_TRANSPORT = process.env.SLIPWAY_TEST_TRANSPORT === 'tls' ? 'tls' : 'plain';
/** Plain port -> TLS port of apps started with the tls transport. */
const transportTlsPorts = new Map<number, number>();
/** TLS connections the transport opened (a run over tls that opened none did not test TLS). */
export let transportConnections = 0;
let transportCert: { ca: TestCa; cert: TestCertificate } | undefined;
function transportCertificate(): { ca: TestCa; cert: TestCertificate } {
  if (transportCert === undefined) {
    const ca = makeCa('Transport test CA');
    transportCert = { ca, cert: issueCertificate(ca, ['localhost', '*.localhost']) };
  }
  return transportCert;
}

/**
 * The SNI the transport sends for a Host: the name itself (lowercase, no trailing dot, as browsers send
 * it) when the transport's certificate covers it, else `localhost` (a connection to a known name that
 * then sends another Host: the routing tests still test routing, not the handshake).
 */
const sniOf = (host: string): string => {
  const name = host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
  return /^(?:[a-z0-9-]+\.)?localhost$/.test(name) ? name : 'localhost';
};

/** Certificate names as the test client checks them: `*.localhost` covers one label (Node refuses single-label parents). */
function checkIdentity(host: string, cert: PeerCertificate): Error | undefined {
  const names = (cert.subjectaltname ?? '').split(', ').map((n) => n.replace(/^DNS:/, ''));
  const dot = host.indexOf('.');
  if (names.includes(host) || (dot > 0 && names.includes(`*${host.slice(dot)}`))) return undefined;
  return new Error(`${host} is not among the certificate's names ${names.join(', ')}`);
}

/**
 * A connected socket to the app on `port` over the test transport (plain TCP, or TLS to its TLS port
 * naming `servername`). Raw-socket tests write request bytes to it as they would to a TCP socket.
 */
export function connectTo(port: number, servername = 'localhost'): Promise<Socket> {
  const tlsPort = transportTlsPorts.get(port);
  return new Promise((resolve, reject) => {
    if (tlsPort === undefined) {
      const socket = netConnect(port, '127.0.0.1');
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
      return;
    }
    const socket = tlsConnect({
      host: '127.0.0.1',
      port: tlsPort,
      servername,
      ca: transportCertificate().ca.certPem,
      checkServerIdentity: checkIdentity,
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => {
      transportConnections++;
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

export interface TestApp {
  app: App;
  /** The stores the app runs on (its database, blobs, clock, config ...). */
  ctx: Stores;
  /** The whole built service (its core services too). */
  service: Service;
  clock: MovableClock;
  port: number;
  /** The TLS listener's port (TLS_PORT), 0 without one. */
  tlsPort: number;
  /** `http://127.0.0.1:<port>` (an IP host reaches the API). */
  url: string;
  dataDir: string;
  /** Every structured log line written so far (raw JSON text). */
  logs: string[];
  /** Lines the dev mailer printed. */
  devMail: string[];
  /** fetch against the API; `path` starts with `/`. */
  api(path: string, init?: ApiInit): Promise<ApiResponse>;
  close(): Promise<void>;
  /**
   * Stops this app (as a shutdown would) and starts a new one on the same database, blobs, DATA_DIR and
   * port; this TestApp is spent, the new one is closed instead.
   */
  restart(): Promise<TestApp>;
}

export interface ApiInit {
  method?: string;
  /** Sent as JSON unless it is a string or Buffer. */
  body?: unknown;
  key?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field.
  body: any;
  text: string;
}

/**
 * The first port of the kernel's ephemeral range: every outgoing connection (to PostgreSQL, Redis, S3, a
 * test peer) takes its local port from there, so a port probed free there can be taken by one before the
 * app listens on it (EADDRINUSE, seen in CI). Ports handed out below it are never taken that way.
 */
const EPHEMERAL_LOW = (() => {
  try {
    const low = Number.parseInt(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'), 10);
    return Number.isInteger(low) ? low : 0;
  } catch {
    return 0;
  }
})();
const PICK_LOW = 10_000;
const handedOut = new Set<number>();

function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const address = srv.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(bound || undefined));
    });
  });
}

/**
 * A port free now for a server the test starts next. Picked at random below the ephemeral range (so no
 * outgoing connection can take it meanwhile, and test files running in parallel rarely pick the same),
 * never the same twice in one process; the kernel's choice when there is no room below the range.
 */
export async function freePort(): Promise<number> {
  if (EPHEMERAL_LOW - PICK_LOW >= 1000) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = PICK_LOW + Math.floor(Math.random() * (EPHEMERAL_LOW - PICK_LOW));
      if (handedOut.has(port)) continue;
      if ((await probe(port)) === port) {
        handedOut.add(port);
        return port;
      }
    }
  }
  const port = await probe(0);
  if (port === undefined) throw new Error('freePort: no port to listen on');
  return port;
}

/** Environment that keeps tests from tripping the default limits unless they mean to. */
export const GENEROUS_LIMITS = {
  RATE_LIMIT_ANONYMOUS: '100000',
  RATE_LIMIT_FREE: '100000',
  RATE_LIMIT_HOBBY: '100000',
  RATE_LIMIT_SIGNIN_EMAIL: '100000',
  RATE_LIMIT_SIGNIN_IP: '100000',
  RATE_LIMIT_SIGNIN_CHECKS: '100000',
};

/**
 * Which backend set the suite runs on: `embedded` (SQLite, disk, in-process) or `scaleout`
 * (PostgreSQL, S3 via s3rver, Redis), from SLIPWAY_TEST_BACKEND. scripts/test.mjs runs both.
 */
export const TEST_BACKEND = process.env.SLIPWAY_TEST_BACKEND === 'scaleout' ? 'scaleout' : 'embedded';
export const TEST_DATABASE_URL =
  process.env.SLIPWAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** One statement on the test server's admin database (CREATE/DROP DATABASE cannot run in a pool transaction). */
export async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

interface Backend {
  env: Record<string, string>;
  db?: Db;
  dispose(): Promise<void>;
}

async function backendFor(): Promise<Backend> {
  if (TEST_BACKEND === 'embedded') return { env: {}, dispose: async () => {} };
  // A fresh PostgreSQL database per app: runs never see each other's rows or catalogs (Kysely's
  // migrator introspects every schema of its database, so sibling schemas are not isolated enough).
  const database = `slipway_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database ${database}`);
  const dbUrl = new URL(TEST_DATABASE_URL);
  dbUrl.pathname = `/${database}`;
  const db = Db.postgres(dbUrl.toString());
  // A key prefix per app on the shared Redis, and an S3 protocol server of its own.
  const redisPrefix = redisTestPrefix();
  const s3 = await startS3rver();
  return {
    env: {
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      S3_BUCKET: s3.bucket,
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
    db,
    async dispose() {
      await s3.close();
      // The app closed its pool; drop whatever is left (FORCE ends stray connections).
      await adminQuery(`drop database if exists ${database} with (force)`);
      const redis = await connectTestRedis();
      try {
        await cleanupRedisPrefix(redis, redisPrefix);
      } finally {
        redis.disconnect();
      }
    },
  };
}

export interface TestAppOptions {
  /** CA the site proxy trusts (the test HTTPS upstream's certificate). */
  proxyCa?: string;
  /** How slowly request bodies may arrive (default BODY_PACE; socket timers ignore the movable clock). */
  bodyPace?: ComposeOptions['bodyPace'];
  /** Uploads one client may have under way at once (default UPLOADS_PER_CLIENT). */
  uploadsPerClient?: number;
  /** Which ACME challenge is answered first (default HTTP-01). */
  acmeChallengePriority?: ComposeOptions['acmeChallengePriority'];
  /** How often certificate files are polled (default 2 s). */
  tlsWatchIntervalMs?: number;
  /** How long a handshake waits for a certificate being ordered. */
  tlsHandshakeWaitMs?: number;
  /** Webhook deliveries: the test receiver's CA, addresses let through the filter, sender timings. */
  webhooks?: ComposeOptions['webhooks'];
  /** restart(): the stopped app's DATA_DIR, port and backing stores. */
  reuse?: { dataDir: string; port: number; backend: Backend; clock: MovableClock };
}

export async function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const dataDir = options.reuse?.dataDir ?? (await mkdtemp(join(tmpdir(), 'slipway-test-')));
  const port = options.reuse?.port ?? (await freePort());
  const backend = options.reuse?.backend ?? (await backendFor());
  if (TEST_TRANSPORT === 'tls' && env.TLS_PORT === undefined) {
    const { cert } = transportCertificate();
    writeFileSync(join(dataDir, 'transport-cert.pem'), cert.chainPem);
    writeFileSync(join(dataDir, 'transport-key.pem'), cert.keyPem, { mode: 0o600 });
    env = {
      ...env,
      TLS_PORT: String(await freePort()),
      TLS_CERT_FILE: join(dataDir, 'transport-cert.pem'),
      TLS_KEY_FILE: join(dataDir, 'transport-key.pem'),
    };
  }
  const config = loadConfig({
    LOG_LEVEL: 'info',
    ...GENEROUS_LIMITS,
    ...backend.env,
    ...env,
    DATA_DIR: dataDir,
    PORT: String(port),
  });
  const clock = options.reuse?.clock ?? new MovableClock();
  const logs: string[] = [];
  const devMail: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  let service: Service;
  try {
    service = await composeService(config, {
      clock,
      logStream,
      devMailWrite: (line) => devMail.push(line),
      ...(backend.db ? { db: backend.db } : {}),
      ...(options.proxyCa ? { proxyCa: options.proxyCa } : {}),
      ...(options.bodyPace ? { bodyPace: options.bodyPace } : {}),
      ...(options.uploadsPerClient ? { uploadsPerClient: options.uploadsPerClient } : {}),
      ...(options.acmeChallengePriority ? { acmeChallengePriority: options.acmeChallengePriority } : {}),
      ...(options.tlsWatchIntervalMs ? { tlsWatchIntervalMs: options.tlsWatchIntervalMs } : {}),
      ...(options.tlsHandshakeWaitMs ? { tlsHandshakeWaitMs: options.tlsHandshakeWaitMs } : {}),
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    });
    await service.app.listen({ port, host: '127.0.0.1' });
    if (service.tls !== undefined) {
      await service.tls.listen(config.tls?.port ?? 0, '127.0.0.1');
      if (TEST_TRANSPORT === 'tls' && config.tls?.files?.cert.endsWith('transport-cert.pem')) {
        transportTlsPorts.set(port, service.tls.port());
      }
    }
  } catch (err) {
    // Do not leak a schema, Redis keys or an s3rver child when start-up fails.
    await backend.dispose().catch(() => {});
    throw err;
  }
  const url = `http://127.0.0.1:${port}`;
  const { app, stores: ctx } = service;

  return {
    app,
    ctx,
    service,
    clock,
    port,
    tlsPort: service.tls?.port() ?? 0,
    url,
    dataDir,
    logs,
    devMail,
    async api(path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      let body: string | Buffer | undefined;
      if (init.body !== undefined) {
        if (typeof init.body === 'string' || Buffer.isBuffer(init.body)) body = init.body;
        else {
          body = JSON.stringify(init.body);
          headers['content-type'] ??= 'application/json';
        }
      }
      if (init.key) headers.authorization = `Bearer ${init.key}`;
      const res = await fetch(url + path, { method: init.method ?? 'GET', headers, body });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      // Server errors are never silent: a test that provoked a 500 it did not expect leaves the cause here.
      for (const line of logs)
        if (line.includes('"level":50')) process.stderr.write(`[server error log] ${line}\n`);
      transportTlsPorts.delete(port);
      await service.close();
      await backend.dispose();
      // An upload a killed client left (a CLI stopped with Ctrl-C) may still be writing and then removing
      // its temp file: the removal retries ENOTEMPTY instead of failing the suite's teardown (seen in CI).
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
    async restart() {
      transportTlsPorts.delete(port);
      await service.close();
      // The stopped app closed its database handle: the new one opens its own on the same database.
      const url = backend.env.DATABASE_URL;
      const db = url === undefined ? {} : { db: Db.postgres(url) };
      return startTestApp(env, {
        ...options,
        reuse: { dataDir, port, backend: { ...backend, ...db }, clock },
      });
    },
  };
}

/** A raw HTTP request with an arbitrary Host header (site hosts), returning status, headers and bytes. */
export function rawRequest(
  port: number,
  options: {
    host: string;
    path: string;
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer | string;
  },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const tlsPort = transportTlsPorts.get(port);
  const servername = sniOf(options.host);
  return new Promise((resolve, reject) => {
    const common = {
      host: '127.0.0.1',
      path: options.path,
      method: options.method ?? 'GET',
      headers: { host: options.host, ...options.headers },
    };
    if (tlsPort !== undefined) transportConnections++;
    const req = (tlsPort === undefined ? httpRequest : httpsRequest)(
      tlsPort === undefined
        ? { ...common, port }
        : {
            ...common,
            port: tlsPort,
            agent: false,
            servername,
            ca: transportCertificate().ca.certPem,
            checkServerIdentity: checkIdentity,
          },
      (res) => {
        if (tlsPort !== undefined && (res.socket as TLSSocket).encrypted !== true) {
          reject(new Error('the tls transport answered over a plain socket'));
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Rate limits count in fixed windows (core/rate-limit.ts), so attempts made just before a window ends and
 * checked just after it start again from zero. A test that spends attempts and later expects the limit moves
 * the clock (forward only, to the next window's start) when less than `marginMs` of this window is left.
 */
export function clearOfWindowEdge(clock: MovableClock, windowMs: number, marginMs: number): void {
  const end = (Math.floor(clock.now() / windowMs) + 1) * windowMs;
  if (end - clock.now() < marginMs) clock.set(end + 1000);
}

/** One sweep of the app's sweeper now (expiry, stale versions, GC), on the app's own clock. */
export function sweepNow(t: TestApp): Promise<SweepReport> {
  return sweepOnce(t.service.services.sweep);
}

/** Signs in through the dev mailer and returns the API key. */
export async function signIn(t: TestApp, email: string): Promise<string> {
  const req = await t.api('/api/auth/agent/request-code', { method: 'POST', body: { email } });
  if (req.status !== 200) throw new Error(`request-code failed: ${req.text}`);
  const code = lastCodeFor(t, email);
  const res = await t.api('/api/auth/agent/verify-code', { method: 'POST', body: { email, code } });
  if (res.status !== 200 && res.status !== 201) throw new Error(`verify-code failed: ${res.text}`);
  return res.body.apiKey as string;
}

/** The code of the last dev-mailer message to `email`. */
export function lastCodeFor(t: TestApp, email: string): string {
  for (let i = t.devMail.length - 1; i >= 0; i--) {
    const mail = JSON.parse(t.devMail[i]!) as { to: string; subject: string };
    if (mail.to === email) {
      const match = /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(mail.subject);
      if (match) return match[1]!;
    }
  }
  throw new Error(`no mail to ${email}`);
}
