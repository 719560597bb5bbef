// The load generator of the serving bench: wrk (one thread, keep-alive connections, latency percentiles)
// with a fixed Host header or a Lua script rotating over many hosts; autocannon in a child process
// when wrk cannot be installed. Also samples the CPU the server under load used during the run.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, ensureNpmPackage, hasCommand } from './serve-tools.js';

export type LoadTool = 'wrk' | 'autocannon';

export interface LoadSpec {
  /** `http://127.0.0.1:<port><path>` */
  url: string;
  /** Sent with every request (e.g. `If-None-Match`). */
  headers?: Record<string, string>;
  /** One Host header per request, rotating over the list (else the URL's authority or `headers.Host`). */
  hosts?: string[];
  /** How each request picks from `hosts`: `rotate` (default: in order, round-robin) or `random` (uniform). */
  pick?: 'rotate' | 'random';
  connections: number;
  durationS: number;
  /** Processes whose CPU use during the run is reported (the server under test). */
  serverPids: number[];
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Socket errors and timeouts. */
  errors: number;
  /** Responses that were neither 2xx nor 3xx. */
  badStatus: number;
  /** CPU the server processes used, in % of one core, averaged over the run. */
  serverCpuPct: number;
  /** Server CPU time per request, in microseconds (less sensitive to a busy machine than req/s). */
  serverUsPerReq: number;
  /** CPU the load generator used (sampled every 100 ms, so slightly low), in % of one core. */
  clientCpuPct: number;
  /** CPU every other process on the machine (and the hypervisor's steal) used meanwhile: noise, in % of one core. */
  otherCpuPct: number;
}

type Measured = Omit<LoadResult, 'serverCpuPct' | 'serverUsPerReq' | 'clientCpuPct' | 'otherCpuPct'>;

/**
 * Process time (user, nice, system, and steal: the hypervisor running other guests) and total CPU time of
 * the whole machine so far, in clock ticks over all cores (/proc/stat). Interrupt and softirq time (the
 * loopback network work of the run itself) count in the total only.
 */
function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , , , steal = 0] = f;
  return { busy: user + nice + system + steal, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
}

export class LoadGenerator {
  private scriptCount = 0;

  private constructor(
    readonly tool: LoadTool,
    private readonly tmpDir: string,
    private readonly autocannonDir: string | null,
    /** Run the load generator on this CPU only (taskset), or anywhere when null. */
    readonly cpu: number | null,
  ) {}

  static async create(tool: LoadTool, tmpDir: string, cpu: number | null): Promise<LoadGenerator> {
    const dir = tool === 'autocannon' ? await ensureNpmPackage('autocannon') : null;
    return new LoadGenerator(tool, tmpDir, dir, cpu !== null && hasCommand('taskset') ? cpu : null);
  }

  get description(): string {
    const where = this.cpu === null ? '' : ` on CPU ${this.cpu}`;
    return this.tool === 'wrk' ? `wrk -t1 (one thread${where})` : `autocannon (one process${where})`;
  }

  /** `cmd args` under `taskset -c <cpu>` when pinned (taskset execs the command: same pid). */
  private command(cmd: string, args: string[]): [string, string[]] {
    return this.cpu === null ? [cmd, args] : ['taskset', ['-c', String(this.cpu), cmd, ...args]];
  }

  async run(spec: LoadSpec): Promise<LoadResult> {
    const cpu0 = spec.serverPids.map(cpuSeconds);
    const machine0 = machineTicks();
    const t0 = performance.now();
    let clientCpuS = 0;
    let clientPid = -1;
    let clientStart = Number.NaN;
    const sampler = setInterval(() => {
      const now = cpuSeconds(clientPid);
      if (Number.isNaN(clientStart)) clientStart = now;
      else if (Number.isFinite(now)) clientCpuS = now - clientStart;
    }, 100);
    const onSpawn = (pid: number) => {
      clientPid = pid;
      clientStart = cpuSeconds(pid);
    };
    let result: Measured;
    try {
      result = this.tool === 'wrk' ? await this.wrk(spec, onSpawn) : await this.autocannon(spec, onSpawn);
    } finally {
      clearInterval(sampler);
    }
    const wallS = (performance.now() - t0) / 1000;
    const machine1 = machineTicks();
    const cpuS = spec.serverPids.reduce((sum, pid, i) => sum + (cpuSeconds(pid) - cpu0[i]!), 0);
    const serverCpuPct = (cpuS / wallS) * 100;
    const clientCpuPct = (clientCpuS / wallS) * 100;
    const cores = cpus().length;
    const machinePct = ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * cores * 100;
    return {
      ...result,
      serverCpuPct,
      serverUsPerReq: (cpuS / result.requests) * 1e6,
      clientCpuPct,
      otherCpuPct: Math.max(0, machinePct - serverCpuPct - clientCpuPct),
    };
  }

