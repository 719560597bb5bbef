// BlobStore contract test suite: every backend (disk now, S3 later) runs these same cases.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import {
  BlobHashMismatchError,
  BlobNotFoundError,
  BlobSizeMismatchError,
  type BlobStore,
  InvalidBlobHashError,
} from '../../src/store/blob/types.js';

/** A fresh, empty store plus the backend-specific probes the contract needs. */
export interface BlobStoreHarness {
  store: BlobStore;
  /** Temp objects currently present (disk temp files, S3 pending multipart uploads); must be empty after a failed put. */
  listTemp(): Promise<string[]>;
  /** Removes everything the harness created. */
  dispose(): Promise<void>;
}

const KIB_BYTES = 1024;
const MIB_BYTES = 1024 * KIB_BYTES;
const STREAM_CHUNK_BYTES = 64 * KIB_BYTES;
const LARGE_PUT_BYTES = 20 * MIB_BYTES;
const MEMORY_PUT_BYTES = 100 * MIB_BYTES;
const MEMORY_GROWTH_LIMIT_BYTES = 64 * MIB_BYTES;
const DISCONNECT_DELAY_MS = 50;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export const sha256 = (bytes: Uint8Array | string): string =>
  createHash('sha256').update(bytes).digest('hex');

/** A Readable yielding `bytes` in chunks of `chunkBytes`. */
export function bodyOf(bytes: Buffer, chunkBytes = STREAM_CHUNK_BYTES): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkBytes) chunks.push(bytes.subarray(i, i + chunkBytes));
  return Readable.from(chunks);
}

export async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}

/**
 * Deterministic generated content of `totalBytes` in fresh STREAM_CHUNK_BYTES chunks; `digest()` gives the
 * SHA-256 of what was yielded once the generator is exhausted. `onChunk` runs before each yield.
 */
function generated(totalBytes: number, onChunk?: () => void) {
  const hasher = createHash('sha256');
  let digest: string | undefined;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let offset = 0, index = 0; offset < totalBytes; offset += STREAM_CHUNK_BYTES, index++) {
      const chunk = Buffer.alloc(Math.min(STREAM_CHUNK_BYTES, totalBytes - offset), index % 251);
      chunk.writeUInt32BE(index, 0);
      hasher.update(chunk);
      onChunk?.();
      yield chunk;
    }
    digest = hasher.digest('hex');
  }
  return {
    chunks,
    digest: (): string => {
      assert.ok(digest !== undefined, 'generator not exhausted');
      return digest;
    },
  };
}

/** The hash of known content, computed without touching the store. */
function generatedHash(totalBytes: number): string {
  const hasher = createHash('sha256');
  for (let offset = 0, index = 0; offset < totalBytes; offset += STREAM_CHUNK_BYTES, index++) {
    const chunk = Buffer.alloc(Math.min(STREAM_CHUNK_BYTES, totalBytes - offset), index % 251);
    chunk.writeUInt32BE(index, 0);
    hasher.update(chunk);
  }
  return hasher.digest('hex');
}

async function listAll(store: BlobStore): Promise<string[]> {
  const out: string[] = [];
  for await (const hash of store.list()) out.push(hash);
  return out.sort();
}

function isError<E extends Error>(ctor: new (...args: never[]) => E, check?: (err: E) => void) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof ctor, `expected ${ctor.name}, got ${String(err)}`);
    check?.(err);
    return true;
  };
}

