// `npm run bench:sites`: issue 23's "100,000 sites on one node" (DESIGN.md "Performance targets", the
// 10 -> 100,000 sites row). One service (WORKERS=1, embedded backend) per mode publishes BENCH_SITES one-page
// sites through the public API in blocks (the rate of each block is reported), as many accounts (one per
// BENCH_SITES_PER_ACCOUNT sites) and as one account. On the first mode's node it then measures:
// - hot: wrk rotating over the first 10 sites, when only they exist, when all N do (before any other site
//   is asked for), and in rounds alternating with the spread's (a node that has just served every site);
// - spread: wrk picking a random site of the N for every request (a uniform spread), measured once every
//   site was requested and the rate has settled (the warm-up windows are printed too);
// - cold first byte: sequential GETs over fresh connections of sites never requested before (live node);
// - restart: SIGTERM, start again on the same DATA_DIR, time to the first site's answer, then cold first
//   byte again on the fresh process;
// - the service's RSS, sampled through every phase.
// Prints a table with the targets (PASS/MISS) and writes bench/out/sites.json. A benchmark, not a test: the
// full run takes tens of minutes; BENCH_SITES=5000 takes a few.
//
// Environment: BENCH_SITES (100000), BENCH_BLOCK (10000, or N/10 when smaller), BENCH_SITES_PER_ACCOUNT (1000),
// BENCH_MODES (accounts,single), BENCH_SEED_PARALLEL (16), BENCH_HOT_SITES (10), BENCH_ROUNDS (3),
// BENCH_DURATION_S (5), BENCH_CONNECTIONS (50), BENCH_COLD_SITES (500), BENCH_SPREAD_WARMUP_MAX_S (240),
// SERVE_CACHE_MB (256: passed to the service), BENCH_PIN (1), BENCH_SERVICE_MODE (dist | tsx; default: dist when fresh),
// BENCH_CPU_PROF=<dir> (each service process writes a V8 CPU profile there; the bench prints its top costs).

import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, timeToFirstByte } from './lib/client.js';
import {
  Cleanup,
  envInt,
  int,
  mark,
  ms,
  NOISY_OTHER_CPU_PCT,
  printTable,
  ratio,
  type Summary,
  summarise,
} from './lib/report.js';
import { LoadGenerator, type LoadResult, type LoadSpec } from './lib/serve-load.js';
import { type ProfileSummary, printProfile, summariseProfile } from './lib/serve-profile.js';
import { seedSites, warmHosts } from './lib/serve-sites.js';
import { BROWSER_UA, ensureAptCommands, log, pinToCpu, rssMB } from './lib/serve-tools.js';
import {
  freePort,
  preferredMode,
  REPO_ROOT,
  type RunMode,
  type Service,
  signIn,
  startService,
} from './lib/service.js';

const MB = 1024 * 1024;

const SITES = envInt('BENCH_SITES', 100_000);
/** Publish rates are reported per block; the target compares the first block with all later ones. */
const BLOCK = envInt('BENCH_BLOCK', Math.min(10_000, Math.max(1, Math.floor(SITES / 10))));
const SITES_PER_ACCOUNT = envInt('BENCH_SITES_PER_ACCOUNT', 1000);
/** At most UPLOADS_PER_CLIENT (16) uploads from one address may be under way: more answer 429. */
const PARALLEL = envInt('BENCH_SEED_PARALLEL', 16);
const HOT_SITES = envInt('BENCH_HOT_SITES', 10);
const ROUNDS = envInt('BENCH_ROUNDS', 3);
const DURATION_S = envInt('BENCH_DURATION_S', 5);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 50);
const COLD_SITES = envInt('BENCH_COLD_SITES', 500);
const CACHE_MB = envInt('SERVE_CACHE_MB', 256);
const WARMUP_S = 1;
/** The longest the random spread runs before its measured rounds (see the spread phase). */
const SPREAD_WARMUP_MAX_S = envInt('BENCH_SPREAD_WARMUP_MAX_S', 240);
const SPREAD_WARMUP_WINDOW_S = 5;
const RSS_SAMPLE_MS = 200;
const PIN = cpus().length >= 2 && process.env.BENCH_PIN !== '0';
const CLIENT_CPU = 0;
const SERVER_CPU = 1;