  private async wrk(spec: LoadSpec, onSpawn: (pid: number) => void): Promise<Measured> {
    const args = ['-t1', `-c${spec.connections}`, `-d${spec.durationS}s`, '--latency', '--timeout', '5s'];
    for (const [name, value] of Object.entries(spec.headers ?? {})) args.push('-H', `${name}: ${value}`);
    if (spec.hosts !== undefined)
      args.push('-s', await this.rotationScript(spec.hosts, new URL(spec.url), spec.pick ?? 'rotate'));
    args.push(spec.url);
    const out = await capture(...this.command('wrk', args), onSpawn);
    return parseWrk(out);
  }

  /** A wrk script that prebuilds one request per host (no per-request string work in Lua). */
  private async rotationScript(hosts: string[], url: URL, pick: 'rotate' | 'random'): Promise<string> {
    const path = join(this.tmpDir, `rotate-${++this.scriptCount}.lua`);
    const list = hosts.map((h) => `  ${JSON.stringify(h)},`).join('\n');
    await writeFile(
      path,
      `local hosts = {\n${list}\n}
local reqs = {}
local n = 0
local i = 0
init = function(args)
  for k, h in ipairs(hosts) do
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers["Host"] = h
    reqs[k] = wrk.format("GET", ${JSON.stringify(url.pathname + url.search)}, headers)
  end
  n = #reqs
  math.randomseed(os.time())
end
request = function()
${
  pick === 'random'
    ? '  return reqs[math.random(n)]'
    : `  i = i + 1
  if i > n then i = 1 end
  return reqs[i]`
}
end
`,
    );
    return path;
  }

  private async autocannon(spec: LoadSpec, onSpawn: (pid: number) => void): Promise<Measured> {
    const entry = join(this.autocannonDir!, 'autocannon.js');
    const source = `
const autocannon = require(${JSON.stringify(entry)});
const spec = JSON.parse(process.argv[1]);
let i = 0;
const hosts = spec.hosts;
autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.durationS,
  headers: spec.headers || {},
  requests: hosts ? [{ setupRequest: (r) => ({ ...r, headers: { ...r.headers, host: spec.pick === 'random' ? hosts[Math.floor(Math.random() * hosts.length)] : hosts[i++ % hosts.length] } }) }] : undefined,
}, (err, res) => {
  if (err) { console.error(err); process.exit(1); }
  console.log(JSON.stringify({ rps: res.requests.average, p50Ms: res.latency.p50, p99Ms: res.latency.p99,
    requests: res.requests.total, errors: res.errors + res.timeouts, badStatus: res.non2xx - (res['3xx'] || 0) }));
});`;
    const out = await capture(
      ...this.command(process.execPath, ['-e', source, JSON.stringify(spec)]),
      onSpawn,
    );
    return JSON.parse(out.trim().split('\n').pop()!) as Measured;
  }
}

function capture(cmd: string, args: string[], onSpawn: (pid: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) onSpawn(child.pid);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} exited with ${code}: ${err || out}`));
    });
  });
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function latencyMs(value: string, unit: string): number {
  return Number(value) * (UNIT_MS[unit] ?? Number.NaN);
}

export function parseWrk(out: string): Measured {
  const pct = (p: string) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out);
    return m ? latencyMs(m[1]!, m[2]!) : Number.NaN;
  };
  const rps = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1] ?? Number.NaN);
  const requests = Number(/^\s*(\d+) requests in/m.exec(out)?.[1] ?? Number.NaN);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = sock ? sock.slice(1).reduce((s, n) => s + Number(n), 0) : 0;
  const badStatus = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  if (!Number.isFinite(rps)) throw new Error(`could not read wrk's output:\n${out}`);
  return { rps, p50Ms: pct('50'), p99Ms: pct('99'), requests, errors, badStatus };
}
