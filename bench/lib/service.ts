// Bench and crash-test helper: runs the service as a real child process on a given DATA_DIR and port,
// waits for /healthz, signs in through the dev mailer's outbox, and stops the child (TERM or KILL).

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (bench/lib/ is two levels below it). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `tsx`: run src/server.ts through the tsx loader; `dist`: run the compiled dist/server.js. */
export type RunMode = 'tsx' | 'dist';

export interface ServiceOptions {
  dataDir: string;
  port: number;
  mode?: RunMode;
  /** Extra environment (over the defaults below, which keep rate limits out of the way). */
  env?: Record<string, string>;
  /** Extra node flags before the entry point (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** How long to wait for /healthz (ms, default 60 000). */
  readyTimeoutMs?: number;
}

export interface Service {
  child: ChildProcess;
  /** The server's own pid (the child is node itself, no wrapper process). */
  pid: number;
  port: number;
  /** `http://127.0.0.1:<port>`: an IP host reaches the API. */
  url: string;
  dataDir: string;
  /** stdout + stderr so far (for failure messages). */
  output(): string;
  /** Resolves when the child has exited (immediately if it already has). */
  exited: Promise<void>;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (clean shutdown), SIGKILL after `graceMs`, and wait for the exit. */
  stop(graceMs?: number): Promise<void>;
}

const QUIET_ENV = {
  LOG_LEVEL: 'warn',
  // One process, as "one worker each" means; the WORKERS rows (serve-workers.ts) set it themselves.
  WORKERS: '1',
  RATE_LIMIT_ANONYMOUS: '1000000',
  RATE_LIMIT_FREE: '1000000',
  RATE_LIMIT_HOBBY: '1000000',
};

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => res(port));
    });
  });
}

function newestMtimeMs(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestMtimeMs(p) : s.mtimeMs);
  }
  return newest;
}

/** `dist` when dist/server.js exists and is newer than every file under src/, else `tsx`. */
export function preferredMode(): RunMode {
  const entry = join(REPO_ROOT, 'dist', 'server.js');
  if (!existsSync(entry)) return 'tsx';
  return newestMtimeMs(join(REPO_ROOT, 'src')) <= statSync(entry).mtimeMs ? 'dist' : 'tsx';
}

export async function startService(opts: ServiceOptions): Promise<Service> {
  const mode = opts.mode ?? 'tsx';
  const entry = mode === 'dist' ? ['dist/server.js'] : ['--import', 'tsx', 'src/server.ts'];
  const args = [...(opts.nodeArgs ?? []), ...entry];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...QUIET_ENV, ...opts.env, DATA_DIR: opts.dataDir, PORT: String(opts.port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<void>((res) => {
    if (child.exitCode !== null || child.signalCode !== null) res();
    else child.once('exit', () => res());
  });
  const url = `http://127.0.0.1:${opts.port}`;
  const service: Service = {
    child,
    pid: child.pid ?? -1,
    port: opts.port,
    url,
    dataDir: opts.dataDir,
    output: () => out,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
    },
  };
  try {
    await waitHealthy(url, opts.readyTimeoutMs ?? 60_000, exited);
  } catch (err) {
    await service.kill();
    throw new Error(`${(err as Error).message}\n--- service output ---\n${out}`);
  }
  return service;
}

/** Polls `<url>/healthz` until it answers 200; fails early if the process exits. */
export async function waitHealthy(url: string, timeoutMs: number, exited?: Promise<void>): Promise<void> {
  let dead = false;
  void exited?.then(() => {
    dead = true;
  });
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (dead) throw new Error('the service exited before it was ready');
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}/healthz did not answer 200 within ${timeoutMs} ms`);
}

/** Signs in with the email-code flow (the dev mailer appends the code to DATA_DIR/outbox.log); returns the API key. */
export async function signIn(url: string, dataDir: string, email: string): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  await post('/api/auth/agent/request-code', { email });
  const lines = (await readFile(join(dataDir, 'outbox.log'), 'utf8')).trim().split('\n');
  let code: string | undefined;
  for (const line of lines.reverse()) {
    const mail = JSON.parse(line) as { to?: string; subject?: string };
    if (mail.to !== email) continue;
    code = /\b([A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4})\b/.exec(mail.subject ?? '')?.[1];
    if (code) break;
  }
  if (!code) throw new Error(`no sign-in code for ${email} in outbox.log`);
  const { apiKey } = await post('/api/auth/agent/verify-code', { email, code });
  if (typeof apiKey !== 'string') throw new Error('verify-code answered without apiKey');
  return apiKey;
}
