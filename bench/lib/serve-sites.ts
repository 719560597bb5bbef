// Content for the serving bench, all published through the public API: the hot site (an 11 KB page and a
// 200 KB binary), many small one-page sites (bounded-parallel create -> upload -> finalize), a warm-up pass
// over their hosts, and one timed publish of 1000 files / 50 MB (the bench/publish.ts round, trimmed).

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type Client, type LocalFile, manifestOf, sha256 } from './client.js';

export const PAGE_BYTES = 11 * 1024;
export const BIG_BYTES = 200 * 1024;
/** A mid-size asset (a script bundle): past the fast path's one-buffer copy, short of the large file. */
export const MEDIUM_BYTES = 52 * 1024;
export const SMALL_PAGE_BYTES = 1024;

const WORDS =
  'slipway hosts static sites from one small service with content addressed blobs and precomputed headers so that a request is a few map lookups and one write'.split(
    ' ',
  );

/** An HTML page of exactly `size` bytes (ASCII text in paragraphs, like a real article page). */
export function htmlPage(title: string, size: number): Buffer {
  const head = `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><title>${title}</title></head>\n<body>\n<h1>${title}</h1>\n`;
  const tail = '\n</body>\n</html>\n';
  let body = '';
  let w = 0;
  while (head.length + body.length + tail.length < size) {
    body += w % 60 === 0 ? (w === 0 ? '<p>' : '</p>\n<p>') : ' ';
    body += WORDS[w % WORDS.length];
    w++;
  }
  const text = head + body + tail;
  // Trim inside the last paragraph so the closing tags stay intact.
  const over = text.length - size;
  return Buffer.from(head + body.slice(0, body.length - over) + tail);
}

const file = (path: string, bytes: Buffer, contentType: string): LocalFile => ({
  path,
  size: bytes.length,
  contentType,
  hash: sha256(bytes),
  bytes,
});

/** The hot site's files: `index.html` (11 KB), `medium.bin` (52 KB) and `big.bin` (200 KB), random bytes. */
export function hotSiteFiles(): LocalFile[] {
  return [
    file('index.html', htmlPage('Slipway bench page', PAGE_BYTES), 'text/html; charset=utf-8'),
    file('medium.bin', randomBytes(MEDIUM_BYTES), 'application/octet-stream'),
    file('big.bin', randomBytes(BIG_BYTES), 'application/octet-stream'),
  ];
}

/** create -> upload what is asked -> finalize; returns the slug. */
export async function publishSite(client: Client, files: LocalFile[], parallel = 16): Promise<string> {
  const bytes = new Map(files.map((f) => [f.path, f.bytes]));
  const pub = await client.create(manifestOf(files));
  const results = await client.uploadAll(pub.upload.uploads, (p) => bytes.get(p)!, parallel);
  for (const [path, status] of results)
    if (status !== 200) throw new Error(`upload of ${path}: ${String(status)}`);
  const fin = await client.finalize(pub.slug, pub.upload.versionId);
  if (fin.status !== 200) throw new Error(`finalize of ${pub.slug} answered ${fin.status}: ${fin.text}`);
  return pub.slug;
}

/** Runs `work(i)` for i in 0..count-1 with at most `parallel` in flight. */
async function pool(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
}

/** Publishes `count` one-page sites (a distinct ~1 KB index.html each); returns slugs in creation order. */
export async function seedSites(
  client: Client | ((i: number) => Client),
  count: number,
  parallel: number,
  onProgress?: (done: number) => void,
  /** Number of the first site (pages differ by number, so blobs never dedup across calls). */
  first = 0,
): Promise<string[]> {
  const clientFor = typeof client === 'function' ? client : () => client;
  const slugs: string[] = new Array(count);
  let done = 0;
  await pool(count, parallel, async (i) => {
    const page = file(
      'index.html',
      htmlPage(`Bench site ${first + i}`, SMALL_PAGE_BYTES),
      'text/html; charset=utf-8',
    );
    slugs[i] = await publishSite(clientFor(first + i), [page], 1);
    if (++done % 500 === 0) onProgress?.(done);
  });
  return slugs;
}

/** GET / once on every host (first-use loads: host route, record, manifest, body); checks 200. */
export async function warmHosts(client: Client, hosts: string[], parallel: number): Promise<void> {
  await pool(hosts.length, parallel, async (i) => {
    const res = await client.raw('GET', `${client.base}/`, { host: hosts[i]! });
    if (res.status !== 200) throw new Error(`GET / on ${hosts[i]} answered ${res.status}`);
  });
}

export const PUBLISH_FILES = 1000;
export const PUBLISH_BYTES = 50 * 1024 * 1024;
export const PUBLISH_PARALLEL = 16;

/** 1000 random files of ~10..90 KB adding up to exactly 50 MB (as bench/publish.ts). */
export function publishFiles(round: number): LocalFile[] {
  const weights = Array.from({ length: PUBLISH_FILES }, () => 0.2 + Math.random() * 1.6);
  const sum = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((w / sum) * PUBLISH_BYTES)));
  sizes[0]! += PUBLISH_BYTES - sizes.reduce((a, b) => a + b, 0);
  return sizes.map((size, i) =>
    i === 0
      ? file('index.html', randomBytes(size), 'text/html; charset=utf-8')
      : file(`r${round}/dir-${i % 20}/file-${i}.bin`, randomBytes(size), 'application/octet-stream'),
  );
}

/** One publish of `files` end to end (create, 16 parallel uploads, finalize), in seconds. */
export async function timedPublish(client: Client, files: LocalFile[]): Promise<number> {
  const t0 = performance.now();
  await publishSite(client, files, PUBLISH_PARALLEL);
  return (performance.now() - t0) / 1000;
}
