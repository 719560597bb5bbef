// `npm run bench:cli`: the `slipway` command end to end, as a user runs it, against a service started as a
// child process (embedded set, loopback), beside the API flow on the same files in the same run:
// (1) the API flow: create -> 16 parallel uploads -> finalize of 1000 files / 50 MB of random bytes
//     (bench/lib/serve-sites.ts, the bench/publish.ts round), straight from memory;
// (2) `slipway publish <folder>` of the same files written to a folder (a new site each time: the folder
//     walk, hashing, create, uploads and finalize all inside the timed command), at 8 and at 16 parallel
//     uploads, and its ratio to (1) (issue 23: <= 1.3x);
// (3) `slipway publish` of the same folder after changing one file (the others dated an hour back, as
//     in a folder edited after its last publish: their hashes come from .slipway/hashes.json; one upload);
// (4) the floor under (3): the same republish's three requests (update, one upload, finalize) from a fresh
//     `node` running bench/lib/republish-floor.mjs, with no walk, no hash cache and no CLI around them, so
//     the CLI's own part is (3) minus (4) on whatever machine runs the bench;
// (5) the CLI's own start-up: `slipway --help`, through tsx (src/) and built (a temporary build of
//     dist/bundle/ as `npm run build` makes it, never the repository's own dist/).
// Medians (min-max) of `--rounds N` (default 5; start-up: 2 x N runs). Prints a table, writes
// bench/out/cli.json.

import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, type LocalFile } from './lib/client.js';
import { PUBLISH_BYTES, PUBLISH_FILES, publishFiles, timedPublish } from './lib/serve-sites.js';
import { freePort, preferredMode, REPO_ROOT, signIn, startService } from './lib/service.js';
import { type Stats, stats } from './lib/stats.js';

const CONCURRENCIES = [8, 16];
const FLOOR_SCRIPT = join(REPO_ROOT, 'bench', 'lib', 'republish-floor.mjs');
const TARGETS = { cliOverApi: 1.3, republishMs: 150 };

const fmt = (st: Stats, digits = 3) =>
  `${st.median.toFixed(digits)} (${st.min.toFixed(digits)}-${st.max.toFixed(digits)})`;

/** Writes `files` under `dir`, dated an hour back (past the racy margin of the hash cache). */
async function writeSite(dir: string, files: LocalFile[]): Promise<void> {
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const f of files) {
    await mkdir(dirname(join(dir, f.path)), { recursive: true });
    await writeFile(join(dir, f.path), f.bytes);
    await utimes(join(dir, f.path), anHourAgo, anHourAgo);
  }
}

/** Runs the CLI to the end; seconds of wall time and the --json document. */
async function timed(
  command: string[],
  env: Record<string, string>,
): Promise<{ seconds: number; json: Record<string, unknown> }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, command, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`${command.join(' ')} exited ${code}: ${stderr}`);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(stdout) as Record<string, unknown>;
  } catch {}
  return { seconds, json };
}

/**
 * The CLI as `npm run build` makes it (scripts/build-cli.mjs: dist/bundle/slipway.js), in a temp folder
 * with its own package.json and a node_modules link; never the repository's own dist/.
 */
