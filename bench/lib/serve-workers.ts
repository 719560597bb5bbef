// `npm run bench -- --workers`: the WORKERS rows (issue 23), side by side in one run: the service with
// WORKERS=1 and WORKERS=2 against nginx with worker_processes 1 and 2, on the hot 11 KB page and the 200 KB
// file over keep-alive connections. Nothing is pinned: two workers need both cores, and the load generator
// (wrk) shares them, so its CPU is reported next to the servers'. Server CPU counts every process of a
// target (the service's primary and workers; nginx's workers). Medians of interleaved rounds. Targets:
// WORKERS=2 vs nginx 2 workers >= 1.0x on the page and >= 0.9x on the 200 KB file; WORKERS=2 >= 1.6x
// WORKERS=1 on the page. Writes bench/out/serve-workers.json.

import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from './client.js';
import { envInt, int, interleavedRounds } from './report.js';
import { LoadGenerator } from './serve-load.js';
import { startNginx } from './serve-peers.js';
import { BIG_BYTES, hotSiteFiles, PAGE_BYTES, publishSite } from './serve-sites.js';
import { childPids, ensureAptCommands, log } from './serve-tools.js';
import { freePort, preferredMode, REPO_ROOT, type RunMode, signIn, startService } from './service.js';
import { stats } from './stats.js';

const ROUNDS = envInt('BENCH_ROUNDS', 5);
const DURATION_S = envInt('BENCH_DURATION_S', 2);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);

const SCENARIOS = [
  { name: 'page', label: 'GET 11 KB page', path: '/', bytes: PAGE_BYTES },
  { name: 'big', label: 'GET 200 KB file', path: '/big.bin', bytes: BIG_BYTES },
] as const;
type ScenarioName = (typeof SCENARIOS)[number]['name'];
/** WORKERS=2 vs nginx with 2 workers (DESIGN.md "Performance targets", issue 23). */
const VS_NGINX: Record<ScenarioName, number> = { page: 1.0, big: 0.9 };
/** WORKERS=2 vs WORKERS=1 on the page. */
const SCALING = 1.6;

interface Target {
  name: string;
  workers: number;
  url: string;
  host?: string;
  /** Every process that serves, looked up again before each run (a replaced worker has a new pid). */
  pids(): number[];
}

