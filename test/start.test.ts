// `npm start` from the checkout: builds dist/ when needed, serves, and sign-in works with the dev
// mailer by reading the code from DATA_DIR/outbox.log.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort } from './helpers/app.js';

async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** `npm start` in its own process group (npm -> sh -> node) on a free port and a fresh DATA_DIR, once /healthz answers. */
async function startNpm() {
  const dataDir = await mkdtemp(join(tmpdir(), 'slipway-start-'));
  const port = await freePort();
  const child = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  await waitFor(`http://localhost:${port}/healthz`, 90_000).catch((err) => {
    process.kill(-child.pid!, 'SIGKILL');
    throw new Error(`${err.message}\n${output}`);
  });
  return { child, port, dataDir, output: () => output };
}

test('npm start serves /healthz and sign-in works through DATA_DIR/outbox.log', async () => {
  const { child, port, dataDir, output } = await startNpm();
  try {
    const base = `http://localhost:${port}`;
    const email = 'starter@example.com';
    const req = await fetch(`${base}/api/auth/agent/request-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    assert.equal(req.status, 200);
    const outbox = await readFile(join(dataDir, 'outbox.log'), 'utf8');
    const code = /([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(outbox)?.[1];
    assert.ok(code, 'the outbox holds the code');
    assert.ok(output().includes(code), 'the dev mailer printed the mail on stdout');
    const res = await fetch(`${base}/api/auth/agent/verify-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, code }),
    });
    assert.equal(res.status, 201);
    const { apiKey } = (await res.json()) as { apiKey: string };
    const account = await fetch(`${base}/api/v1/account`, { headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal(account.status, 200);
    const { stat } = await import('node:fs/promises');
    assert.equal((await stat(join(dataDir, 'secrets.key'))).mode & 0o777, 0o600);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    // npm exits before its node child; the service must follow within its 10 s drain, not linger.
    const deadline = Date.now() + 12_000;
    while (Date.now() < deadline && groupAlive(child.pid!)) await new Promise((r) => setTimeout(r, 100));
    const lingering = groupAlive(child.pid!);
    if (lingering) process.kill(-child.pid!, 'SIGKILL');
    assert.equal(lingering, false, 'the service process outlived SIGTERM by more than 12 s');
    child.stdout.destroy();
    child.stderr.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a SIGTERM to npm alone (not its process group) stops the service too, freeing the port', async () => {
  const { child, port, dataDir } = await startNpm();
  try {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM'); // npm only, as `kill <pid of npm>` or a process manager does
    await exited;
    const deadline = Date.now() + 12_000;
    while (Date.now() < deadline && groupAlive(child.pid!)) await new Promise((r) => setTimeout(r, 100));
    const lingering = groupAlive(child.pid!);
    if (lingering) process.kill(-child.pid!, 'SIGKILL');
    assert.equal(lingering, false, 'the service outlived npm by more than 12 s, holding its port');
    await assert.rejects(fetch(`http://localhost:${port}/healthz`), 'the port is free');
  } finally {
    child.stdout.destroy();
    child.stderr.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

/** Whether any process of the group is still alive (signal 0 probes without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
