// Runs the BlobStore contract against S3BlobStore on s3rver, plus the S3-only guarantees (exact stored bytes, commit).

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { MovableClock } from '../../src/shared/clock.js';
import { STALE_TMP_AGE_MS } from '../../src/store/blob/disk.js';
import {
  BlobStoredSizeError,
  MAX_BLOB_BYTES,
  PART_SIZE_BYTES,
  type S3BlobConfig,
  S3BlobStore,
  type S3BlobStoreOptions,
} from '../../src/store/blob/s3.js';
import {
  BlobHashMismatchError,
  BlobNotFoundError,
  BlobSizeMismatchError,
} from '../../src/store/blob/types.js';
import { type S3rverHandle, startS3rver } from '../helpers/s3.js';
import { bodyOf, collect, runBlobStoreContract, sha256 } from './blob-contract.js';

// The SDK warns once per process that it will need Node 22 from 2027; keep test output readable.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const MIB_BYTES = 1024 * 1024;
const EXACT_SMALL_BYTES = 100_000;
const EXACT_LARGE_BYTES = 20 * MIB_BYTES;
const MINUTE_MS = 60 * 1000;
const CHUNK_BYTES = 64 * 1024;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

let s3: S3rverHandle;
let prefixCounter = 0;

before(async () => {
  s3 = await startS3rver();
});
after(async () => {
  await s3?.close();
});

function s3Config(overrides: Partial<S3BlobConfig> = {}): S3BlobConfig {
  return {
    provider: 's3',
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
    checksumMode: 'WHEN_REQUIRED',
    ...overrides,
  };
}

