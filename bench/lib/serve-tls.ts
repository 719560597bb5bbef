// `npm run bench -- --tls`: HTTPS side by side in one run (issue 22), one worker each, the same ECDSA P-256
// certificate, TLS 1.2/1.3 with session caches: the service terminating TLS itself (TLS_PORT) vs nginx
// over TLS (worker_processes 1, ssl_session_cache) vs Caddy -> the service (Caddy terminating TLS and
// proxying to the plain port), plus a bare node:https server answering the page from memory. Scenarios:
// the 11 KB page and the 200 KB file over keep-alive connections, and new TLS connections per second
// (`Connection: close`: one full handshake per request). Medians of interleaved rounds; ratios vs nginx
// by req/s and per server CPU-second. Writes bench/out/serve-tls.json.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from './client.js';
import { envInt, int, interleavedRounds, median } from './report.js';
import { LoadGenerator } from './serve-load.js';
import { BIG_BYTES, hotSiteFiles, PAGE_BYTES, publishSite } from './serve-sites.js';
import { childPids, ensureAptCommands, log, pinToCpu } from './serve-tools.js';
import { freePort, preferredMode, REPO_ROOT, type RunMode, signIn, startService } from './service.js';

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION_S = envInt('BENCH_DURATION_S', 2);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);
const PIN = cpus().length >= 2 && process.env.BENCH_PIN !== '0';
const CLIENT_CPU = 0;
const SERVER_CPU = 1;

/** The acceptance targets (ratios of req/s vs nginx over TLS). */
const TARGETS: Record<ScenarioName, number> = { page: 0.9, big: 0.8, handshake: 0.5 };

/** Mozilla "intermediate" TLS 1.2 suites, as the service's profile (src/serve/tls/certificates.ts). */
const INTERMEDIATE_CIPHERS =
  'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:' +
  'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305';

type ScenarioName = 'page' | 'big' | 'handshake';
const SCENARIOS: Array<{ name: ScenarioName; label: string; path: string; close: boolean; bytes: number }> = [
  { name: 'page', label: 'GET 11 KB page (keep-alive)', path: '/', close: false, bytes: PAGE_BYTES },
  { name: 'big', label: 'GET 200 KB file (keep-alive)', path: '/big.bin', close: false, bytes: BIG_BYTES },
  {
    name: 'handshake',
    label: 'new TLS connection per request (11 KB page)',
    path: '/',
    close: true,
    bytes: PAGE_BYTES,
  },
];

interface Target {
  name: string;
  /** `https://localhost:<port>` (SNI localhost; the certificate covers localhost and *.localhost). */
  url: string;
  host?: string;
  pids: number[];
  stop(): Promise<void>;
}

function spawnSupervised(cmd: string, args: string[], env?: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: env ?? process.env });
  let out = '';
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  (child as ChildProcess & { output: () => string }).output = () => out;
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

/** Waits until `https://localhost:<port>` completes a request (any status). */
async function waitTls(port: number, ca: string, child: ChildProcess): Promise<void> {
  const { request } = await import('node:https');
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) {
      throw new Error(`exited early:\n${(child as ChildProcess & { output: () => string }).output()}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port, servername: 'localhost', ca, path: '/', agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve(true));
        },
      );
      req.on('error', () => resolve(false));
      req.setTimeout(1000, () => req.destroy());
      req.end();
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} did not answer TLS within 20 s`);
}