export function runBlobStoreContract(name: string, makeStore: () => Promise<BlobStoreHarness>): void {
  async function withStore(fn: (h: BlobStoreHarness) => Promise<void>): Promise<void> {
    const h = await makeStore();
    try {
      await fn(h);
    } finally {
      await h.dispose();
    }
  }

  /** Nothing at all stored and no temp objects left: the state after a refused put into an empty store. */
  async function assertEmpty(h: BlobStoreHarness, ...hashes: string[]): Promise<void> {
    for (const hash of hashes) assert.equal(await h.store.has(hash), false, `${hash} must not be stored`);
    assert.deepEqual(await listAll(h.store), []);
    assert.deepEqual(await h.listTemp(), []);
  }

  describe(`BlobStore contract: ${name}`, () => {
    it('round-trips put/has/stat/get/read/list', () =>
      withStore(async ({ store, listTemp }) => {
        const bytes = Buffer.from('hello, slipway\n');
        const hash = sha256(bytes);
        assert.equal(await store.has(hash), false);
        assert.equal(await store.stat(hash), null);

        const res = await store.put(bodyOf(bytes, 4), { expectedSize: bytes.length, expectedHash: hash });
        assert.deepEqual(res, { hash, size: bytes.length });
        assert.equal(await store.has(hash), true);
        assert.deepEqual(await store.stat(hash), { size: bytes.length });
        assert.deepEqual(await collect(await store.get(hash)), bytes);
        assert.deepEqual(await store.read(hash), bytes);
        // With the size a manifest gives (the disk store then reads a small blob at once): the same bytes.
        assert.deepEqual(await store.read(hash, bytes.length), bytes);
        assert.deepEqual(await listAll(store), [hash]);
        assert.deepEqual(await listTemp(), []);
      }));

    it('accepts async iterables and string chunks, without expectedHash', () =>
      withStore(async ({ store }) => {
        async function* parts() {
          yield new Uint8Array([1, 2, 3]);
          yield Buffer.from([4, 5]);
          yield new Uint8Array(0);
        }
        const res = await store.put(parts(), { expectedSize: 5 });
        assert.equal(res.hash, sha256(Buffer.from([1, 2, 3, 4, 5])));
        assert.deepEqual(await store.read(res.hash), Buffer.from([1, 2, 3, 4, 5]));

        const text = await store.put(Readable.from(['héllo ', 'wörld']), { expectedSize: 13 });
        assert.equal(text.hash, sha256('héllo wörld'));
      }));

    it('stores the empty blob', () =>
      withStore(async ({ store }) => {
        const res = await store.put(Readable.from([]), { expectedSize: 0, expectedHash: EMPTY_SHA256 });
        assert.deepEqual(res, { hash: EMPTY_SHA256, size: 0 });
        assert.deepEqual(await store.stat(EMPTY_SHA256), { size: 0 });
        assert.equal((await collect(await store.get(EMPTY_SHA256))).length, 0);
        assert.equal((await store.read(EMPTY_SHA256)).length, 0);
      }));

    it('serves byte ranges (end inclusive, like HTTP Range)', () =>
      withStore(async ({ store }) => {
        const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
        const { hash } = await store.put(bodyOf(bytes, 7), { expectedSize: 100 });
        const range = async (start?: number, end?: number) => collect(await store.get(hash, { start, end }));

        assert.deepEqual(await range(10, 19), bytes.subarray(10, 20));
        assert.deepEqual(await range(90), bytes.subarray(90));
        assert.deepEqual(await range(undefined, 4), bytes.subarray(0, 5));
        assert.deepEqual(await range(42, 42), bytes.subarray(42, 43));
        assert.deepEqual(await range(99, 99), bytes.subarray(99));
        assert.deepEqual(await range(95, 1000), bytes.subarray(95), 'end past the last byte is clamped');
        assert.deepEqual(await range(0, 99), bytes);

        await assert.rejects(store.get(hash, { start: 100 }), RangeError);
        await assert.rejects(store.get(hash, { start: 20, end: 10 }), RangeError);
        await assert.rejects(store.get(hash, { start: -1 }), RangeError);
        await assert.rejects(store.get(hash, { start: 1.5 }), RangeError);
      }));

    it('refuses a body longer than expectedSize and keeps nothing', () =>
      withStore(async (h) => {
        const bytes = randomBytes(1000);
        await assert.rejects(
          h.store.put(bodyOf(bytes, 100), { expectedSize: 500 }),
          isError(BlobSizeMismatchError, (err) => {
            assert.equal(err.expected, 500);
            assert.ok(err.actual > 500);
          }),
        );
        await assertEmpty(h, sha256(bytes), sha256(bytes.subarray(0, 500)));
      }));

    it('fails fast on an oversized body: stops reading as soon as it exceeds expectedSize', () =>
      withStore(async (h) => {
        let pulled = 0;
        let closed = false;
        async function* oversized() {
          try {
            // Bounded so that a store without the fail-fast check fails this test instead of filling the disk.
            for (let i = 0; i < 100; i++) {
              pulled++;
              yield Buffer.alloc(1000, 7);
            }
          } finally {
            closed = true;
          }
        }
        await assert.rejects(
          h.store.put(oversized(), { expectedSize: 2500 }),
          isError(BlobSizeMismatchError, (err) => assert.equal(err.actual, 3000)),
        );
        assert.equal(pulled, 3);
        assert.equal(closed, true, 'the body iterator is closed');
        await assertEmpty(h);
      }));

    it('refuses a body shorter than expectedSize and keeps nothing', () =>
      withStore(async (h) => {
        const bytes = randomBytes(1000);
        await assert.rejects(
          h.store.put(bodyOf(bytes, 100), { expectedSize: 1001 }),
          isError(BlobSizeMismatchError, (err) => {
            assert.equal(err.expected, 1001);
            assert.equal(err.actual, 1000);
          }),
        );
        await assertEmpty(h, sha256(bytes));
      }));

    it('refuses a body whose hash differs from expectedHash and keeps nothing', () =>
      withStore(async (h) => {
        const bytes = randomBytes(1000);
        const claimed = sha256('something else');
        await assert.rejects(
          h.store.put(bodyOf(bytes), { expectedSize: 1000, expectedHash: claimed }),
          isError(BlobHashMismatchError, (err) => {
            assert.equal(err.expected, claimed);
            assert.equal(err.actual, sha256(bytes));
          }),
        );
        await assertEmpty(h, sha256(bytes), claimed);
      }));

    it('rejects malformed hashes without touching storage', () =>
      withStore(async (h) => {
        const { store } = h;
        const valid = sha256('x');
        for (const bad of [
          '',
          '../../etc/passwd',
          valid.toUpperCase(),
          valid.slice(1),
          `${valid}0`,
          `${valid.slice(0, 63)}g`,
        ]) {
          await assert.rejects(store.has(bad), InvalidBlobHashError, bad);
          await assert.rejects(store.stat(bad), InvalidBlobHashError, bad);
          await assert.rejects(store.get(bad), InvalidBlobHashError, bad);
          await assert.rejects(store.read(bad), InvalidBlobHashError, bad);
          await assert.rejects(store.delete(bad), InvalidBlobHashError, bad);
          if (store.localPath) assert.throws(() => store.localPath?.(bad), InvalidBlobHashError);
        }
        await assert.rejects(
          store.put(bodyOf(Buffer.from('x')), { expectedSize: 1, expectedHash: 'nope' }),
          InvalidBlobHashError,
        );
        await assert.rejects(store.put(bodyOf(Buffer.from('x')), { expectedSize: -1 }), RangeError);
        await assertEmpty(h, valid);
      }));

    it('accepts the same content again and keeps one blob', () =>
      withStore(async ({ store, listTemp }) => {
        const bytes = randomBytes(4096);
        const first = await store.put(bodyOf(bytes, 1000), { expectedSize: bytes.length });
        const again = await store.put(bodyOf(bytes, 333), {
          expectedSize: bytes.length,
          expectedHash: first.hash,
        });
        assert.deepEqual(again, { hash: first.hash, size: bytes.length });
        assert.deepEqual(await store.read(first.hash), bytes);
        assert.deepEqual(await listAll(store), [first.hash]);
        assert.deepEqual(await listTemp(), []);
      }));

    it('lets concurrent puts of the same content all succeed', () =>
      withStore(async ({ store, listTemp }) => {
        const bytes = randomBytes(MIB_BYTES);
        async function* slowly() {
          for (let i = 0; i < bytes.length; i += 16 * KIB_BYTES) {
            await new Promise((r) => setImmediate(r));
            yield bytes.subarray(i, i + 16 * KIB_BYTES);
          }
        }
        const results = await Promise.all(
          Array.from({ length: 6 }, () => store.put(slowly(), { expectedSize: bytes.length })),
        );
        for (const r of results)
          assert.deepEqual({ hash: r.hash, size: r.size }, { hash: sha256(bytes), size: bytes.length });
        assert.deepEqual(await store.read(sha256(bytes)), bytes);
        assert.deepEqual(await listAll(store), [sha256(bytes)]);
        assert.deepEqual(await listTemp(), []);
      }));

    it('keeps nothing when the body iterator throws midway', () =>
      withStore(async (h) => {
        const boom = new Error('upstream broke');
        async function* failing() {
          yield Buffer.alloc(STREAM_CHUNK_BYTES, 1);
          yield Buffer.alloc(STREAM_CHUNK_BYTES, 2);
          throw boom;
        }
        await assert.rejects(
          h.store.put(failing(), { expectedSize: 3 * STREAM_CHUNK_BYTES }),
          (err) => err === boom,
        );
        await assertEmpty(h);
      }));

    it('keeps nothing when a Readable body is destroyed with an error midway', () =>
      withStore(async (h) => {
        const boom = new Error('socket reset');
        let sent = 0;
        const body = new Readable({
          read() {
            if (sent++ < 3) this.push(Buffer.alloc(1000, sent));
            else this.destroy(boom);
          },
        });
        await assert.rejects(h.store.put(body, { expectedSize: 10_000 }), (err) => err === boom);
        await assertEmpty(h);
      }));

    it('keeps nothing when an HTTP client disconnects mid-upload', () =>
      withStore(async (h) => {
        const totalBytes = 256 * KIB_BYTES;
        let putSettled!: Promise<unknown>;
        let markStarted!: () => void;
        const started = new Promise<void>((r) => {
          markStarted = r;
        });
        const server = createServer((req, res) => {
          putSettled = h.store.put(req, { expectedSize: totalBytes }).then(
            (v) => ({ ok: v }),
            (err: unknown) => ({ err }),
          );
          markStarted();
          void putSettled.then(() => res.destroy());
        });
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        try {
          const { port } = server.address() as AddressInfo;
          const req = request({
            host: '127.0.0.1',
            port,
            method: 'PUT',
            path: '/',
            headers: { 'content-length': String(totalBytes) },
          });
          req.on('error', () => {});
          req.write(Buffer.alloc(totalBytes / 2, 9));
          await started;
          await new Promise((r) => setTimeout(r, DISCONNECT_DELAY_MS));
          req.destroy();
          const outcome = (await putSettled) as { ok?: unknown; err?: unknown };
          assert.ok(outcome.err instanceof Error, 'put must reject when the client goes away');
          await assertEmpty(h);
        } finally {
          server.closeAllConnections();
          server.close();
        }
      }));

    it('throws BlobNotFoundError for get/read of a missing hash', () =>
      withStore(async ({ store }) => {
        const missing = sha256('never stored');
        await assert.rejects(
          store.get(missing),
          isError(BlobNotFoundError, (e) => assert.equal(e.hash, missing)),
        );
        await assert.rejects(store.get(missing, { start: 0, end: 0 }), BlobNotFoundError);
        await assert.rejects(store.read(missing), BlobNotFoundError);
        await assert.rejects(store.read(missing, 10), BlobNotFoundError);
        assert.equal(await store.stat(missing), null);
        assert.equal(await store.has(missing), false);
      }));

    it('deletes idempotently', () =>
      withStore(async ({ store }) => {
        const bytes = Buffer.from('delete me');
        const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
        await store.delete(hash);
        assert.equal(await store.has(hash), false);
        await assert.rejects(store.read(hash), BlobNotFoundError);
        await store.delete(hash);
        await store.delete(sha256('never stored'));
        await store.put(bodyOf(bytes), { expectedSize: bytes.length });
        assert.deepEqual(await store.read(hash), bytes, 'a deleted blob can be stored again');
      }));

    it('lists every stored hash', () =>
      withStore(async ({ store }) => {
        assert.deepEqual(await listAll(store), []);
        const hashes: string[] = [];
        for (let i = 0; i < 25; i++) {
          const bytes = Buffer.from(`blob number ${i}`);
          hashes.push((await store.put(bodyOf(bytes), { expectedSize: bytes.length })).hash);
        }
        assert.deepEqual(await listAll(store), [...hashes].sort());
        await store.delete(hashes[3]!);
        assert.deepEqual(await listAll(store), hashes.filter((_, i) => i !== 3).sort());
      }));

    it('streams a 20 MB put and serves it back, whole and ranged', () =>
      withStore(async ({ store, listTemp }) => {
        const gen = generated(LARGE_PUT_BYTES);
        const expectedHash = generatedHash(LARGE_PUT_BYTES);
        const res = await store.put(gen.chunks(), { expectedSize: LARGE_PUT_BYTES, expectedHash });
        assert.equal(gen.digest(), expectedHash);
        assert.deepEqual(res, { hash: expectedHash, size: LARGE_PUT_BYTES });
        assert.deepEqual(await store.stat(expectedHash), { size: LARGE_PUT_BYTES });

        const hasher = createHash('sha256');
        let readBytes = 0;
        for await (const chunk of await store.get(expectedHash)) {
          hasher.update(chunk);
          readBytes += chunk.length;
        }
        assert.equal(readBytes, LARGE_PUT_BYTES);
        assert.equal(hasher.digest('hex'), expectedHash);

        // A range across a chunk boundary: chunk 1 is filled with 1s, chunk 2 opens with its index (uint32 BE).
        const start = 2 * STREAM_CHUNK_BYTES - 2;
        const part = await collect(await store.get(expectedHash, { start, end: start + 5 }));
        assert.deepEqual(part, Buffer.from([1, 1, 0, 0, 0, 2]));
        assert.deepEqual(await listTemp(), []);
      }));

    it('answers ping', () => withStore(async ({ store }) => store.ping()));

    it('puts 100 MB from a generator with bounded memory (RSS growth < 64 MB)', () =>
      withStore(async ({ store }) => {
        const baselineRssBytes = process.memoryUsage().rss;
        let peakRssBytes = baselineRssBytes;
        const gen = generated(MEMORY_PUT_BYTES, () => {
          peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
        });
        const res = await store.put(gen.chunks(), { expectedSize: MEMORY_PUT_BYTES });
        peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
        assert.equal(res.hash, gen.digest());
        assert.equal(res.size, MEMORY_PUT_BYTES);
        const growthBytes = peakRssBytes - baselineRssBytes;
        assert.ok(
          growthBytes < MEMORY_GROWTH_LIMIT_BYTES,
          `RSS grew by ${(growthBytes / MIB_BYTES).toFixed(1)} MB during a 100 MB put`,
        );
      }));
  });
}