async function buildDist(root: string): Promise<string> {
  execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build-cli.mjs'), join(root, 'dist')], {
    stdio: 'inherit',
  });
  await cp(join(REPO_ROOT, 'package.json'), join(root, 'package.json'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  return join(root, 'dist', 'bundle', 'slipway.js');
}

function parseRounds(argv: string[]): number {
  const i = argv.indexOf('--rounds');
  if (i === -1) return 5;
  const n = Number(argv[i + 1]);
  if (!Number.isInteger(n) || n < 1) throw new Error('--rounds needs a whole number >= 1');
  return n;
}

async function main(): Promise<void> {
  const rounds = parseRounds(process.argv.slice(2));
  const work = await mkdtemp(join(tmpdir(), 'slipway-bench-cli-'));
  const mode = preferredMode();
  const dataDir = join(work, 'data');
  await mkdir(dataDir);
  const service = await startService({
    dataDir,
    port: await freePort(),
    mode,
    env: { PLAN_FREE_MAX_STORAGE_BYTES: String(100 * 1024 * 1024 * 1024), PLAN_FREE_MAX_SITES: '100000' },
  });
  try {
    const key = await signIn(service.url, dataDir, 'bench-cli@example.com');
    const env = {
      SLIPWAY_URL: service.url,
      SLIPWAY_API_KEY: key,
      XDG_CONFIG_HOME: join(work, 'config'),
    };
    process.stderr.write('building a temporary dist/bundle/ (the CLI every row runs)\n');
    const distMain = await buildDist(join(work, 'build'));
    const tsxMain = ['--import', import.meta.resolve('tsx'), join(REPO_ROOT, 'src', 'cli', 'main.ts')];
    const cli = [distMain];

    const api = new Client(service.url, key);
    const apiFlow: number[] = [];
    const publish: Record<number, number[]> = Object.fromEntries(CONCURRENCIES.map((n) => [n, []]));
    const republish: number[] = [];
    const floor: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const files = publishFiles(r);
      apiFlow.push(await timedPublish(api, files));
      process.stderr.write(`round ${r + 1}: API flow ${apiFlow[r]!.toFixed(3)} s\n`);
      const site = join(work, `site-${r}`);
      await writeSite(site, files);
      for (const n of CONCURRENCIES) {
        // A new site each time: forget the folder's state (and the hashes it remembers).
        await rm(join(site, '.slipway'), { recursive: true, force: true });
        const res = await timed([...cli, 'publish', site, '--json', '--concurrency', String(n)], env);
        if (res.json.uploaded !== PUBLISH_FILES)
          throw new Error(`uploaded ${String(res.json.uploaded)}, not ${PUBLISH_FILES}`);
        publish[n]!.push(res.seconds);
        process.stderr.write(`round ${r + 1}: publish (${n} parallel) ${res.seconds.toFixed(3)} s\n`);
      }
      const changed = files[1 + Math.floor(Math.random() * (files.length - 1))]!.path;
      await writeFile(join(site, changed), randomBytes(40_000));
      const res = await timed([...cli, 'publish', site, '--json'], env);
      if (res.json.uploaded !== 1) throw new Error(`re-publish uploaded ${String(res.json.uploaded)}, not 1`);
      republish.push(res.seconds);
      process.stderr.write(`round ${r + 1}: re-publish ${res.seconds.toFixed(3)} s\n`);
      // The floor: the same site's live files, one of them changed again, by the three requests alone.
      const live = files.map(({ bytes: _, ...entry }) => entry);
      const manifestFile = join(work, `manifest-${r}.json`);
      await writeFile(manifestFile, JSON.stringify({ slug: res.json.slug, files: live }));
      const bare = await timed([FLOOR_SCRIPT, manifestFile], env);
      if (bare.json.uploaded !== 1)
        throw new Error(`the floor uploaded ${String(bare.json.uploaded)}, not 1`);
      floor.push(bare.seconds);
      process.stderr.write(`round ${r + 1}: the same three requests alone ${bare.seconds.toFixed(3)} s\n`);
      await rm(site, { recursive: true, force: true });
    }
    api.close();

    const startup = { tsx: [] as number[], dist: [] as number[] };
    for (let i = 0; i < rounds * 2; i++) {
      startup.tsx.push((await timed([...tsxMain, '--help'], env)).seconds * 1000);
      startup.dist.push((await timed([distMain, '--help'], env)).seconds * 1000);
    }

    const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');
    const apiStats = stats(apiFlow);
    const rows: string[][] = [['what', 'median (min-max)', 'target', 'ok']];
    rows.push(['API flow, 1000 files / 50 MB, 16 parallel (s)', fmt(apiStats), '', '']);
    const ratios: Record<number, number> = {};
    for (const n of CONCURRENCIES) {
      const st = stats(publish[n]!);
      ratios[n] = st.median / apiStats.median;
      rows.push([`slipway publish, the same files, ${n} parallel (s)`, fmt(st), '', '']);
      rows.push([
        '  CLI / API flow (medians)',
        ratios[n]!.toFixed(2),
        `<= ${TARGETS.cliOverApi}`,
        verdict(ratios[n]! <= TARGETS.cliOverApi),
      ]);
    }
    const republishStats = stats(republish.map((s) => s * 1000));
    rows.push([
      'slipway publish, one file changed (ms)',
      fmt(republishStats, 0),
      `<= ${TARGETS.republishMs}`,
      verdict(republishStats.median <= TARGETS.republishMs),
    ]);
    const floorStats = stats(floor.map((s) => s * 1000));
    rows.push(['  its three requests alone, from a fresh node (ms)', fmt(floorStats, 0), '', '']);
    rows.push([
      '  the CLI\u2019s own part (medians, ms)',
      (republishStats.median - floorStats.median).toFixed(0),
      '',
      '',
    ]);
    rows.push(['slipway --help via tsx (ms)', fmt(stats(startup.tsx), 0), '', '']);
    rows.push(['slipway --help built, dist/bundle (ms)', fmt(stats(startup.dist), 0), '', '']);
    console.log(
      `(service: ${mode}; CLI: dist/bundle; ${cpus().length} cores; load ${loadavg()[0]!.toFixed(2)})`,
    );
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows)
      console.log(
        r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '),
      );

    const out = {
      date: new Date().toISOString(),
      node: process.version,
      service: mode,
      cpus: cpus().length,
      rounds,
      files: PUBLISH_FILES,
      totalBytes: PUBLISH_BYTES,
      targets: TARGETS,
      apiFlow: { ...apiStats, seconds: apiFlow },
      cliOverApi: ratios,
      publish: Object.fromEntries(
        CONCURRENCIES.map((n) => [n, { ...stats(publish[n]!), seconds: publish[n] }]),
      ),
      republishMs: { ...republishStats, seconds: republish },
      republishFloorMs: { ...floorStats, seconds: floor },
      startupMs: {
        tsx: { ...stats(startup.tsx), runs: startup.tsx },
        dist: { ...stats(startup.dist), runs: startup.dist },
      },
    };
    await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
    await writeFile(join(REPO_ROOT, 'bench', 'out', 'cli.json'), `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await service.stop();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
