// Crash safety (CONTRACT "Request bodies and durability", "Uploads"): the service runs as a real child
// process and is SIGKILLed mid-upload and mid-finalize; after a restart on the same DATA_DIR nothing it
// acknowledged is lost, no partial blob exists under a hash name, and interrupted publishes can be retried.

import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  Client,
  type LocalFile,
  type ManifestFile,
  manifestOf,
  randomFile,
  type SiteDetails,
  sha256,
  type UploadEntry,
} from '../bench/lib/client.js';
import { freePort, type Service, signIn, startService } from '../bench/lib/service.js';
import { UPLOADS_PER_CLIENT } from '../src/core/upload.js';

const HEX64 = /^[0-9a-f]{64}$/;
const HEX2 = /^[0-9a-f]{2}$/;
const KB = 1024;

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
const sortedManifest = (files: ManifestFile[]) =>
  files.map(({ path, size, contentType, hash }) => ({ path, size, contentType, hash })).sort(byPath);

/** The fields a crash must not change: identity, version, status and the manifest. */
const durableView = (d: SiteDetails) => ({
  slug: d.slug,
  versionId: d.versionId,
  status: d.status,
  files: sortedManifest(d.files),
});

/** A site with an index.html and `count - 1` binary files; every `bigEvery`-th file is 100-300 KB. */
function siteFiles(prefix: string, count: number, bigEvery: number): LocalFile[] {
  const files = [randomFile('index.html', 2 * KB, 'text/html; charset=utf-8')];
  for (let i = 1; i < count; i++) {
    const size =
      i % bigEvery === 0 ? 100 * KB + ((i * 7919) % (200 * KB)) : 1 * KB + ((i * 4099) % (30 * KB));
    files.push(randomFile(`${prefix}/file-${String(i).padStart(3, '0')}.bin`, size));
  }
  return files;
}

/** Every file under DATA_DIR/blobs/ab/cd/ named as a SHA-256: name -> true when its bytes hash to it. */
async function scanBlobs(dataDir: string): Promise<{ total: number; bad: string[] }> {
  const root = join(dataDir, 'blobs');
  let total = 0;
  const bad: string[] = [];
  for (const a of await readdir(root)) {
    if (!HEX2.test(a)) continue;
    for (const b of await readdir(join(root, a))) {
      if (!HEX2.test(b)) continue;
      for (const name of await readdir(join(root, a, b))) {
        if (!HEX64.test(name)) continue;
        total++;
        const bytes = await readFile(join(root, a, b, name));
        if (sha256(bytes) !== name) bad.push(`${a}/${b}/${name} (${bytes.length} bytes)`);
      }
    }
  }
  return { total, bad };
}

/** The site's files are served byte for byte when the site server serves, and are always intact blobs. */
async function assertContentIntact(
  client: Client,
  dataDir: string,
  slug: string,
  files: LocalFile[],
  serving: boolean,
): Promise<void> {
  for (const f of files) {
    const blob = await readFile(join(dataDir, 'blobs', f.hash.slice(0, 2), f.hash.slice(2, 4), f.hash));
    assert.equal(blob.length, f.size, `blob of ${f.path} has its size`);
    assert.equal(sha256(blob), f.hash, `blob of ${f.path} hashes to its name`);
    if (serving) {
      const res = await client.site(slug, `/${f.path}`);
      assert.equal(res.status, 200, `GET /${f.path} on ${slug}`);
      assert.ok(res.body.equals(f.bytes), `GET /${f.path} on ${slug} serves the published bytes`);
    }
  }
}

/** Whether the site server serves published files yet (it may still answer 404 to everything). */
async function siteServing(client: Client, slug: string, index: LocalFile): Promise<boolean> {
  const res = await client.site(slug, '/index.html');
  return res.status === 200 && res.body.equals(index.bytes);
}

/** Writes a finalize request and SIGKILLs the service as soon as the request is on the wire. */
function finalizeThenKill(
  svc: Service,
  key: string,
  slug: string,
  versionId: string,
): Promise<{ status: number } | { error: Error }> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ versionId });
    const req = request(`${svc.url}/api/v1/publish/${slug}/finalize`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        authorization: `Bearer ${key}`,
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      res.on('error', (error) => resolve({ error }));
    });
    req.on('error', (error) => resolve({ error }));
    req.end(body, () => svc.child.kill('SIGKILL'));
  });
}

/** Sends the first half of the bytes, then holds the request open until `release` settles. */
async function* halfThenHang(bytes: Buffer, release: Promise<void>): AsyncGenerator<Uint8Array> {
  yield bytes.subarray(0, Math.floor(bytes.length / 2));
  await release;
}

