// The reference servers of the serving bench, each one process (worker) on loopback over the same files:
// nginx (worker_processes 1, sendfile, etag, config/pid/temp paths in a temp dir, run as a child with
// `daemon off`) and sirv under node:http.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { childPids, run } from './serve-tools.js';
import { freePort } from './service.js';

export interface Peer {
  name: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The process that serves (nginx: its first worker, not the master). */
  servingPid: number;
  /** Every process that serves (nginx: all its workers). */
  servingPids?: number[];
  stop(): Promise<void>;
}

/** A child that is SIGTERMed (then SIGKILLed) on stop, and whose early exit is reported with its output. */
function supervise(child: ChildProcess): { output(): string; exited: Promise<void>; stop(): Promise<void> } {
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out = (out + c.toString()).slice(-4000);
  });
  child.stderr?.on('data', (c: Buffer) => {
    out = (out + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((res) => {
    if (child.exitCode !== null || child.signalCode !== null) res();
    else child.once('exit', () => res());
  });
  return {
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Waits until `url` answers any HTTP status (the peers have no /healthz). */
async function waitAnswering(url: string, exited: Promise<void>, output: () => string): Promise<void> {
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (dead) throw new Error(`the server exited before it was ready:\n${output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not answer within 15 s:\n${output()}`);
}

/**
 * nginx with `workers` worker processes serving `root`; everything it writes stays under `workDir`. With
 * `notFoundPage`, its 404s send those bytes (`error_page`), so a 404 costs both servers the same body.
 */
export async function startNginx(
  root: string,
  workDir: string,
  workers = 1,
  notFoundPage?: Buffer,
): Promise<Peer> {
  await mkdir(join(workDir, 'tmp'), { recursive: true });
  const errors = join(workDir, 'errors');
  if (notFoundPage) {
    await mkdir(errors, { recursive: true });
    await writeFile(join(errors, '404.html'), notFoundPage);
  }
  const port = await freePort();
  const conf = join(workDir, 'nginx.conf');
  const tmp = join(workDir, 'tmp');
  await writeFile(
    conf,
    `worker_processes ${workers};
pid ${join(workDir, 'nginx.pid')};
error_log ${join(workDir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  etag on;
  # Node keeps a connection for any number of requests; nginx's default would reconnect every 1000.
  keepalive_requests 1000000;
  types { text/html html; application/octet-stream bin; }
  default_type application/octet-stream;
  client_body_temp_path ${tmp}/body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    index index.html;${
      notFoundPage
        ? `
    error_page 404 /__404.html;
    location = /__404.html { internal; root ${errors}; try_files /404.html =404; }`
        : ''
    }
  }
}
`,
  );
  const test = await run('nginx', ['-t', '-q', '-e', join(workDir, 'error.log'), '-p', workDir, '-c', conf]);
  if (test.code !== 0) throw new Error(`nginx -t failed:\n${test.out}`);
  const child = spawn(
    'nginx',
    ['-e', join(workDir, 'error.log'), '-p', workDir, '-c', conf, '-g', 'daemon off;'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const sup = supervise(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitAnswering(`${url}/`, sup.exited, sup.output);
  } catch (err) {
    await sup.stop();
    throw err;
  }
  const serving = childPids(child.pid ?? -1);
  if (serving.length !== workers) throw new Error(`nginx has ${serving.length} workers, expected ${workers}`);
  return { name: 'nginx', url, servingPid: serving[0]!, servingPids: serving, stop: sup.stop };
}

/** `sirv(root, { etag: true })` under node:http in its own Node process. */
export async function startSirv(root: string, sirvDir: string): Promise<Peer> {
  const port = await freePort();
  const entry = pathToFileURL(join(sirvDir, 'build.mjs')).href;
  const source = `
import { createServer } from 'node:http';
const { default: sirv } = await import(${JSON.stringify(entry)});
const handler = sirv(${JSON.stringify(root)}, { etag: true });
createServer((req, res) => handler(req, res, () => { res.statusCode = 404; res.end('not found'); }))
  .listen(${port}, '127.0.0.1');
`;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const sup = supervise(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitAnswering(`${url}/`, sup.exited, sup.output);
  } catch (err) {
    await sup.stop();
    throw err;
  }
  return { name: 'sirv', url, servingPid: child.pid ?? -1, stop: sup.stop };
}

/**
 * The reference for one Node process on node:http: answering from Buffers with precomputed header objects
 * (no routing beyond a Map, no file system). Not a DESIGN target; it shows what node:http itself costs
 * (the service's site fast path, src/serve/http1/, does without its request and response objects).
 */
export async function startBareNode(root: string): Promise<Peer> {
  const port = await freePort();
  const source = `
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
const root = ${JSON.stringify(root)};
const files = new Map();
for (const name of readdirSync(root)) {
  const body = readFileSync(root + '/' + name);
  const etag = '"' + createHash('sha256').update(body).digest('hex') + '"';
  const type = name.endsWith('.html') ? 'text/html; charset=utf-8' : 'application/octet-stream';
  const common = { 'Content-Type': type, ETag: etag, 'Cache-Control': 'public, max-age=0, must-revalidate' };
  const entry = { body, etag, ok: { ...common, 'Content-Length': String(body.length) }, notModified: common };
  files.set('/' + name, entry);
  if (name === 'index.html') files.set('/', entry);
}
const notFound = { 'Content-Type': 'text/plain', 'Content-Length': '9' };
createServer((req, res) => {
  const q = req.url.indexOf('?');
  const f = files.get(q < 0 ? req.url : req.url.slice(0, q));
  if (f === undefined) { res.writeHead(404, notFound); res.end('not found'); return; }
  if (req.headers['if-none-match'] === f.etag) { res.writeHead(304, f.notModified); res.end(); return; }
  res.writeHead(200, f.ok);
  res.end(f.body);
}).listen(${port}, '127.0.0.1');
`;
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  const sup = supervise(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitAnswering(`${url}/`, sup.exited, sup.output);
  } catch (err) {
    await sup.stop();
    throw err;
  }
  return { name: 'node:http', url, servingPid: child.pid ?? -1, stop: sup.stop };
}