function makeCertificate(dir: string): { cert: string; key: string; ca: string } {
  const o = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  o(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Bench CA']);
  o(['req', '-new', ...ec, '-keyout', 'key.pem', '-out', 'leaf.csr', '-subj', '/CN=localhost']);
  execFileSync('sh', ['-c', 'printf "subjectAltName=DNS:localhost,DNS:*.localhost\\n" > ext.cnf'], {
    cwd: dir,
  });
  o([
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  ]);
  execFileSync('sh', ['-c', 'cat leaf.pem ca.pem > cert.pem'], { cwd: dir });
  return { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem'), ca: join(dir, 'ca.pem') };
}

async function startNginxTls(
  root: string,
  dir: string,
  cert: { cert: string; key: string },
): Promise<Target> {
  await mkdir(join(dir, 'tmp'), { recursive: true });
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  await writeFile(
    conf,
    `worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  etag on;
  keepalive_requests 1000000;
  types { text/html html; application/octet-stream bin; }
  default_type application/octet-stream;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${cert.cert};
    ssl_certificate_key ${cert.key};
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers ${INTERMEDIATE_CIPHERS};
    ssl_prefer_server_ciphers off;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 1d;
    root ${root};
    index index.html;
  }
}
`,
  );
  const child = spawnSupervised('nginx', [
    '-e',
    join(dir, 'error.log'),
    '-p',
    dir,
    '-c',
    conf,
    '-g',
    'daemon off;',
  ]);
  await waitTls(port, await readFile(join(dir, '..', 'cert', 'ca.pem'), 'utf8'), child);
  const workers = childPids(child.pid ?? -1);
  if (workers.length !== 1) throw new Error(`nginx has ${workers.length} workers, expected 1`);
  return { name: 'nginx', url: `https://localhost:${port}`, pids: workers, stop: () => stopChild(child) };
}

async function startCaddyProxy(
  dir: string,
  cert: { cert: string; key: string; ca: string },
  upstreamPort: number,
  upstreamPid: number,
): Promise<Target> {
  const port = await freePort();
  const caddyfile = join(dir, 'Caddyfile');
  await writeFile(
    caddyfile,
    `{
  admin off
  auto_https off
  storage file_system ${join(dir, 'storage')}
}
https://:${port} {
  tls ${cert.cert} ${cert.key}
  reverse_proxy 127.0.0.1:${upstreamPort}
}
`,
  );
  const child = spawnSupervised('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
    ...process.env,
    HOME: dir,
    XDG_DATA_HOME: dir,
    XDG_CONFIG_HOME: dir,
    // One worker: Go schedules on one thread like nginx's one worker (it is pinned to one CPU too).
    GOMAXPROCS: '1',
  });
  await waitTls(port, await readFile(cert.ca, 'utf8'), child);
  return {
    name: 'caddy -> service',
    url: `https://localhost:${port}`,
    pids: [child.pid ?? -1, upstreamPid],
    stop: () => stopChild(child),
  };
}

/** node:https answering the page and the file from memory: what bare Node TLS costs. */
async function startBareHttps(
  root: string,
  cert: { cert: string; key: string; ca: string },
): Promise<Target> {
  const port = await freePort();
  const source = `
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
const page = readFileSync(${JSON.stringify(join(root, 'index.html'))});
const big = readFileSync(${JSON.stringify(join(root, 'big.bin'))});
createServer({ cert: readFileSync(${JSON.stringify(cert.cert)}), key: readFileSync(${JSON.stringify(cert.key)}),
  minVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] }, (req, res) => {
  const body = req.url === '/big.bin' ? big : page;
  res.writeHead(200, { 'Content-Type': req.url === '/big.bin' ? 'application/octet-stream' : 'text/html', 'Content-Length': body.length });
  res.end(body);
}).listen(${port}, '127.0.0.1');
`;
  const child = spawnSupervised(process.execPath, ['--input-type=module', '-e', source]);
  await waitTls(port, await readFile(cert.ca, 'utf8'), child);
  return {
    name: 'node:https',
    url: `https://localhost:${port}`,
    pids: [child.pid ?? -1],
    stop: () => stopChild(child),
  };
}

export async function runTlsBench(): Promise<void> {
  const missing = await ensureAptCommands([
    { command: 'wrk', pkg: 'wrk' },
    { command: 'nginx', pkg: 'nginx-light' },
    { command: 'caddy', pkg: 'caddy' },
  ]);
  if (missing.includes('wrk')) throw new Error('the TLS set needs wrk (apt-get install wrk)');
  const tmp = await mkdtemp(join(tmpdir(), 'slipway-bench-tls-'));
  const stops: Array<() => Promise<void>> = [];
  try {
    await mkdir(join(tmp, 'cert'));
    const cert = makeCertificate(join(tmp, 'cert'));
    const files = hotSiteFiles();
    const root = join(tmp, 'site');
    await mkdir(root);
    for (const f of files) await writeFile(join(root, f.path), f.bytes);
    execFileSync('chmod', ['-R', 'a+rX', tmp]);

    const mode: RunMode = (process.env.BENCH_SERVICE_MODE as RunMode | undefined) ?? preferredMode();
    const dataDir = join(tmp, 'data');
    await mkdir(dataDir);
    const port = await freePort();
    const tlsPort = await freePort();
    const service = await startService({
      dataDir,
      port,
      mode,
      env: { TLS_PORT: String(tlsPort), TLS_CERT_FILE: cert.cert, TLS_KEY_FILE: cert.key },
    });
    stops.push(() => service.stop(5000));
    const key = await signIn(service.url, dataDir, 'bench@example.com');
    const client = new Client(service.url, key);
    const slug = await publishSite(client, files);
    client.close();

    const targets: Target[] = [
      {
        name: 'service (TLS_PORT)',
        url: `https://localhost:${tlsPort}`,
        host: `${slug}.localhost:${tlsPort}`,
        pids: [service.pid],
        stop: async () => {},
      },
    ];
    if (!missing.includes('nginx')) {
      const nginx = await startNginxTls(root, join(tmp, 'nginx'), cert);
      stops.push(nginx.stop);
      targets.push(nginx);
    }
    if (!missing.includes('caddy')) {
      await mkdir(join(tmp, 'caddy'));
      const caddy = await startCaddyProxy(join(tmp, 'caddy'), cert, port, service.pid);
      stops.push(caddy.stop);
      targets.push({ ...caddy, host: `${slug}.localhost:${port}` });
    }
    const bare = await startBareHttps(root, cert);
    stops.push(bare.stop);
    targets.push(bare);
    for (const t of targets) for (const pid of t.pids) if (PIN) await pinToCpu(pid, SERVER_CPU);

    const load = await LoadGenerator.create('wrk', tmp, PIN ? CLIENT_CPU : null);
    const spec = (t: Target, s: (typeof SCENARIOS)[number], durationS: number) => ({
      url: t.url + s.path,
      headers: { ...(t.host ? { Host: t.host } : {}), ...(s.close ? { Connection: 'close' } : {}) },
      connections: s.close ? Math.min(CONNECTIONS, 20) : CONNECTIONS,
      durationS,
      serverPids: t.pids,
    });
    log(
      `TLS set: ${targets.map((t) => t.name).join(', ')}; ${ROUNDS} rounds of ${DURATION_S} s, ${load.description}`,
    );
    for (const s of SCENARIOS) for (const t of targets) await load.run(spec(t, s, 1));
    const results = await interleavedRounds(load, targets, SCENARIOS, ROUNDS, (t, s) =>
      spec(t, s, DURATION_S),
    );

    // biome-ignore lint/suspicious/noExplicitAny: the JSON report is assembled row by row.
    const report: any = {
      date: new Date().toISOString(),
      node: process.version,
      rounds: ROUNDS,
      durationS: DURATION_S,
      rows: [],
    };
    console.log('\nHTTPS, one worker each (medians; per CPU-s = requests per second of server CPU)');
    const rows: string[][] = [
      ['scenario', 'server', 'req/s', 'per CPU-s', 'server CPU', 'vs nginx', 'per CPU-s vs nginx', 'target'],
    ];
    for (const s of SCENARIOS) {
      const stat = (t: Target) => {
        const list = results.get(`${s.name}/${t.name}`) ?? [];
        const rps = median(list.map((x) => x.rps));
        const cpu = median(list.map((x) => x.serverCpuPct));
        return {
          rps,
          cpu,
          perCpu: median(list.map((x) => 1e6 / x.serverUsPerReq)),
          errors: list.reduce((a, x) => a + x.errors + x.badStatus, 0),
        };
      };
      const nginx = targets.find((t) => t.name === 'nginx');
      const ref = nginx ? stat(nginx) : undefined;
      for (const t of targets) {
        const st = stat(t);
        const vs = ref ? st.rps / ref.rps : Number.NaN;
        const vsCpu = ref ? st.perCpu / ref.perCpu : Number.NaN;
        const isService = t.name.startsWith('service');
        rows.push([
          s.label,
          t.name,
          int(st.rps),
          int(st.perCpu),
          `${st.cpu.toFixed(0)} %`,
          Number.isFinite(vs) ? `${vs.toFixed(2)}x` : '',
          Number.isFinite(vsCpu) ? `${vsCpu.toFixed(2)}x` : '',
          isService && ref ? `>= ${TARGETS[s.name]}x ${vs >= TARGETS[s.name] ? 'PASS' : 'MISS'}` : '',
        ]);
        report.rows.push({
          scenario: s.name,
          server: t.name,
          rps: st.rps,
          perCpuSecond: st.perCpu,
          serverCpuPct: st.cpu,
          vsNginx: vs,
          perCpuVsNginx: vsCpu,
          errors: st.errors,
        });
      }
    }
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
    for (const r of rows)
      console.log(
        r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
      );
    await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
    await writeFile(
      join(REPO_ROOT, 'bench', 'out', 'serve-tls.json'),
      `${JSON.stringify(report, null, 2)}\n`,
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(tmp, { recursive: true, force: true });
  }
}