describe('SIGKILL of the service', { timeout: 60_000 }, () => {
  let dataDir: string;
  let port: number;
  let svc: Service | undefined;
  let client: Client;
  let key: string;

  const start = async () => {
    svc = await startService({ dataDir, port });
    client?.close();
    // A fresh agent: sockets of the killed process must not be reused.
    client = new Client(svc.url, key);
    return svc;
  };

  const publishWhole = async (files: LocalFile[]) => {
    const pub = await client.create(manifestOf(files));
    const bytes = new Map(files.map((f) => [f.path, f.bytes]));
    const results = await client.uploadAll(pub.upload.uploads, (p) => bytes.get(p)!, 8);
    for (const [path, status] of results) assert.equal(status, 200, `upload of ${path}`);
    const fin = await client.finalize(pub.slug, pub.upload.versionId);
    assert.equal(fin.status, 200, fin.text);
    return pub;
  };

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'slipway-crash-'));
    port = await freePort();
    await start();
    key = await signIn(svc!.url, dataDir, 'crash@example.com');
    client = client.withKey(key);
  });

  after(async () => {
    client?.close();
    await svc?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('during uploads: acknowledged sites and blobs survive, no partial blob, the publish resumes with the same addresses', async (t) => {
    // Site A: published and live before the crash.
    const filesA = siteFiles('a', 30, 10);
    const pubA = await publishWhole(filesA);
    const detailsA = await client.details(pubA.slug);
    assert.deepEqual(sortedManifest(detailsA.files), sortedManifest(manifestOf(filesA)));
    const serving = await siteServing(client, pubA.slug, filesA[0]!);
    t.diagnostic(`site server serves published files: ${serving}`);

    // Site B: 200 files, a quarter of them 100-300 KB.
    const filesB = siteFiles('b', 200, 4);
    const bytesB = new Map(filesB.map((f) => [f.path, f.bytes]));
    const pubB = await client.create(manifestOf(filesB));
    assert.equal(pubB.upload.uploads.length, 200);
    const entryOf = new Map(pubB.upload.uploads.map((u) => [u.path, u]));

    // Four large files are held half-sent across the crash: their bytes are partly on disk at the kill.
    const halfSent = filesB.filter((f) => f.size >= 100 * KB).slice(-4);
    const halfPaths = new Set(halfSent.map((f) => f.path));
    let releaseHalf!: () => void;
    const release = new Promise<void>((r) => {
      releaseHalf = r;
    });
    const halfUploads = halfSent.map((f) =>
      client.put(entryOf.get(f.path)!, halfThenHang(f.bytes, release), f.size).then(
        (res) => res.status,
        (err: Error) => err,
      ),
    );
    const tmpDir = join(dataDir, 'blobs', 'tmp');
    const until = Date.now() + 10_000;
    for (;;) {
      const names = await readdir(tmpDir);
      const sizes = await Promise.all(
        names.map(async (n) => (await stat(join(tmpDir, n)).catch(() => ({ size: 0 }))).size),
      );
      if (sizes.filter((s) => s > 0).length >= halfSent.length) break;
      assert.ok(Date.now() < until, 'the half-sent uploads reached the blob store');
      await new Promise((r) => setTimeout(r, 20));
    }

    // The rest go 12 at a time (with the 4 held open, the 16 uploads a client may have under way); the
    // service is killed once 50 have been acknowledged.
    const acked = new Set<string>();
    let killed = false;
    const running = svc!;
    const rest = pubB.upload.uploads.filter((u) => !halfPaths.has(u.path));
    const results = await client.uploadAll(
      rest,
      (p) => bytesB.get(p)!,
      UPLOADS_PER_CLIENT - halfSent.length,
      {
        stop: () => killed,
        onDone: (path, status) => {
          if (status !== 200) return;
          acked.add(path);
          if (acked.size === 50 && !killed) {
            killed = true;
            running.child.kill('SIGKILL');
          }
        },
      },
    );
    // Every upload answered before 50 were acknowledged (refusals): fail below rather than wait forever.
    if (!killed) running.child.kill('SIGKILL');
    await running.exited;
    releaseHalf();
    for (const r of await Promise.all(halfUploads))
      assert.ok(r instanceof Error, 'half-sent uploads never got an answer');
    const acksBeforeKill = acked.size;
    const interrupted = [...results.values()].filter((r) => r instanceof Error).length;
    t.diagnostic(
      `acknowledged before the kill: ${acksBeforeKill}; cut off in flight: ${interrupted + halfSent.length}`,
    );
    assert.ok(acksBeforeKill >= 50);

    await start();

    // A is exactly as it was, and its bytes are intact.
    assert.deepEqual(durableView(await client.details(pubA.slug)), durableView(detailsA));
    await assertContentIntact(client, dataDir, pubA.slug, filesA, serving);

    // No file under a hash name holds bytes that do not hash to that name.
    const scan = await scanBlobs(dataDir);
    assert.deepEqual(scan.bad, [], 'every blob hashes to its name');
    assert.ok(scan.total >= filesA.length + acksBeforeKill, `${scan.total} blobs on disk`);

    // Every acknowledged upload of B survived: finalize reports only unacknowledged files missing.
    const early = await client.finalize(pubB.slug, pubB.upload.versionId);
    assert.equal(early.status, 400, early.text);
    assert.equal(early.body.code, 'INVALID_REQUEST');
    const missing = new Set<string>(early.body.missing);
    for (const path of acked) assert.ok(!missing.has(path), `acknowledged upload ${path} is still stored`);
    for (const path of halfPaths) assert.ok(missing.has(path), `half-sent ${path} is not stored`);

    // The addresses issued before the crash still work: re-PUT everything not yet stored ...
    const retry: UploadEntry[] = pubB.upload.uploads.filter((u) => !acked.has(u.path));
    const retried = await client.uploadAll(retry, (p) => bytesB.get(p)!, 16);
    for (const u of retry) assert.equal(retried.get(u.path), 200, `retried upload of ${u.path}`);
    // ... and every upload acknowledged before the crash is still stored: a repeated PUT answers 2xx
    // and changes nothing (`stored: false`).
    for (const path of acked) {
      const bytes = bytesB.get(path)!;
      const again = await client.put(entryOf.get(path)!, bytes, bytes.length);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.stored, false, `${path} was already stored before the crash`);
    }

    const fin = await client.finalize(pubB.slug, pubB.upload.versionId);
    assert.equal(fin.status, 200, fin.text);
    const detailsB = await client.details(pubB.slug);
    assert.equal(detailsB.versionId, pubB.upload.versionId);
    assert.equal(detailsB.status, 'active');
    assert.deepEqual(sortedManifest(detailsB.files), sortedManifest(manifestOf(filesB)));
    await assertContentIntact(client, dataDir, pubB.slug, filesB, serving);
    assert.deepEqual((await scanBlobs(dataDir)).bad, []);
  });

  test('during finalize: the site is wholly the old or wholly the new version, and finalize can be retried', async (t) => {
    const v1 = siteFiles('c', 20, 5);
    const pub1 = await publishWhole(v1);
    const slug = pub1.slug;
    const serving = await siteServing(client, slug, v1[0]!);

    // v2: 8 files changed, 1 removed, 2 added; the 11 others are copied server side.
    const v2: LocalFile[] = v1
      .slice(0, 19)
      .map((f, i) => (i >= 1 && i <= 8 ? randomFile(f.path, f.size + 1) : f));
    v2.push(randomFile('c/new-1.bin', 40 * KB), randomFile('c/new-2.bin', 150 * KB));
    const pub2 = await client.update(slug, manifestOf(v2));
    assert.equal(pub2.upload.uploads.length, 10, 'only changed and new files are uploaded');
    const bytes2 = new Map(v2.map((f) => [f.path, f.bytes]));
    const uploaded = await client.uploadAll(pub2.upload.uploads, (p) => bytes2.get(p)!, 8);
    for (const [path, status] of uploaded) assert.equal(status, 200, `upload of ${path}`);

    const answer = await finalizeThenKill(svc!, key, slug, pub2.upload.versionId);
    await svc!.exited;
    t.diagnostic(`finalize before the kill: ${'status' in answer ? answer.status : answer.error.message}`);
    await start();

    const after1 = await client.details(slug);
    const versions: Record<string, LocalFile[]> = {
      [pub1.upload.versionId]: v1,
      [pub2.upload.versionId]: v2,
    };
    const live = versions[after1.versionId];
    assert.ok(live, `the live version ${after1.versionId} is the old or the new one`);
    if ('status' in answer && answer.status === 200) {
      assert.equal(after1.versionId, pub2.upload.versionId, 'an acknowledged finalize survives');
    }
    t.diagnostic(`after restart: ${after1.versionId === pub1.upload.versionId ? 'old' : 'new'} version`);
    assert.equal(after1.status, 'active');
    assert.deepEqual(
      sortedManifest(after1.files),
      sortedManifest(manifestOf(live)),
      'never a mix of versions',
    );
    await assertContentIntact(client, dataDir, slug, live, serving);

    const fin = await client.finalize(slug, pub2.upload.versionId);
    assert.equal(fin.status, 200, fin.text);
    assert.equal(fin.body.versionId, pub2.upload.versionId);
    const after2 = await client.details(slug);
    assert.equal(after2.versionId, pub2.upload.versionId);
    assert.deepEqual(sortedManifest(after2.files), sortedManifest(manifestOf(v2)));
    await assertContentIntact(client, dataDir, slug, v2, serving);
    assert.deepEqual((await scanBlobs(dataDir)).bad, []);
  });
});
