// Tools the serving bench needs, installed idempotently at bench time (never added to package.json):
// Debian packages (wrk, nginx) through apt-get, npm packages (sirv, autocannon) into bench/out/deps,
// and the /proc readings (CPU seconds, RSS, child pids) the bench reports next to its figures.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './service.js';

/** Where npm packages the bench needs but the project does not depend on are installed (gitignored). */
export const BENCH_DEPS_DIR = join(REPO_ROOT, 'bench', 'out', 'deps');
const CLOCK_TICKS_PER_S = 100;

export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Runs a command, resolves with its exit code and output (stdout + stderr). */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
    child.stdin.end(opts.input);
  });
}

/**
 * Makes each command available by installing its Debian package when it is missing: `apt-get install -y`,
 * and `apt-get update` first only if that fails. Returns the commands that are still missing.
 */
export async function ensureAptCommands(wanted: Array<{ command: string; pkg: string }>): Promise<string[]> {
  const missing = wanted.filter((w) => !hasCommand(w.command));
  if (missing.length === 0) return [];
  const pkgs = missing.map((m) => m.pkg);
  log(`installing ${pkgs.join(', ')} (apt-get install -y)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let res = await run('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env });
  if (res.code !== 0) {
    log('apt-get install failed; running apt-get update and trying again');
    await run('apt-get', ['update'], { env });
    res = await run('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env });
    if (res.code !== 0) log(`apt-get install failed:\n${res.out.trim().split('\n').slice(-5).join('\n')}`);
  }
  return wanted.filter((w) => !hasCommand(w.command)).map((w) => w.command);
}

/**
 * The directory of npm package `name`: the project's node_modules when it is there, else bench/out/deps,
 * installing it there first. The bench never changes package.json or the project's node_modules.
 */
export async function ensureNpmPackage(name: string): Promise<string> {
  const own = join(REPO_ROOT, 'node_modules', name);
  if (existsSync(join(own, 'package.json'))) return own;
  const dir = join(BENCH_DEPS_DIR, 'node_modules', name);
  if (existsSync(join(dir, 'package.json'))) return dir;
  log(`${name} is not installed: npm install ${name} into bench/out/deps (not saved to package.json)`);
  await mkdir(BENCH_DEPS_DIR, { recursive: true });
  const manifest = join(BENCH_DEPS_DIR, 'package.json');
  if (!existsSync(manifest)) await writeFile(manifest, '{ "private": true }\n');
  const res = await run('npm', ['install', '--no-audit', '--no-fund', '--prefix', BENCH_DEPS_DIR, name]);
  if (res.code !== 0 || !existsSync(join(dir, 'package.json')))
    throw new Error(`npm install ${name} failed:\n${res.out}`);
  return dir;
}

/**
 * Pins every thread of `pid` (and the threads it starts later) to one CPU with taskset; false when taskset
 * is missing or refuses.
 */
export async function pinToCpu(pid: number, cpu: number): Promise<boolean> {
  if (!hasCommand('taskset')) return false;
  const res = await run('taskset', ['-a', '-p', '-c', String(cpu), String(pid)]);
  return res.code === 0;
}

/** User + system CPU seconds of a process so far, or NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

export function rssMB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The pids of a process's children (Linux /proc/<pid>/task/<pid>/children). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Processes other than `ours` that used more than `minPct` % of a core over `sampleMs` (noise report). */
export async function busyProcesses(ours: Set<number>, sampleMs = 1000, minPct = 10): Promise<string[]> {
  const { readdirSync } = await import('node:fs');
  const pids = readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
  const before = new Map(pids.map((p) => [p, cpuSeconds(p)]));
  await new Promise((r) => setTimeout(r, sampleMs));
  const out: string[] = [];
  for (const [pid, t0] of before) {
    if (ours.has(pid) || pid === process.pid) continue;
    const pct = ((cpuSeconds(pid) - t0) / (sampleMs / 1000)) * 100;
    if (pct >= minPct) {
      let name = String(pid);
      try {
        name = `${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}(${pid})`;
      } catch {}
      out.push(`${name} ${pct.toFixed(0)}%`);
    }
  }
  return out;
}

/**
 * A browser's User-Agent: requests that carry it are visitors' (visitor analytics counts and hashes their
 * page views); wrk sends none, which analytics counts as a bot.
 */
export const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
