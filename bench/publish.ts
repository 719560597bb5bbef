// `npm run bench:publish`: publish throughput and upload memory against DESIGN.md "Performance targets", on
// the embedded set and the scale-out set (PostgreSQL + S3 via s3rver + Redis) side by side, rounds
// interleaved so both see the same machine:
// (1) 1000 files / 50 MB with 16 parallel uploads, create -> uploads -> finalize, a fresh site per round;
// (2) re-publish of that site with one changed file (hashes given: one upload) -> finalize;
//     (1) and (2) with two sets of files, in the same interleaved rounds, reported as separate rows:
//     binary (random bytes, application/octet-stream, which the secret scan skips) and text (generated
//     .html/.js/.css/.json/.map/.svg/.md of the same sizes, which finalize scans; bench/scan.ts's seeded
//     generator, no secrets in it), so the scan's cost shows as the difference;
// (1b) the same 1000 files / 50 MB as one archive deploy (POST /api/v1/publish/archive: a tar.gz, one
//     request), in the same rounds: the tar.gz is made before the clock starts, as the three-step flow's
//     hashes are (issue 24: the archive should be faster);
// (3) server RSS growth while one 200 MB file streams in, and while a 200 MB archive (four 50 MB files of
//     random bytes, tar.gz made as it is sent) streams in;
// (4) one account publishing many one-file sites, 16 at a time: the rate up to the 1,000th site and from
//     the 1,000th on (issue 9: publishing must not slow down as an account grows).
// Options: `-- --backend embedded|scaleout` runs one set; `-- --sites N` (default 5000, 0 skips (4));
// `-- --rounds N` (default 5); `-- --files binary|text|both` (default both) chooses the sets of (1) and (2).
// Prints a table, writes bench/out/publish.json.

import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { ARCHIVE_GZIP_LEVEL, tarStream } from '../src/client/archive.js';
import { Client, type LocalFile, manifestOf, sha256 } from './lib/client.js';
import { type Backend, type BackendName, embeddedBackend, scaleoutBackend } from './lib/serve-backends.js';
import { freePort, preferredMode, REPO_ROOT, type Service, signIn, startService } from './lib/service.js';
import { type Stats, stats } from './lib/stats.js';
import { pickTextKind, seeded, TEXT_CONTENT_TYPES, type TextKind, textFile } from './scan.js';

const ROUNDS = 5;
const FILES = 1000;
const TOTAL_BYTES = 50 * 1024 * 1024;
const PARALLEL = 16;
const BIG_FILE_BYTES = 200 * 1024 * 1024;
const BIG_CHUNK_BYTES = 64 * 1024;
const RSS_SAMPLE_MS = 20;
const MB = 1024 * 1024;
const CLOCK_TICKS_PER_S = 100;

/** Seeds of the text sets: site r's file i and its re-publish's changed file (distinct per round and run). */
const TEXT_SEED = 0x7e47_0000;
const textSeed = (round: number, n: number) => (TEXT_SEED + (round + 2) * 0x10000 + n) >>> 0;

type FileSet = 'binary' | 'text';
const FILE_SETS: readonly FileSet[] = ['binary', 'text'];

const SITES_DEFAULT = 5000;
/** The many-sites run reports the rate before and after this many sites. */
const SITES_SPLIT = 1000;

const TARGETS = {
  publishS: 3,
  republishS: 0.5,
  rssGrowthMB: 64,
  /** Scale-out publish time over embedded, same run (issue 9: 1.5; issue 23: 1.3). */
  scaleoutRatio: 1.3,
  /** Publish rate after SITES_SPLIT sites over the rate before it (issue 9: within 10 %). */
  sitesRateRatio: 0.9,
};

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** 1000 random files whose sizes vary from ~10 KB to ~90 KB and add up to exactly 50 MB. */
function makeSite(round: number): LocalFile[] {
  const weights = Array.from({ length: FILES }, () => 0.2 + Math.random() * 1.6);
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((w / sum) * TOTAL_BYTES)));
  sizes[0]! += TOTAL_BYTES - sizes.reduce((a, b) => a + b, 0);
  return sizes.map((size, i) => {
    const bytes = randomBytes(size);
    const path = i === 0 ? 'index.html' : `r${round}/dir-${i % 20}/file-${i}.bin`;
    const contentType = i === 0 ? 'text/html; charset=utf-8' : 'application/octet-stream';
    return { path, size, contentType, hash: sha256(bytes), bytes };
  });
}

