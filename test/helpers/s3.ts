// A real S3-compatible server for tests: s3rver in a child process on loopback, one pre-created bucket.
//
// Why a child process and not s3rver in the test process:
// - s3rver 3.7 mints ListObjectsV2 continuation tokens with DES, which Node 20's OpenSSL 3 refuses
//   ("digital envelope routines::unsupported"), so every truncated (paginated) listing would fail. The
//   child runs with --openssl-legacy-provider, which re-enables DES for s3rver only.
// - The blob contract measures the test process's RSS during a 100 MB put; s3rver's own buffers would
//   otherwise count against the store under test.
// - s3rver's winston logger and koa app die with the child instead of lingering in the test process.

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3rverHandle {
  /** `http://127.0.0.1:<port>`; use with forcePathStyle: true. */
  endpoint: string;
  /** Pre-created, empty bucket. */
  bucket: string;
  accessKeyId: 'S3RVER';
  secretAccessKey: 'S3RVER';
  /** Directory s3rver stores objects in (removed by close()). */
  directory: string;
  /** Stops the server, waits for the child to exit and removes its directory. Idempotent. */
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 15_000;
const CLOSE_GRACE_MS = 5_000;

/** Runs in the child (an ES module given with -e); argv: [s3rver path, directory, bucket]. */
const CHILD_SOURCE = `
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const [s3rverPath, directory, bucket] = process.argv.slice(1);
const S3rver = require(s3rverPath);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  // The parent removes the whole directory after exit (resetOnClose would only empty it, synchronously).
  resetOnClose: false,
  // Path-style requests to 127.0.0.1 only; never guess a bucket from the Host header.
  vhostBuckets: false,
  configureBuckets: [{ name: bucket }],
});
let closing = false;
async function shutdown(code, removeDirectory) {
  if (closing) return;
  closing = true;
  const http = server.httpServer;
  if (http) {
    const closed = new Promise((resolve) => http.close(() => resolve()));
    // The SDK's keep-alive sockets would hold close() open; in-flight requests are abandoned on purpose.
    http.closeAllConnections();
    await closed;
  }
  if (removeDirectory) rmSync(directory, { recursive: true, force: true });
  process.exit(code);
}
// The parent removes the directory itself once this process has exited.
process.on('message', (msg) => {
  if (msg === 'close') void shutdown(0, false);
});
// Parent gone without close() (crashed or killed): do not linger, and leave no files behind.
process.on('disconnect', () => void shutdown(0, true));
// s3rver throws from stream callbacks when a client aborts a request mid-body (the blob store does so
// on purpose when a body is too long, and tests disconnect on purpose). A real S3 endpoint survives
// that; keep this stand-in alive too, and say what happened.
process.on('uncaughtException', (err) => process.stderr.write('s3rver: ' + String(err && err.stack || err) + '\\n'));
try {
  const { port } = await server.run();
  process.send({ port });
} catch (err) {
  process.stderr.write(String(err && err.stack || err) + '\\n');
  process.exit(1);
}
`;

let bucketCounter = 0;

/** Starts s3rver on 127.0.0.1 (a free port) over a fresh temp directory, with one empty bucket. */
/** `root`: where s3rver keeps its objects (default the OS temp directory). */
export async function startS3rver(options: { root?: string } = {}): Promise<S3rverHandle> {
  const directory = await mkdtemp(join(options.root ?? tmpdir(), 'slipway-s3rver-'));
  const bucket = `slipway-test-${process.pid}-${++bucketCounter}`;
  const s3rverPath = createRequire(import.meta.url).resolve('s3rver');
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // no tsx loader etc. in the child: it runs plain JavaScript
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--input-type=module', '-e', CHILD_SOURCE, s3rverPath, directory, bucket],
    { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000);
  });
  const exited = once(child, 'exit');
  exited.catch(() => {}); // a spawn 'error' is reported by waitForPort

  let port: number;
  try {
    port = await waitForPort(child, exited, () => stderr);
  } catch (err) {
    child.kill('SIGKILL');
    await exited.catch(() => {});
    await rm(directory, { recursive: true, force: true });
    throw err;
  }

  try {
    await keepTempFolder(`http://127.0.0.1:${port}`, bucket);
  } catch (err) {
    child.kill('SIGKILL');
    await exited.catch(() => {});
    await rm(directory, { recursive: true, force: true });
    throw err;
  }

  // A forgotten close() must not keep the test process alive: once it exits, the child sees the IPC
  // channel close and shuts down (removing its directory) by itself.
  setRefed(child, false);

  let closing: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    directory,
    close() {
      closing ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          setRefed(child, true); // keep the process alive until the child has exited
          if (child.connected) child.send('close');
          const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
          try {
            await exited;
          } finally {
            clearTimeout(timer);
          }
        }
        await rm(directory, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

/**
 * s3rver's DeleteObject removes a key's folder once it is empty, and a concurrent PutObject into that
 * folder then fails with ENOENT. The S3 blob store puts every upload to `tmp/<random>` and deletes it after
 * the copy, so parallel uploads can hit this race; one object kept under `tmp/` keeps the folder (the
 * bench's scale-out set starts s3rver here too). Real S3 has no folders and no such race.
 */
async function keepTempFolder(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  try {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'tmp/.keep', Body: '' }));
  } finally {
    client.destroy();
  }
}

function setRefed(child: ChildProcess, refed: boolean): void {
  const handles = [child, child.channel, child.stderr as Socket | null];
  for (const h of handles) {
    if (refed) h?.ref();
    else h?.unref();
  }
}

function waitForPort(child: ChildProcess, exited: Promise<unknown>, stderr: () => string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`s3rver did not start within ${START_TIMEOUT_MS} ms: ${stderr()}`)),
      START_TIMEOUT_MS,
    );
    child.once('message', (msg: unknown) => {
      clearTimeout(timer);
      const port = (msg as { port?: unknown } | null)?.port;
      if (typeof port === 'number') resolve(port);
      else reject(new Error(`s3rver sent an unexpected message: ${JSON.stringify(msg)}`));
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    exited.then(
      () => {
        clearTimeout(timer);
        reject(new Error(`s3rver exited during startup (code ${child.exitCode}): ${stderr()}`));
      },
      () => {}, // 'error' is handled above
    );
  });
}