export async function runWorkersBench(): Promise<void> {
  const missing = await ensureAptCommands([
    { command: 'wrk', pkg: 'wrk' },
    { command: 'nginx', pkg: 'nginx-light' },
  ]);
  if (missing.length > 0) throw new Error(`the WORKERS set needs ${missing.join(' and ')}`);
  const tmp = await mkdtemp(join(tmpdir(), 'slipway-bench-workers-'));
  // nginx started as root runs its workers as `nobody`: the files must be readable by others.
  await chmod(tmp, 0o755);
  const stops: Array<() => Promise<void>> = [];
  try {
    const files = hotSiteFiles();
    const root = join(tmp, 'site');
    await mkdir(root);
    for (const f of files) await writeFile(join(root, f.path), f.bytes);

    const mode: RunMode = (process.env.BENCH_SERVICE_MODE as RunMode | undefined) ?? preferredMode();
    const targets: Target[] = [];
    for (const workers of [1, 2]) {
      const dataDir = join(tmp, `data-${workers}`);
      await mkdir(dataDir);
      const port = await freePort();
      const service = await startService({ dataDir, port, mode, env: { WORKERS: String(workers) } });
      stops.push(() => service.stop(5000));
      const client = new Client(service.url, await signIn(service.url, dataDir, 'bench@example.com'));
      const slug = await publishSite(client, files);
      client.close();
      targets.push({
        name: `service WORKERS=${workers}`,
        workers,
        url: service.url,
        host: `${slug}.localhost:${port}`,
        pids: () => [service.pid, ...childPids(service.pid)],
      });
      const nginx = await startNginx(root, join(tmp, `nginx-${workers}`), workers);
      stops.push(nginx.stop);
      const nginxPids = nginx.servingPids ?? [nginx.servingPid];
      targets.push({
        name: `nginx ${workers} worker${workers > 1 ? 's' : ''}`,
        workers,
        url: nginx.url,
        pids: () => nginxPids,
      });
    }

    const load = await LoadGenerator.create('wrk', tmp, null);
    const spec = (t: Target, s: (typeof SCENARIOS)[number], durationS: number) => ({
      url: t.url + s.path,
      headers: (t.host ? { Host: t.host } : {}) as Record<string, string>,
      connections: CONNECTIONS,
      durationS,
      serverPids: t.pids(),
    });
    log(
      `WORKERS set: ${targets.map((t) => t.name).join(', ')}; ${ROUNDS} rounds of ${DURATION_S} s, ${load.description}, ${cpus().length} cores, nothing pinned`,
    );
    for (const s of SCENARIOS) for (const t of targets) await load.run(spec(t, s, 1));
    const results = await interleavedRounds(load, targets, SCENARIOS, ROUNDS, (t, s) =>
      spec(t, s, DURATION_S),
    );

    const stat = (s: ScenarioName, t: Target) => {
      const list = results.get(`${s}/${t.name}`) ?? [];
      return {
        rps: stats(list.map((x) => x.rps)),
        serverCpuPct: stats(list.map((x) => x.serverCpuPct)).median,
        clientCpuPct: stats(list.map((x) => x.clientCpuPct)).median,
        perCpu: stats(list.map((x) => 1e6 / x.serverUsPerReq)).median,
        errors: list.reduce((a, x) => a + x.errors + x.badStatus, 0),
      };
    };
    const rows: string[][] = [
      [
        'scenario',
        'server',
        'req/s (min-max)',
        'per CPU-s',
        'server CPU',
        'wrk CPU',
        'vs nginx same workers',
        'target',
      ],
    ];
    // biome-ignore lint/suspicious/noExplicitAny: the JSON report is assembled row by row.
    const report: any = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      rounds: ROUNDS,
      rows: [],
    };
    for (const s of SCENARIOS) {
      const one = stat(s.name, targets.find((t) => t.name === 'service WORKERS=1')!);
      for (const t of targets) {
        const st = stat(s.name, t);
        const nginx = targets.find((n) => n.name.startsWith('nginx') && n.workers === t.workers)!;
        const vs = t === nginx ? Number.NaN : st.rps.median / stat(s.name, nginx).rps.median;
        const targetCells: string[] = [];
        if (t.name === 'service WORKERS=2') {
          targetCells.push(`>= ${VS_NGINX[s.name]}x ${vs >= VS_NGINX[s.name] ? 'PASS' : 'MISS'}`);
          if (s.name === 'page') {
            const scaling = st.rps.median / one.rps.median;
            targetCells.push(
              `${scaling.toFixed(2)}x of WORKERS=1 (>= ${SCALING}x ${scaling >= SCALING ? 'PASS' : 'MISS'})`,
            );
            report.scalingPage = scaling;
          }
        }
        rows.push([
          s.label,
          t.name,
          `${int(st.rps.median)} (${int(st.rps.min)}-${int(st.rps.max)})`,
          int(st.perCpu),
          `${st.serverCpuPct.toFixed(0)} %`,
          `${st.clientCpuPct.toFixed(0)} %`,
          Number.isFinite(vs) ? `${vs.toFixed(2)}x` : '',
          targetCells.join('; '),
        ]);
        report.rows.push({ scenario: s.name, server: t.name, ...st, vsNginxSameWorkers: vs });
      }
    }
    console.log(
      '\nWORKERS (medians of req/s; per CPU-s = requests per second of server CPU; nothing pinned)',
    );
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
    for (const r of rows)
      console.log(
        r.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
      );
    await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
    await writeFile(
      join(REPO_ROOT, 'bench', 'out', 'serve-workers.json'),
      `${JSON.stringify(report, null, 2)}\n`,
    );
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await rm(tmp, { recursive: true, force: true });
  }
}