/**
 * The same shape as makeSite (1000 files of ~10 KB to ~90 KB, exactly 50 MB), as text the secret scan
 * reads: generated .html/.js/.css/.json/.map/.svg/.md with their content types, the same for the same round.
 */
function makeTextSite(round: number): LocalFile[] {
  const random = seeded(textSeed(round, 0xffff));
  const weights = Array.from({ length: FILES }, () => 0.2 + random() * 1.6);
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((w / sum) * TOTAL_BYTES)));
  sizes[0]! += TOTAL_BYTES - sizes.reduce((a, b) => a + b, 0);
  return sizes.map((size, i) => {
    const kind: TextKind = i === 0 ? 'html' : pickTextKind(random);
    const bytes = textFile(kind, size, textSeed(round, i));
    const path = i === 0 ? 'index.html' : `t${round}/dir-${i % 20}/file-${i}.${kind}`;
    return { path, size, contentType: TEXT_CONTENT_TYPES[kind], hash: sha256(bytes), bytes };
  });
}

/** New bytes for a changed file of a set: random for binary, regenerated text of the same kind for text. */
function changedBytes(set: FileSet, old: LocalFile, seed: number): Buffer {
  if (set === 'binary') return randomBytes(old.size);
  const kind = (
    old.path.endsWith('.min.js') ? 'min.js' : old.path.slice(old.path.lastIndexOf('.') + 1)
  ) as TextKind;
  return textFile(kind, old.size, seed);
}