type Mode = 'accounts' | 'single';
const MODES = (process.env.BENCH_MODES ?? 'accounts,single').split(',') as Mode[];
for (const m of MODES)
  if (m !== 'accounts' && m !== 'single') throw new Error(`BENCH_MODES: unknown mode ${m}`);

/** The targets of issue 23, item 2. */
const TARGETS = {
  /** Publish rate from the first block's end to N, over the rate of the first block. */
  publishRate: 0.9,
  hotRps: 0.9,
  hotP99: 1.1,
  spreadVsHot: 0.5,
  rssOverCacheMB: 200,
  restartS: 5,
  coldP99Ms: 10,
};

interface Block {
  /** Sites that exist when the block ends. */
  upTo: number;
  sites: number;
  seconds: number;
  sitesPerS: number;
  /** Largest RSS of the service during the block, in MB. */
  rssMB: number;
}

interface ColdResult {
  sites: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  connectP99Ms: number;
  non200: number;
}

/** Samples the RSS of the current service process into the current phase's maximum. */
class RssSampler {
  readonly phases = new Map<string, number>();
  private phase = 'start';
  private readonly timer: NodeJS.Timeout;

  constructor(private pid: () => number) {
    this.timer = setInterval(() => this.sample(), RSS_SAMPLE_MS);
  }

  sample(): number {
    const mb = rssMB(this.pid());
    if (Number.isFinite(mb)) this.phases.set(this.phase, Math.max(this.phases.get(this.phase) ?? 0, mb));
    return mb;
  }

  /** Starts a phase; returns the previous phase's maximum. */
  enter(phase: string): number {
    const prev = this.sample();
    const max = this.phases.get(this.phase) ?? prev;
    this.phase = phase;
    this.sample();
    return max;
  }