/** A client that bypasses the store, to check what the server really keeps. */
function rawClient(): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Every key under `prefix` in the test bucket, sorted. */
async function rawKeys(client: S3Client, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

/** A store under a prefix of its own: test runs share one bucket without seeing each other. */
function freshStore(options: S3BlobStoreOptions = {}, config: Partial<S3BlobConfig> = {}): S3BlobStore {
  return new S3BlobStore(s3Config(config), { prefix: `run-${process.pid}-${++prefixCounter}`, ...options });
}

async function disposeStore(store: S3BlobStore): Promise<void> {
  const raw = rawClient();
  try {
    for (const key of await rawKeys(raw, store.prefix)) {
      await raw.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    }
  } finally {
    raw.destroy();
    store.close();
  }
}

/** Records the name of every command the store's client sends. */
function recordCommands(store: S3BlobStore): string[] {
  const names: string[] = [];
  store.client.middlewareStack.add(
    (next, context) => (args) => {
      names.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return names;
}

async function withStore(
  fn: (store: S3BlobStore) => Promise<void>,
  options: S3BlobStoreOptions = {},
  config: Partial<S3BlobConfig> = {},
): Promise<void> {
  const store = freshStore(options, config);
  try {
    await fn(store);
  } finally {
    await disposeStore(store);
  }
}

/** SHA-256 and length of everything a stream yields. */
async function digestOf(stream: AsyncIterable<unknown>): Promise<{ hash: string; size: number }> {
  const hasher = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    hasher.update(buf);
    size += buf.length;
  }
  return { hash: hasher.digest('hex'), size };
}

/** Checks, through the store and around it, that the object under `hash` is exactly those bytes. */
async function assertStoredExactly(store: S3BlobStore, hash: string, size: number): Promise<void> {
  assert.deepEqual(await store.stat(hash), { size });
  assert.deepEqual(await digestOf(await store.get(hash)), { hash, size }, 'get()');
  const whole = await store.read(hash);
  assert.equal(whole.length, size, 'read() length');
  assert.equal(sha256(whole), hash, 'read() hash');

  const raw = rawClient();
  try {
    const key = store.objectKey(hash);
    const head = await raw.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
    assert.equal(head.ContentLength, size, 'raw HeadObject ContentLength');
    const res = await raw.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    assert.deepEqual(await digestOf(res.Body as Readable), { hash, size }, 'raw GetObject');
  } finally {
    raw.destroy();
  }
}

/** No blob, no temp object: the state after a refused put into an empty store. */
async function assertNothingStored(store: S3BlobStore): Promise<void> {
  const listed: string[] = [];
  for await (const h of store.list()) listed.push(h);
  assert.deepEqual(listed, []);
  assert.deepEqual(await store.listTempKeys(), []);
}

runBlobStoreContract('S3BlobStore on s3rver', async () => {
  const store = freshStore();
  return {
    store,
    listTemp: () => store.listTempKeys(),
    dispose: () => disposeStore(store),
  };
});

describe('S3BlobStore specifics', () => {
  it('lays blobs out as <prefix>/blobs/ab/cd/<sha256> and leaves no other object', () =>
    withStore(async (store) => {
      const bytes = Buffer.from('layout');
      const hash = sha256(bytes);
      await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      const key = `${store.prefix}blobs/${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}`;
      assert.equal(store.objectKey(hash), key);
      assert.match(store.prefix, /^run-\d+-\d+\/$/);
      const raw = rawClient();
      try {
        assert.deepEqual(await rawKeys(raw, store.prefix), [key]);
      } finally {
        raw.destroy();
      }
    }));

  it(`stores exactly the bytes put: ${EXACT_SMALL_BYTES} bytes, no aws-chunked framing`, () =>
    withStore(async (store) => {
      const bytes = randomBytes(EXACT_SMALL_BYTES);
      const hash = sha256(bytes);
      const res = await store.put(bodyOf(bytes, 4096), { expectedSize: bytes.length, expectedHash: hash });
      assert.deepEqual(res, { hash, size: EXACT_SMALL_BYTES });
      await assertStoredExactly(store, hash, EXACT_SMALL_BYTES);
    }));

  it('stores exactly the bytes put: a 20 MB multipart upload', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const bytes = randomBytes(EXACT_LARGE_BYTES);
      const hash = sha256(bytes);
      const res = await store.put(bodyOf(bytes), { expectedSize: bytes.length, expectedHash: hash });
      assert.deepEqual(res, { hash, size: EXACT_LARGE_BYTES });
      assert.equal(
        commands.filter((c) => c === 'UploadPartCommand').length,
        Math.ceil(EXACT_LARGE_BYTES / PART_SIZE_BYTES),
      );
      assert.ok(commands.includes('CompleteMultipartUploadCommand'));
      assert.ok(!commands.includes('PutObjectCommand'), 'a 20 MB body is not sent in one PutObject');
      await assertStoredExactly(store, hash, EXACT_LARGE_BYTES);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('keeps nothing when a multipart body fails after parts were sent, and aborts the upload', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const boom = new Error('upstream broke');
      async function* failing() {
        for (let i = 0; i < 3 * PART_SIZE_BYTES; i += CHUNK_BYTES) yield Buffer.alloc(CHUNK_BYTES, 3);
        throw boom;
      }
      await assert.rejects(
        store.put(failing(), { expectedSize: 5 * PART_SIZE_BYTES }),
        (err) => err === boom,
      );
      assert.ok(commands.filter((c) => c === 'UploadPartCommand').length >= 2, `${commands}`);
      assert.ok(commands.includes('AbortMultipartUploadCommand'), `${commands}`);
      assert.ok(!commands.includes('CompleteMultipartUploadCommand'), `${commands}`);
      await assertNothingStored(store);
    }));

  it('refuses a multipart body whose hash differs without ever completing the upload', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const bytes = randomBytes(2 * PART_SIZE_BYTES + 123);
      const claimed = sha256('something else');
      await assert.rejects(
        store.put(bodyOf(bytes), { expectedSize: bytes.length, expectedHash: claimed }),
        BlobHashMismatchError,
      );
      assert.ok(commands.includes('UploadPartCommand'));
      assert.ok(!commands.includes('CompleteMultipartUploadCommand'), `${commands}`);
      await assertNothingStored(store);
    }));

  it('fails fast on an oversized multipart body', () =>
    withStore(async (store) => {
      const expectedSize = 2 * PART_SIZE_BYTES + CHUNK_BYTES;
      let pulled = 0;
      let closed = false;
      async function* oversized() {
        try {
          for (let i = 0; i < 200; i++) {
            pulled++;
            yield Buffer.alloc(CHUNK_BYTES, 7);
          }
        } finally {
          closed = true;
        }
      }
      await assert.rejects(
        store.put(oversized(), { expectedSize }),
        (err) => err instanceof BlobSizeMismatchError && err.actual === expectedSize + CHUNK_BYTES,
      );
      assert.equal(pulled, expectedSize / CHUNK_BYTES + 1);
      assert.equal(closed, true);
      await assertNothingStored(store);
    }));

  it('stores the bytes it hashed even when the producer reuses one buffer', () =>
    withStore(async (store) => {
      const totalBytes = 2 * PART_SIZE_BYTES + 999;
      const expected = createHash('sha256');
      const shared = Buffer.alloc(CHUNK_BYTES);
      async function* reusing() {
        for (let offset = 0, i = 0; offset < totalBytes; offset += CHUNK_BYTES, i++) {
          const view = shared.subarray(0, Math.min(CHUNK_BYTES, totalBytes - offset));
          view.fill(i % 256);
          expected.update(view);
          yield view;
        }
      }
      const res = await store.put(reusing(), { expectedSize: totalBytes });
      assert.equal(res.hash, expected.digest('hex'));
      await assertStoredExactly(store, res.hash, totalBytes);
    }));

  it('keeps at most uploadQueueSize parts in flight', () =>
    withStore(
      async (store) => {
        let inFlight = 0;
        let maxInFlight = 0;
        store.client.middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName !== 'UploadPartCommand') return next(args);
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            try {
              return await next(args);
            } finally {
              inFlight--;
            }
          },
          { step: 'initialize', name: 'countInFlight' },
        );
        const bytes = randomBytes(6 * PART_SIZE_BYTES);
        const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
        assert.ok(maxInFlight >= 1 && maxInFlight <= 2, `max in flight ${maxInFlight}`);
        assert.equal(hash, sha256(bytes));
        await assertStoredExactly(store, hash, bytes.length);
      },
      { uploadQueueSize: 2 },
    ));

  it('is constructible in WHEN_SUPPORTED mode and still stores exact bytes (single and multipart)', () =>
    withStore(
      async (store) => {
        assert.equal(await store.client.config.requestChecksumCalculation(), 'WHEN_SUPPORTED');
        assert.equal(await store.client.config.responseChecksumValidation(), 'WHEN_SUPPORTED');
        await store.ping();
        for (const size of [EXACT_SMALL_BYTES, 2 * PART_SIZE_BYTES + 1]) {
          const bytes = randomBytes(size);
          const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
          await assertStoredExactly(store, hash, size);
        }
      },
      {},
      { checksumMode: 'WHEN_SUPPORTED' },
    ));

  it('defaults to WHEN_REQUIRED checksums and builds without endpoint or credentials', async () => {
    const store = new S3BlobStore({
      ...s3Config(),
      endpoint: undefined,
      accessKeyId: undefined,
      secretAccessKey: undefined,
      forcePathStyle: false,
      checksumMode: undefined as unknown as 'WHEN_REQUIRED',
    });
    try {
      assert.equal(await store.client.config.requestChecksumCalculation(), 'WHEN_REQUIRED');
      assert.equal(await store.client.config.responseChecksumValidation(), 'WHEN_REQUIRED');
      assert.equal(store.prefix, '');
      assert.equal(store.tempKeyPrefix, 'tmp/');
    } finally {
      store.close();
    }
  });

  it('fromConfig() takes the s3 config and refuses the disk one', () => {
    const store = S3BlobStore.fromConfig(s3Config(), { prefix: '/nested/prefix' });
    try {
      assert.ok(store instanceof S3BlobStore);
      assert.equal(store.prefix, 'nested/prefix/');
      assert.equal(store.blobKeyPrefix, 'nested/prefix/blobs/');
    } finally {
      store.close();
    }
    assert.throws(() => S3BlobStore.fromConfig({ provider: 'disk', dir: '/tmp' }), TypeError);
  });

  it('ping() fails when the bucket does not exist', async () => {
    const store = new S3BlobStore(s3Config({ bucket: 'no-such-bucket-for-slipway' }));
    try {
      await assert.rejects(store.ping());
    } finally {
      store.close();
    }
  });

  // Requests per new blob (issue 9 part 3). Before: temp PutObject, HEAD temp, HEAD final, CopyObject,
  // DeleteObject = 5 for a small file; 10 for a 20 MB one (+ create, 4 parts, complete).
  it('stores a new small blob with one request: PutObject straight to its hash key', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const bytes = randomBytes(64 * 1024);
      const hash = sha256(bytes);
      await store.put(bodyOf(bytes, 4096), { expectedSize: bytes.length, expectedHash: hash });
      assert.deepEqual(commands, ['PutObjectCommand']);
      // Without a manifest hash too: the body is whole in memory by the time its hash is known.
      commands.length = 0;
      const other = randomBytes(1000);
      await store.put(bodyOf(other), { expectedSize: other.length });
      assert.deepEqual(commands, ['PutObjectCommand']);
      await assertStoredExactly(store, hash, bytes.length);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('stores a large blob whose hash is known as a multipart upload to its hash key, plus one HEAD', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const bytes = randomBytes(2 * PART_SIZE_BYTES + 1);
      const hash = sha256(bytes);
      await store.put(bodyOf(bytes), { expectedSize: bytes.length, expectedHash: hash });
      assert.deepEqual(commands, [
        'CreateMultipartUploadCommand',
        'UploadPartCommand',
        'UploadPartCommand',
        'UploadPartCommand',
        'CompleteMultipartUploadCommand',
        'HeadObjectCommand',
      ]);
      await assertStoredExactly(store, hash, bytes.length);
    }));

  it('stores a large blob without a hash through a temp object, copied to its hash key and removed', () =>
    withStore(async (store) => {
      const commands = recordCommands(store);
      const bytes = randomBytes(PART_SIZE_BYTES + 1);
      const { hash } = await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      assert.ok(commands.includes('CopyObjectCommand'), `${commands}`);
      assert.equal(commands.at(-1), 'DeleteObjectCommand');
      await assertStoredExactly(store, hash, bytes.length);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('a put of content that exists rewrites identical bytes with one request', () =>
    withStore(async (store) => {
      const bytes = randomBytes(4096);
      const hash = sha256(bytes);
      await store.put(bodyOf(bytes), { expectedSize: bytes.length });
      const commands = recordCommands(store);
      const again = await store.put(bodyOf(bytes, 100), { expectedSize: bytes.length, expectedHash: hash });
      assert.deepEqual(again, { hash, size: bytes.length });
      assert.deepEqual(commands, ['PutObjectCommand']);
      assert.deepEqual(await store.read(hash), bytes);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('refuses (and keeps nothing) when the server keeps a different length than was sent', () =>
    withStore(async (store) => {
      // Simulates a store that keeps aws-chunked framing: one extra byte lands in the temp object.
      store.client.middlewareStack.add(
        (next, context) => (args) => {
          const input = args.input as { Body?: unknown; ContentLength?: number };
          if (context.commandName === 'PutObjectCommand' && Buffer.isBuffer(input.Body)) {
            const padded = Buffer.concat([input.Body, Buffer.from('!')]);
            input.Body = padded;
            input.ContentLength = padded.length;
          }
          return next(args);
        },
        { step: 'initialize', name: 'corruptBody' },
      );
      const bytes = randomBytes(1000);
      await assert.rejects(store.put(bodyOf(bytes), { expectedSize: bytes.length }), (err) => {
        assert.ok(err instanceof BlobStoredSizeError, String(err));
        assert.equal(err.sent, 1000);
        assert.equal(err.stored, 1001);
        return true;
      });
      assert.equal(await store.has(sha256(bytes)), false);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('serves exact ranges even where s3rver widens them (bytes=0-0 returns the whole object there)', () =>
    withStore(async (store) => {
      const bytes = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256));
      const { hash } = await store.put(bodyOf(bytes, 50), { expectedSize: bytes.length });
      assert.deepEqual(await collect(await store.get(hash, { start: 0, end: 0 })), bytes.subarray(0, 1));
      assert.deepEqual(await collect(await store.get(hash, { end: 0 })), bytes.subarray(0, 1));
      assert.deepEqual(await collect(await store.get(hash, { start: 0 })), bytes);
      assert.deepEqual(await collect(await store.get(hash, { start: 299, end: 299 })), bytes.subarray(299));
      await assert.rejects(store.get(hash, { start: 300, end: 400 }), RangeError);
    }));

  it('reads the empty blob as empty from 0 and refuses ranges past it', () =>
    withStore(async (store) => {
      await store.put(Readable.from([]), { expectedSize: 0 });
      assert.equal((await collect(await store.get(EMPTY_SHA256, { start: 0 }))).length, 0);
      assert.equal((await collect(await store.get(EMPTY_SHA256, { start: 0, end: 10 }))).length, 0);
      await assert.rejects(store.get(EMPTY_SHA256, { start: 1 }), RangeError);
    }));

  it('lists across pages, only well-formed blob keys, only under its own prefix', () =>
    withStore(
      async (store) => {
        const hashes: string[] = [];
        for (let i = 0; i < 7; i++) {
          const bytes = Buffer.from(`paged blob ${i}`);
          hashes.push((await store.put(bodyOf(bytes), { expectedSize: bytes.length })).hash);
        }
        const raw = rawClient();
        const neighbour = freshStore();
        try {
          const misplaced = sha256('misplaced');
          for (const key of [
            `${store.prefix}blobs/${hashes[0]!.slice(0, 2)}/${hashes[0]!.slice(2, 4)}/notes.txt`,
            `${store.prefix}blobs/00/00/${misplaced}`, // a valid name in the wrong fan-out
            `${store.prefix}blobs/${sha256('flat')}`,
            `${store.prefix}tmp/${sha256('tmp')}`,
          ]) {
            await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'x' }));
          }
          const other = Buffer.from('another prefix');
          await neighbour.put(bodyOf(other), { expectedSize: other.length });

          const listed: string[] = [];
          for await (const h of store.list()) listed.push(h);
          assert.deepEqual(listed.sort(), [...hashes].sort());
        } finally {
          raw.destroy();
          await disposeStore(neighbour);
        }
      },
      { listPageSize: 2 },
    ));

  it('init() removes temp objects older than an hour and keeps fresh ones', async () => {
    const clock = new MovableClock();
    await withStore(
      async (store) => {
        const raw = rawClient();
        try {
          const key = `${store.tempKeyPrefix}crashed`;
          await raw.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'half a blob' }));
          await store.init();
          assert.deepEqual(await store.listTempKeys(), [key]);
          clock.advance(STALE_TMP_AGE_MS + MINUTE_MS);
          await store.init();
          assert.deepEqual(await store.listTempKeys(), []);
        } finally {
          raw.destroy();
        }
      },
      { clock },
    );
  });

  it(`refuses a put above ${MAX_BLOB_BYTES} bytes (the CopyObject limit) without reading the body`, () =>
    withStore(async (store) => {
      let pulled = 0;
      async function* body() {
        pulled++;
        yield Buffer.alloc(1);
      }
      await assert.rejects(store.put(body(), { expectedSize: MAX_BLOB_BYTES + 1 }), RangeError);
      assert.equal(pulled, 0);
      assert.deepEqual(await store.listTempKeys(), []);
    }));

  it('maps a missing key to BlobNotFoundError but a missing bucket to the S3 error', async () => {
    const store = new S3BlobStore(s3Config({ bucket: 'no-such-bucket-for-slipway' }));
    try {
      const hash = sha256('anything');
      await assert.rejects(store.read(hash), (err) => {
        assert.ok(!(err instanceof BlobNotFoundError), 'a missing bucket is not a missing blob');
        assert.equal((err as Error).name, 'NoSuchBucket');
        return true;
      });
    } finally {
      store.close();
    }
  });
});