/** Deterministic pseudo-random bytes (AES-CTR keystream), produced chunk by chunk, never held whole. */
async function* bigBody(seed: Buffer, size: number): AsyncGenerator<Buffer> {
  const cipher = createCipheriv('aes-128-ctr', seed, Buffer.alloc(16));
  const zeros = Buffer.alloc(BIG_CHUNK_BYTES);
  for (let sent = 0; sent < size; sent += BIG_CHUNK_BYTES) {
    const n = Math.min(BIG_CHUNK_BYTES, size - sent);
    yield cipher.update(n === BIG_CHUNK_BYTES ? zeros : zeros.subarray(0, n));
  }
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** User + system CPU seconds of a process so far (/proc/<pid>/stat, clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

interface PublishRound {
  totalS: number;
  createS: number;
  uploadsS: number;
  finalizeS: number;
  putP50Ms: number;
  putP99Ms: number;
  /** CPU the server process spent during the uploads, per upload request. */
  serverCpuPerPutMs: number;
  /** CPU of this (client) process during the uploads, per upload request. */
  clientCpuPerPutMs: number;
}

interface RepublishRound {
  totalS: number;
  updateS: number;
  uploadS: number;
  finalizeS: number;
}

async function publishRound(
  client: Client,
  pid: number,
  files: LocalFile[],
): Promise<{ slug: string; round: PublishRound }> {
  const bytes = new Map(files.map((f) => [f.path, f.bytes]));
  const putMs: number[] = [];
  const t0 = performance.now();
  const pub = await client.create(manifestOf(files));
  const t1 = performance.now();
  const serverCpu0 = cpuSeconds(pid);
  const clientCpu0 = process.cpuUsage();
  const starts = new Map<string, number>();
  const results = await client.uploadAll(
    pub.upload.uploads,
    (p) => {
      starts.set(p, performance.now());
      return bytes.get(p)!;
    },
    PARALLEL,
    { onDone: (p) => putMs.push(performance.now() - starts.get(p)!) },
  );
  const t2 = performance.now();
  const serverCpuS = cpuSeconds(pid) - serverCpu0;
  const clientCpu = process.cpuUsage(clientCpu0);
  const puts = pub.upload.uploads.length;
  for (const [path, status] of results)
    if (status !== 200) throw new Error(`upload of ${path}: ${String(status)}`);
  const fin = await client.finalize(pub.slug, pub.upload.versionId);
  const t3 = performance.now();
  if (fin.status !== 200) throw new Error(`finalize answered ${fin.status}: ${fin.text}`);
  return {
    slug: pub.slug,
    round: {
      totalS: (t3 - t0) / 1000,
      createS: (t1 - t0) / 1000,
      uploadsS: (t2 - t1) / 1000,
      finalizeS: (t3 - t2) / 1000,
      putP50Ms: percentile(putMs, 50),
      putP99Ms: percentile(putMs, 99),
      serverCpuPerPutMs: (serverCpuS * 1000) / puts,
      clientCpuPerPutMs: (clientCpu.user + clientCpu.system) / 1000 / puts,
    },
  };
}

interface ArchiveRound {
  totalS: number;
  /** Size of the tar.gz sent. */
  archiveMB: number;
}

/** The gzip of the tar of `files` (made before timing, as the three-step flow's hashes are). */
async function archiveOf(files: LocalFile[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const gz = Readable.from(
    tarStream(files.map((f) => ({ path: f.path, size: f.size, bytes: f.bytes }))),
  ).pipe(createGzip({ level: ARCHIVE_GZIP_LEVEL }));
  for await (const chunk of gz) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** One archive deploy of a new site: POST /api/v1/publish/archive, the whole publish in one request. */
async function archiveRound(client: Client, archive: Buffer): Promise<ArchiveRound> {
  const t0 = performance.now();
  const res = await client.raw(
    'POST',
    `${client.base}/api/v1/publish/archive`,
    {
      authorization: `Bearer ${client.key}`,
      'content-type': 'application/gzip',
      'content-length': archive.length,
    },
    archive,
  );
  const t1 = performance.now();
  if (res.status !== 201) throw new Error(`archive deploy answered ${res.status}: ${res.body.toString()}`);
  return { totalS: (t1 - t0) / 1000, archiveMB: archive.length / MB };
}

/** Server RSS growth while a 200 MB archive (four 50 MB random files, gzipped as sent) streams in. */
async function bigArchive(client: Client, pid: number) {
  const parts = 4;
  const seed = randomBytes(16);
  const files = Array.from({ length: parts }, (_, i) => ({
    path: `big-${i}.bin`,
    size: BIG_FILE_BYTES / parts,
    body: () => bigBody(Buffer.from(seed.map((b) => b ^ i)), BIG_FILE_BYTES / parts),
  }));
  const before: number[] = [];
  for (let i = 0; i < 15; i++) {
    before.push(rssBytes(pid));
    await new Promise((r) => setTimeout(r, RSS_SAMPLE_MS));
  }
  const baseline = stats(before).median;
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rssBytes(pid)), RSS_SAMPLE_MS);
  const t0 = performance.now();
  const body = Readable.from(tarStream(files)).pipe(createGzip({ level: ARCHIVE_GZIP_LEVEL }));
  const res = await client.raw(
    'POST',
    `${client.base}/api/v1/publish/archive`,
    {
      authorization: `Bearer ${client.key}`,
      'content-type': 'application/gzip',
      'transfer-encoding': 'chunked',
    },
    body,
  );
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  samples.push(rssBytes(pid));
  if (res.status !== 201) throw new Error(`200 MB archive answered ${res.status}: ${res.body.toString()}`);
  const peak = Math.max(...samples);
  return {
    baselineMB: baseline / MB,
    peakMB: peak / MB,
    growthMB: (peak - baseline) / MB,
    samples: samples.length,
    seconds,
    throughputMBps: BIG_FILE_BYTES / MB / seconds,
  };
}

async function republishRound(
  client: Client,
  slug: string,
  files: LocalFile[],
  change: (old: LocalFile) => Buffer,
): Promise<RepublishRound> {
  const i = 1 + Math.floor(Math.random() * (files.length - 1));
  const old = files[i]!;
  const bytes = change(old);
  const changed = [...files];
  changed[i] = { ...old, hash: sha256(bytes), bytes };
  const t0 = performance.now();
  const pub = await client.update(slug, manifestOf(changed));
  const t1 = performance.now();
  if (pub.upload.uploads.length !== 1)
    throw new Error(`update asked for ${pub.upload.uploads.length} uploads, not 1`);
  const put = await client.put(pub.upload.uploads[0]!, bytes, bytes.length);
  const t2 = performance.now();
  if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${put.text}`);
  const fin = await client.finalize(slug, pub.upload.versionId);
  const t3 = performance.now();
  if (fin.status !== 200) throw new Error(`finalize answered ${fin.status}: ${fin.text}`);
  return {
    totalS: (t3 - t0) / 1000,
    updateS: (t1 - t0) / 1000,
    uploadS: (t2 - t1) / 1000,
    finalizeS: (t3 - t2) / 1000,
  };
}

async function bigUpload(client: Client, pid: number) {
  const seed = randomBytes(16);
  const hasher = createHash('sha256');
  for await (const chunk of bigBody(seed, BIG_FILE_BYTES)) hasher.update(chunk);
  const hash = hasher.digest('hex');
  const pub = await client.create([
    { path: 'big.bin', size: BIG_FILE_BYTES, contentType: 'application/octet-stream', hash },
  ]);

  // Baseline: the idle server just before the upload.
  const before: number[] = [];
  for (let i = 0; i < 15; i++) {
    before.push(rssBytes(pid));
    await new Promise((r) => setTimeout(r, RSS_SAMPLE_MS));
  }
  const baseline = stats(before).median;
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rssBytes(pid)), RSS_SAMPLE_MS);
  const t0 = performance.now();
  const put = await client.put(pub.upload.uploads[0]!, bigBody(seed, BIG_FILE_BYTES), BIG_FILE_BYTES);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  samples.push(rssBytes(pid));
  if (put.status !== 200) throw new Error(`200 MB upload answered ${put.status}: ${put.text}`);
  const fin = await client.finalize(pub.slug, pub.upload.versionId);
  if (fin.status !== 200) throw new Error(`finalize answered ${fin.status}: ${fin.text}`);
  const peak = Math.max(...samples);
  return {
    baselineMB: baseline / MB,
    peakMB: peak / MB,
    growthMB: (peak - baseline) / MB,
    samples: samples.length,
    seconds,
    throughputMBps: BIG_FILE_BYTES / MB / seconds,
  };
}

/** One account publishes `count` one-file sites, `PARALLEL` at a time; rates before and after SITES_SPLIT. */
async function manySites(client: Client, count: number) {
  const done: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const bytes = Buffer.from(`<h1>site ${i}</h1>${randomBytes(8).toString('hex')}`);
      const file: LocalFile = {
        path: 'index.html',
        size: bytes.length,
        contentType: 'text/html',
        hash: sha256(bytes),
        bytes,
      };
      const pub = await client.create(manifestOf([file]));
      const put = await client.put(pub.upload.uploads[0]!, bytes, bytes.length);
      if (put.status !== 200) throw new Error(`upload answered ${put.status}: ${put.text}`);
      const fin = await client.finalize(pub.slug, pub.upload.versionId);
      if (fin.status !== 200) throw new Error(`finalize answered ${fin.status}: ${fin.text}`);
      done.push(performance.now() - t0);
      if (done.length % 1000 === 0) process.stderr.write(`  ${done.length} sites\n`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  done.sort((a, b) => a - b);
  const splitAt = done[Math.min(SITES_SPLIT, count) - 1]!;
  const end = done[count - 1]!;
  const before = (Math.min(SITES_SPLIT, count) / splitAt) * 1000;
  const after = count > SITES_SPLIT ? ((count - SITES_SPLIT) / (end - splitAt)) * 1000 : Number.NaN;
  return {
    sites: count,
    ratePerS: { upToSplit: before, afterSplit: after },
    ratio: after / before,
    seconds: end / 1000,
  };
}

const fmt = (n: number, digits = 3) => n.toFixed(digits);

interface Run {
  backend: Backend;
  service: Service;
  client: Client;
  dataDir: string;
  /** Per set of files: the publish and re-publish of every round. */
  sets: Record<
    FileSet,
    { publishes: PublishRound[]; republishes: RepublishRound[]; archives: ArchiveRound[] }
  >;
  memory?: Awaited<ReturnType<typeof bigUpload>>;
  archiveMemory?: Awaited<ReturnType<typeof bigArchive>>;
  sites?: Awaited<ReturnType<typeof manySites>>;
}

function parseArgs(argv: string[]): {
  backends: BackendName[];
  sites: number;
  rounds: number;
  files: readonly FileSet[];
} {
  let backends: BackendName[] = ['embedded', 'scaleout'];
  let sites = SITES_DEFAULT;
  let rounds = ROUNDS;
  let files: readonly FileSet[] = FILE_SETS;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--backend' && (argv[i + 1] === 'embedded' || argv[i + 1] === 'scaleout')) {
      backends = [argv[++i] as BackendName];
    } else if (arg === '--sites' && /^\d+$/.test(argv[i + 1] ?? '')) {
      sites = Number(argv[++i]);
    } else if (arg === '--rounds' && /^\d+$/.test(argv[i + 1] ?? '')) {
      rounds = Number(argv[++i]);
    } else if (arg === '--files' && /^(?:binary|text|both)$/.test(argv[i + 1] ?? '')) {
      const set = argv[++i];
      files = set === 'both' ? FILE_SETS : [set as FileSet];
    } else {
      throw new Error(
        `unknown argument ${arg}; use --backend embedded|scaleout, --sites N, --rounds N, --files binary|text|both`,
      );
    }
  }
  return { backends, sites, rounds, files };
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const mode = preferredMode();
  const runs: Run[] = [];
  const cleanup = async () => {
    for (const run of runs) {
      run.client.close();
      await run.service.stop();
      await run.backend.release();
      await rm(run.dataDir, { recursive: true, force: true });
    }
  };
  const onSignal = () => {
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (const name of opts.backends) {
      const backend = name === 'embedded' ? embeddedBackend() : await scaleoutBackend();
      const dataDir = await mkdtemp(join(tmpdir(), `slipway-bench-publish-${name}-`));
      let service: Service;
      try {
        service = await startService({
          dataDir,
          port: await freePort(),
          mode,
          // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops.
          nodeArgs: process.env.BENCH_CPU_PROF
            ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
            : [],
          env: {
            ...backend.env,
            PLAN_FREE_MAX_FILE_SIZE_BYTES: String(1024 * MB),
            PLAN_FREE_MAX_STORAGE_BYTES: String(100 * 1024 * MB),
            PLAN_FREE_MAX_SITES: '100000',
          },
        });
      } catch (err) {
        await backend.release();
        throw err;
      }
      const key = await signIn(service.url, dataDir, 'bench@example.com');
      runs.push({
        backend,
        service,
        client: new Client(service.url, key),
        dataDir,
        sets: {
          binary: { publishes: [], republishes: [], archives: [] },
          text: { publishes: [], republishes: [], archives: [] },
        },
      });
      process.stderr.write(`${name}: ${mode} (pid ${service.pid}) on ${backend.summary}\n`);
    }
    const loadBefore = loadavg()[0]!;
    if (loadBefore > cpus().length / 2) {
      process.stderr.write(
        `warning: load ${fmt(loadBefore, 2)}; client and servers share the cores, figures will be noisy\n`,
      );
    }

    const makeFiles = (set: FileSet, round: number) =>
      set === 'binary' ? makeSite(round) : makeTextSite(round);
    // Warm-up: one small publish each (of each set: the scan's first use too) so JIT and first-use costs
    // stay out of the figures.
    for (const set of opts.files) {
      for (const run of runs)
        await publishRound(run.client, run.service.pid, makeFiles(set, -1).slice(0, 50));
    }
    for (let r = 0; r < opts.rounds; r++) {
      for (const set of opts.files) {
        const files = makeFiles(set, r);
        // The archive's files are other paths of the same bytes: a new site of the same account whose
        // blobs are stored already would be unfair to neither flow (both store every file again).
        const archive = await archiveOf(files.map((f) => ({ ...f, path: `a/${f.path}` })));
        for (const [k, run] of runs.entries()) {
          const { publishes, republishes, archives } = run.sets[set];
          const { slug, round } = await publishRound(run.client, run.service.pid, files);
          publishes.push(round);
          archives.push(await archiveRound(run.client, archive));
          const change = (old: LocalFile) => changedBytes(set, old, textSeed(r, FILES + k));
          republishes.push(await republishRound(run.client, slug, files, change));
          process.stderr.write(
            `round ${r + 1} ${run.backend.name} ${set}: publish ${fmt(round.totalS)} s, archive ${fmt(archives[r]!.totalS)} s, re-publish ${fmt(republishes[r]!.totalS)} s\n`,
          );
        }
      }
    }
    if (opts.rounds > 0) {
      for (const run of runs) {
        run.memory = await bigUpload(run.client, run.service.pid);
        run.archiveMemory = await bigArchive(run.client, run.service.pid);
      }
    }
    if (opts.sites > 0) {
      for (const run of runs) {
        process.stderr.write(`${run.backend.name}: publishing ${opts.sites} one-file sites\n`);
        run.sites = await manySites(run.client, opts.sites);
      }
    }

    type Row = string[];
    const labels = runs.map((r) => r.backend.name);
    const rows: Row[] = [['what', ...labels.map((l) => `${l} median (min-max)`), 'target', 'ok']];
    const range = (st: Stats, d = 3) => `${fmt(st.median, d)} (${fmt(st.min, d)}-${fmt(st.max, d)})`;
    const verdict = (ok: boolean[]) => (ok.every(Boolean) ? 'yes' : 'NO');
    const setLabels: Record<FileSet, { publish: string; republish: string }> = {
      binary: {
        publish: 'publish 1000 files / 50 MB, 16 parallel (s)',
        republish: 're-publish, one changed file (s)',
      },
      text: {
        publish: 'publish 1000 text files / 50 MB, 16 parallel (s)',
        republish: 're-publish, one changed text file (s)',
      },
    };
    if (opts.rounds > 0) {
      for (const set of opts.files) {
        const publishStats = runs.map((r) => stats(r.sets[set].publishes.map((p) => p.totalS)));
        rows.push([
          setLabels[set].publish,
          ...publishStats.map((st) => range(st)),
          `<= ${TARGETS.publishS}`,
          verdict(publishStats.map((st) => st.median <= TARGETS.publishS)),
        ]);
        const archiveStats = runs.map((r) => stats(r.sets[set].archives.map((a) => a.totalS)));
        rows.push([
          `  archive deploy, the same ${set} files in one request (s)`,
          ...archiveStats.map((st) => range(st)),
          '< publish',
          verdict(archiveStats.map((st, i) => st.median < publishStats[i]!.median)),
        ]);
        for (const k of ['createS', 'uploadsS', 'finalizeS'] as const)
          rows.push([
            `  ${k.replace(/S$/, '')} (s)`,
            ...runs.map((r) => range(stats(r.sets[set].publishes.map((p) => p[k])))),
            '',
            '',
          ]);
        for (const [k, label] of [
          ['putP50Ms', '  one PUT, p50 latency (ms)'],
          ['putP99Ms', '  one PUT, p99 latency (ms)'],
          ['serverCpuPerPutMs', '  server CPU per PUT (ms)'],
          ['clientCpuPerPutMs', '  client CPU per PUT (ms)'],
        ] as const)
          rows.push([
            label,
            ...runs.map((r) => range(stats(r.sets[set].publishes.map((p) => p[k])), 2)),
            '',
            '',
          ]);
        const republishStats = runs.map((r) => stats(r.sets[set].republishes.map((p) => p.totalS)));
        rows.push([
          setLabels[set].republish,
          ...republishStats.map((st) => range(st)),
          `<= ${TARGETS.republishS}`,
          verdict(republishStats.map((st) => st.median <= TARGETS.republishS)),
        ]);
        rows.push([
          '  finalize (s)',
          ...runs.map((r) => range(stats(r.sets[set].republishes.map((p) => p.finalizeS)))),
          '',
          '',
        ]);
      }
      rows.push([
        '200 MB upload: RSS growth (MB)',
        ...runs.map((r) => `${fmt(r.memory!.growthMB, 1)} (${fmt(r.memory!.throughputMBps, 0)} MB/s)`),
        `< ${TARGETS.rssGrowthMB}`,
        verdict(runs.map((r) => r.memory!.growthMB < TARGETS.rssGrowthMB)),
      ]);
      rows.push([
        '200 MB archive deploy: RSS growth (MB)',
        ...runs.map(
          (r) => `${fmt(r.archiveMemory!.growthMB, 1)} (${fmt(r.archiveMemory!.throughputMBps, 0)} MB/s)`,
        ),
        `< ${TARGETS.rssGrowthMB}`,
        verdict(runs.map((r) => r.archiveMemory!.growthMB < TARGETS.rssGrowthMB)),
      ]);
    }
    if (opts.sites > 0) {
      rows.push([
        `${opts.sites} one-file sites: sites/s up to the ${SITES_SPLIT}th`,
        ...runs.map((r) => fmt(r.sites!.ratePerS.upToSplit, 1)),
        '',
        '',
      ]);
      rows.push([
        `  sites/s from the ${SITES_SPLIT}th on (ratio)`,
        ...runs.map((r) => `${fmt(r.sites!.ratePerS.afterSplit, 1)} (${fmt(r.sites!.ratio, 2)})`),
        `>= ${TARGETS.sitesRateRatio}`,
        verdict(runs.map((r) => r.sites!.ratio >= TARGETS.sitesRateRatio)),
      ]);
    }
    const embedded = runs.find((r) => r.backend.name === 'embedded');
    const scaleout = runs.find((r) => r.backend.name === 'scaleout');
    const scaleoutRatios: Partial<Record<FileSet, number>> = {};
    if (embedded && scaleout && opts.rounds > 0) {
      for (const set of opts.files) {
        const e = stats(embedded.sets[set].publishes.map((p) => p.totalS)).median;
        const so = stats(scaleout.sets[set].publishes.map((p) => p.totalS)).median;
        const ratio = so / e;
        scaleoutRatios[set] = ratio;
        rows.push([
          set === 'binary'
            ? 'publish: scale-out / embedded (medians)'
            : 'publish text: scale-out / embedded (medians)',
          fmt(ratio, 2),
          '',
          `<= ${TARGETS.scaleoutRatio}`,
          verdict([ratio <= TARGETS.scaleoutRatio]),
        ]);
      }
    }
    console.log(
      `(service: ${mode}; load average ${fmt(loadBefore, 2)} -> ${fmt(loadavg()[0]!, 2)} on ${cpus().length} cores)`,
    );
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
    for (const r of rows) {
      console.log(
        r
          .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : (cell ?? '').padStart(widths[c]!)))
          .join('  '),
      );
    }

    const out = {
      date: new Date().toISOString(),
      node: process.version,
      service: mode,
      cpus: cpus().length,
      loadAverage1m: { before: loadBefore, after: loadavg()[0]! },
      rounds: opts.rounds,
      files: opts.files,
      targets: TARGETS,
      scaleoutOverEmbedded: scaleoutRatios.binary ?? null,
      scaleoutOverEmbeddedText: scaleoutRatios.text ?? null,
      // `publish`/`republish`: the binary set (as before the text set existed); `...Text`: the text set.
      backends: runs.map((r) => {
        const ran = (set: FileSet) => opts.files.includes(set) && r.sets[set].publishes.length > 0;
        const publish = (set: FileSet) =>
          ran(set)
            ? {
                files: FILES,
                totalBytes: TOTAL_BYTES,
                parallel: PARALLEL,
                ...stats(r.sets[set].publishes.map((p) => p.totalS)),
                rounds: r.sets[set].publishes,
              }
            : null;
        const republish = (set: FileSet) =>
          ran(set)
            ? { ...stats(r.sets[set].republishes.map((p) => p.totalS)), rounds: r.sets[set].republishes }
            : null;
        const archive = (set: FileSet) =>
          ran(set)
            ? { ...stats(r.sets[set].archives.map((a) => a.totalS)), rounds: r.sets[set].archives }
            : null;
        return {
          name: r.backend.name,
          summary: r.backend.summary,
          archive: archive('binary'),
          archiveText: archive('text'),
          bigArchive: { bytes: BIG_FILE_BYTES, sampleMs: RSS_SAMPLE_MS, ...r.archiveMemory },
          publish: publish('binary'),
          republish: republish('binary'),
          publishText: publish('text'),
          republishText: republish('text'),
          bigUpload: { bytes: BIG_FILE_BYTES, sampleMs: RSS_SAMPLE_MS, ...r.memory },
          manySites: r.sites ?? null,
        };
      }),
    };
    await mkdir(join(REPO_ROOT, 'bench', 'out'), { recursive: true });
    await writeFile(join(REPO_ROOT, 'bench', 'out', 'publish.json'), `${JSON.stringify(out, null, 2)}\n`);
  } catch (err) {
    // A service that died takes its connections with it (the client sees "socket hang up"): say why.
    for (const { backend, service } of runs) {
      const { exitCode, signalCode } = service.child;
      if (exitCode !== null || signalCode !== null) {
        process.stderr.write(
          `${backend.name} service exited (${exitCode ?? signalCode}):\n${service.output().slice(-4000)}\n`,
        );
      }
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cleanup();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