  max(): number {
    return Math.max(...this.phases.values());
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** Sequential GETs of `hosts` over fresh connections: time to first byte. */
async function coldFirstBytes(base: string, hosts: string[]): Promise<ColdResult> {
  const firsts: number[] = [];
  const connects: number[] = [];
  let non200 = 0;
  for (const host of hosts) {
    const r = await timeToFirstByte(base, host);
    firsts.push(r.firstByteMs);
    connects.push(r.connectMs);
    if (r.status !== 200) non200++;
  }
  return {
    sites: hosts.length,
    p50Ms: percentile(firsts, 0.5),
    p99Ms: percentile(firsts, 0.99),
    maxMs: Math.max(...firsts),
    connectP99Ms: percentile(connects, 0.99),
    non200,
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? Number.NaN;
}

/** `count` distinct random picks from `xs` (removed from it). */
function takeRandom<T>(xs: T[], count: number): T[] {
  const out: T[] = [];
  for (let k = 0; k < count && xs.length > 0; k++) {
    const i = Math.floor(Math.random() * xs.length);
    out.push(xs[i]!);
    xs[i] = xs[xs.length - 1]!;
    xs.pop();
  }
  return out;
}

const uptime = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

async function main(): Promise<void> {
  const started = Date.now();
  const cleanup = new Cleanup();
  const onSignal = () => {
    log('interrupted: stopping children and removing temp dirs');
    void cleanup.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const profDir = process.env.BENCH_CPU_PROF;
  const pids: number[] = [];
  let current: Service | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: the JSON report is assembled section by section.
  const report: Record<string, any> = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    sites: SITES,
    block: BLOCK,
    sitesPerAccount: SITES_PER_ACCOUNT,
    parallel: PARALLEL,
    hotSites: HOT_SITES,
    rounds: ROUNDS,
    durationS: DURATION_S,
    connections: CONNECTIONS,
    coldSites: COLD_SITES,
    serveCacheMB: CACHE_MB,
    loadAverage: { before: loadavg() },
    modes: {},
  };
  const results: Array<{ what: string; value: string; target: string; pass: boolean | null }> = [];
  try {
    const missing = await ensureAptCommands([{ command: 'wrk', pkg: 'wrk' }]);
    const tool = missing.includes('wrk') ? 'autocannon' : 'wrk';
    const tmp = await mkdtemp(join(tmpdir(), 'slipway-bench-sites-'));
    cleanup.push('temp dir', () => rm(tmp, { recursive: true, force: true }));
    const load = await LoadGenerator.create(tool, tmp, PIN ? CLIENT_CPU : null);
    const runMode: RunMode = (process.env.BENCH_SERVICE_MODE as RunMode | undefined) ?? preferredMode();
    report.service = { mode: runMode, backend: 'embedded (SQLite + disk blobs)', tool: load.description };
    log(
      `${SITES} sites in blocks of ${BLOCK}, modes ${MODES.join(', ')}; service ${runMode}; ${uptime()} on ${cpus().length} cores`,
    );

    for (const [modeIndex, mode] of MODES.entries()) {
      const serving = modeIndex === 0;
      const dataDir = join(tmp, `data-${mode}`);
      await mkdir(dataDir);
      const port = await freePort();
      const start = () =>
        startService({
          dataDir,
          port,
          mode: runMode,
          nodeArgs: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
          env: {
            SERVE_CACHE_MB: String(CACHE_MB),
            // One sign-in per 1000 sites from one address: past the default 20 codes per hour per IP.
            RATE_LIMIT_SIGNIN_EMAIL: '1000000',
            RATE_LIMIT_SIGNIN_IP: '1000000',
            RATE_LIMIT_SIGNIN_CHECKS: '1000000',
            PLAN_FREE_MAX_SITES: String(SITES * 2 + 100),
            PLAN_FREE_MAX_FILE_SIZE_BYTES: String(1024 * MB),
            PLAN_FREE_MAX_STORAGE_BYTES: String(100 * 1024 * MB),
          },
        });
      let service: Service = await start();
      pids.push(service.pid);
      current = service;
      const stopService = () => service.stop(profDir ? 60_000 : 5000);
      cleanup.push(`${mode} service`, () => stopService());
      const pin = async () => {
        if (PIN) await pinToCpu(service.pid, SERVER_CPU);
      };
      await pin();
      const rss = new RssSampler(() => service.pid);
      cleanup.push(`${mode} RSS sampler`, async () => rss.stop());
      const hostOf = (slug: string) => `${slug}.localhost:${port}`;
      const m: Record<string, unknown> = {};
      report.modes[mode] = m;

      // Accounts: one (single) or one per SITES_PER_ACCOUNT sites, signed in before the block that needs it
      // (sign-in is not part of the publish rate).
      const clients: Client[] = [];
      let signInS = 0;
      const accountOf = (i: number) => (mode === 'single' ? 0 : Math.floor(i / SITES_PER_ACCOUNT));
      const ensureAccounts = async (upTo: number) => {
        const t0 = performance.now();
        for (let a = clients.length; a <= accountOf(upTo - 1); a++) {
          const key = await signIn(service.url, dataDir, `bench-${a}@example.com`);
          const client = new Client(service.url, key, clients[0]?.agent);
          clients.push(client);
        }
        signInS += (performance.now() - t0) / 1000;
      };
      cleanup.push(`${mode} clients`, async () => clients[0]?.close());
      const clientFor = (i: number) => clients[accountOf(i)]!;

      // Hot sites first (untimed), and their figures while they are all the node has.
      const measure = (
        spec: Omit<LoadSpec, 'connections' | 'durationS' | 'serverPids' | 'url'>,
        durationS = DURATION_S,
      ) =>
        load.run({
          url: `${service.url}/`,
          connections: CONNECTIONS,
          durationS,
          serverPids: [service.pid],
          // Visitors' traffic: with a browser's User-Agent every page view is counted for analytics and its
          // visitor hashed (issue 25: memory with 100,000 sites receiving traffic).
          headers: { 'User-Agent': BROWSER_UA },
          ...spec,
        });
      await ensureAccounts(HOT_SITES);
      const slugs = await seedSites(clientFor, HOT_SITES, PARALLEL);
      const hotHosts = slugs.map(hostOf);
      const hotFew: LoadResult[] = [];
      if (serving) {
        rss.enter(`hot at ${HOT_SITES}`);
        await warmHosts(clients[0]!, hotHosts, PARALLEL);
        await measure({ hosts: hotHosts }, WARMUP_S);
        for (let r = 0; r < ROUNDS; r++) hotFew.push(await measure({ hosts: hotHosts }));
        log(`hot at ${HOT_SITES} sites: ${hotFew.map((x) => int(x.rps)).join(', ')} req/s`);
      }

      // Publish up to N in blocks.
      rss.enter('publish');
      const blocks: Block[] = [];
      const publishStart = performance.now();
      for (let done = HOT_SITES; done < SITES; ) {
        const upTo = Math.min(SITES, (Math.floor(done / BLOCK) + 1) * BLOCK);
        await ensureAccounts(upTo);
        rss.enter(`publish to ${upTo}`);
        const t0 = performance.now();
        const more = await seedSites(clientFor, upTo - done, PARALLEL, undefined, done);
        const seconds = (performance.now() - t0) / 1000;
        slugs.push(...more);
        const block: Block = {
          upTo,
          sites: upTo - done,
          seconds,
          sitesPerS: (upTo - done) / seconds,
          rssMB: rss.enter('publish'),
        };
        blocks.push(block);
        done = upTo;
        log(
          `${mode}: ${upTo}/${SITES} sites, block ${block.sitesPerS.toFixed(0)} sites/s, RSS ${block.rssMB.toFixed(0)} MB, ${uptime()}`,
        );
      }
      const publishS = (performance.now() - publishStart) / 1000;
      const first = blocks[0]!;
      const rest = blocks.slice(1);
      const restRate = rest.reduce((s, b) => s + b.sites, 0) / rest.reduce((s, b) => s + b.seconds, 0);
      const lastRate = blocks[blocks.length - 1]!.sitesPerS;
      Object.assign(m, {
        accounts: clients.length,
        signInS,
        publishS,
        blocks,
        firstBlockSitesPerS: first.sitesPerS,
        laterSitesPerS: restRate,
        lastBlockSitesPerS: lastRate,
      });
      if (rest.length > 0) {
        const value = restRate / first.sitesPerS;
        results.push({
          what: `publish rate ${first.upTo}th -> ${SITES}th / to ${first.upTo}th (${mode === 'single' ? 'one account' : `${clients.length} accounts`})`,
          value: `${ratio(value)} (${restRate.toFixed(0)} / ${first.sitesPerS.toFixed(0)} sites/s; last block ${lastRate.toFixed(0)})`,
          target: `>= ${TARGETS.publishRate}x`,
          pass: value >= TARGETS.publishRate,
        });
      }

      if (serving) {
        // Sites no request has named yet: half for the live node, half for after the restart.
        const pool = slugs.slice(HOT_SITES);
        const coldLive = takeRandom(pool, Math.min(COLD_SITES, Math.floor(pool.length / 4))).map(hostOf);
        const coldRestart = takeRandom(pool, Math.min(COLD_SITES + 1, Math.floor(pool.length / 4))).map(
          hostOf,
        );
        const spreadHosts = [...hotHosts, ...pool.map(hostOf)];

        rss.enter('cold (live)');
        const live = await coldFirstBytes(service.url, coldLive);
        m.coldLive = live;
        log(`cold first byte (live node): p50 ${ms(live.p50Ms)} ms, p99 ${ms(live.p99Ms)} ms`);

        // The hot sites while the other N - 10 sites exist but have not been asked for since they were
        // published (most of a public instance's sites, most of the time): what the issue's "hot-site
        // req/s at 100,000 sites" is about. The rounds between spread rounds below measure the hot sites
        // of a node that has just served every site (and writes all their visit counts each minute).
        rss.enter(`hot at ${SITES}, before any spread`);
        await warmHosts(clients[0]!, hotHosts, PARALLEL);
        await measure({ hosts: hotHosts }, WARMUP_S);
        const hotBefore: LoadResult[] = [];
        for (let r = 0; r < ROUNDS; r++) hotBefore.push(await measure({ hosts: hotHosts }));
        log(`hot at ${SITES} sites, before any spread: ${hotBefore.map((x) => int(x.rps)).join(', ')} req/s`);

        rss.enter('hot and spread');
        // The spread is measured at its steady state, as the hot sites are once warm: every site requested
        // once, then the random spread until the share of requests the fast path's memo answers stops
        // rising (three windows in a row within 2 points), or for at most SPREAD_WARMUP_MAX_S: the cache
        // settles on what the traffic reuses only after a few passes over N sites. The share is read, not
        // the rate, which the minute's analytics flush moves. The windows are reported (the cold start of
        // a spread shows in them).
        const memoHits = async () => {
          const text = await (await fetch(`${service.url}/metrics`)).text();
          return Number(/slipway_site_fast_path_memo_hits_total (\d+)/.exec(text)?.[1] ?? Number.NaN);
        };
        const warmStarted = performance.now();
        await warmHosts(clients[0]!, spreadHosts, PARALLEL);
        const spreadWarmup: Array<LoadResult & { memoShare: number }> = [];
        const touchedS = (performance.now() - warmStarted) / 1000;
        log(`spread warm-up: every site once in ${touchedS.toFixed(1)} s; RSS ${rss.sample().toFixed(0)} MB`);
        while ((performance.now() - warmStarted) / 1000 < SPREAD_WARMUP_MAX_S) {
          const hits0 = await memoHits();
          const w = await measure({ hosts: spreadHosts, pick: 'random' }, SPREAD_WARMUP_WINDOW_S);
          const memoShare = ((await memoHits()) - hits0) / w.requests;
          spreadWarmup.push({ ...w, memoShare });
          log(
            `spread warm-up window: ${int(w.rps)} req/s, p99 ${ms(w.p99Ms)} ms, ${(memoShare * 100).toFixed(1)} % from the memo; RSS ${rss.sample().toFixed(0)} MB`,
          );
          const last = spreadWarmup.slice(-3).map((x) => x.memoShare);
          if (last.length === 3 && Math.max(...last) - Math.min(...last) <= 0.02) break;
        }
        m.spreadWarmup = { touchS: touchedS, windows: spreadWarmup };
        const hotMany: LoadResult[] = [];
        const spread: LoadResult[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const order = r % 2 === 0 ? ['hot', 'spread'] : ['spread', 'hot'];
          for (const which of order) {
            if (which === 'hot') hotMany.push(await measure({ hosts: hotHosts }));
            else spread.push(await measure({ hosts: spreadHosts, pick: 'random' }));
          }
          log(
            `round ${r + 1}/${ROUNDS}: hot ${int(hotMany[r]!.rps)}, spread ${int(spread[r]!.rps)} req/s; RSS ${rss.sample().toFixed(0)} MB; ${uptime()}`,
          );
        }
        const few = summarise(hotFew);
        const hot = summarise(hotMany);
        const hotIdle = summarise(hotBefore);
        const spr = summarise(spread);
        Object.assign(m, {
          hotBeforeSpread: hotIdle,
          hotFew: few,
          hotMany: hot,
          spread: spr,
          hotFewRounds: hotFew,
          hotManyRounds: hotMany,
          spreadRounds: spread,
        });
        const line = (s: Summary) => `${int(s.rps)} req/s, p99 ${ms(s.p99Ms)} ms`;
        // A round that answered nothing is a failed measurement, never a pass (its ratios are 0 or infinite).
        const answered = (...all: Summary[]) => all.every((s) => s.rps > 0);
        results.push(
          {
            what: `hot req/s at ${SITES} (before any spread) / at ${HOT_SITES} sites`,
            value: `${ratio(hotIdle.rps / few.rps)} (${line(hotIdle)} / ${line(few)})`,
            target: `>= ${TARGETS.hotRps}x`,
            pass: answered(hotIdle, few) && hotIdle.rps / few.rps >= TARGETS.hotRps,
          },
          {
            what: `hot p99 at ${SITES} (before any spread) / at ${HOT_SITES} sites`,
            value: ratio(hotIdle.p99Ms / few.p99Ms),
            target: `<= ${TARGETS.hotP99}x`,
            pass: answered(hotIdle, few) && hotIdle.p99Ms / few.p99Ms <= TARGETS.hotP99,
          },
        );
        results.push({
          what: `hot req/s at ${SITES} (rounds between spread rounds) / at ${HOT_SITES} sites`,
          value: `${ratio(hot.rps / few.rps)} (${line(hot)} / ${line(few)})`,
          target: `>= ${TARGETS.hotRps}x`,
          pass: answered(hot, few) && hot.rps / few.rps >= TARGETS.hotRps,
        });
        results.push({
          what: `hot p99 at ${SITES} (rounds between spread rounds) / at ${HOT_SITES} sites`,
          value: ratio(hot.p99Ms / few.p99Ms),
          target: `<= ${TARGETS.hotP99}x`,
          pass: answered(hot, few) && hot.p99Ms / few.p99Ms <= TARGETS.hotP99,
        });
        results.push({
          what: `spread (random site per request) at ${SITES} / hot`,
          value: `${ratio(spr.rps / hot.rps)} (${line(spr)}; ${spr.errors + spr.badStatus} errors)`,
          target: `>= ${TARGETS.spreadVsHot}x`,
          pass:
            answered(spr, hot) &&
            spr.rps / hot.rps >= TARGETS.spreadVsHot &&
            spr.errors + spr.badStatus === 0,
        });

        // Restart: the first site answer of a fresh process on the same data, then cold first bytes.
        rss.enter('restart');
        await stopService();
        const t0 = performance.now();
        service = await start();
        pids.push(service.pid);
        current = service;
        const healthyS = (performance.now() - t0) / 1000;
        const firstAnswer = await timeToFirstByte(service.url, coldRestart[0]!);
        const restartS = (performance.now() - t0) / 1000;
        await pin();
        m.restart = {
          healthyS,
          firstSiteAnswerS: restartS,
          status: firstAnswer.status,
          rssMB: rssMB(service.pid),
        };
        log(
          `restart: /healthz after ${healthyS.toFixed(2)} s, first site answer (${firstAnswer.status}) after ${restartS.toFixed(2)} s`,
        );
        results.push({
          what: 'restart -> first site answer',
          value: `${restartS.toFixed(2)} s (healthz ${healthyS.toFixed(2)} s)`,
          target: `<= ${TARGETS.restartS} s`,
          pass: restartS <= TARGETS.restartS && firstAnswer.status === 200,
        });
        rss.enter('cold (after restart)');
        const fresh = await coldFirstBytes(service.url, coldRestart.slice(1));
        m.coldAfterRestart = fresh;
        log(`cold first byte (after restart): p50 ${ms(fresh.p50Ms)} ms, p99 ${ms(fresh.p99Ms)} ms`);
        for (const [what, c] of [
          ['live node', live],
          ['after restart', fresh],
        ] as const) {
          results.push({
            what: `cold site first byte p99, ${what} (${c.sites} sites, fresh connections)`,
            value: `${ms(c.p99Ms)} ms (p50 ${ms(c.p50Ms)}, max ${ms(c.maxMs)}; ${c.non200} not 200)`,
            target: `< ${TARGETS.coldP99Ms} ms`,
            pass: c.p99Ms < TARGETS.coldP99Ms && c.non200 === 0,
          });
        }
        rss.enter('spread (after restart)');
        const after = await measure({ hosts: spreadHosts, pick: 'random' });
        m.spreadAfterRestart = after;
        log(`spread after restart: ${int(after.rps)} req/s, p99 ${ms(after.p99Ms)} ms`);
      }
      rss.enter('end');
      rss.stop();
      const rssPhases = Object.fromEntries(rss.phases);
      m.rssMB = rssPhases;
      const maxRss = rss.max();
      results.push({
        what: `service RSS, largest sample of every phase (${mode})`,
        value: `${maxRss.toFixed(0)} MB`,
        target: `<= ${CACHE_MB + TARGETS.rssOverCacheMB} MB`,
        pass: maxRss <= CACHE_MB + TARGETS.rssOverCacheMB,
      });
      await stopService();
      // Each mode starts from nothing; the next one needs the disk less than this one's data.
      await rm(dataDir, { recursive: true, force: true });
    }
    report.loadAverage.after = loadavg();

    console.log('');
    console.log(
      `${SITES} sites on one node (${report.service.mode}, WORKERS=1, SERVE_CACHE_MB=${CACHE_MB}, ${load.description}, ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s; medians)`,
    );
    console.log(
      `load average ${report.loadAverage.before.map((l: number) => l.toFixed(2)).join(' ')} -> ${report.loadAverage.after.map((l: number) => l.toFixed(2)).join(' ')} on ${cpus().length} cores (a shared machine: the figures are noisy when it is busy; rounds with others' CPU > ${NOISY_OTHER_CPU_PCT} % are left out of medians when enough are quiet)`,
    );
    for (const mode of MODES) {
      const m = report.modes[mode];
      console.log('');
      console.log(
        `publish, ${mode === 'single' ? 'one account' : `${m.accounts} accounts`} (${PARALLEL} in parallel, create + upload + finalize of a 1 KB page)`,
      );
      printTable([
        ['  sites', 'block', 'sites/s', 'RSS MB'],
        ...(m.blocks as Block[]).map((b) => [
          `  ${b.upTo}`,
          String(b.sites),
          b.sitesPerS.toFixed(0),
          b.rssMB.toFixed(0),
        ]),
      ]);
      console.log(
        `  RSS by phase (MB): ${Object.entries(m.rssMB as Record<string, number>)
          .map(([k, v]) => `${k} ${v.toFixed(0)}`)
          .join(', ')}`,
      );
    }
    console.log('');
    printTable([
      ['  what', 'measured', 'target', ''],
      ...results.map((r) => [`  ${r.what}`, r.value, r.target, mark(r.pass)]),
    ]);
    report.results = results;
  } catch (err) {
    if (current)
      log(
        `--- service output (last lines) ---\n${current.output().trim().split('\n').slice(-40).join('\n')}`,
      );
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cleanup.run();
  }

  if (profDir) {
    const profiles: ProfileSummary[] = [];
    const ours = new Set(pids.map(String));
    for (const name of await readdir(profDir)) {
      if (!name.endsWith('.cpuprofile')) continue;
      const path = join(profDir, name);
      if ((await stat(path)).mtimeMs < started || !ours.has(name.split('.')[3] ?? '')) continue;
      const s = await summariseProfile(path, 25);
      console.log('');
      printProfile(s, (l) => console.log(l));
      profiles.push(s);
    }
    report.profiles = profiles;
  }
  report.totalS = (Date.now() - started) / 1000;
  await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
  await writeFile(join(REPO_ROOT, 'bench', 'out', 'sites.json'), `${JSON.stringify(report, null, 2)}\n`);
  log(`wrote bench/out/sites.json (${report.totalS.toFixed(0)} s in all)`);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
