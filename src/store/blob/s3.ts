// S3 BlobStore: `<prefix>blobs/ab/cd/<sha256>`; no object is ever visible under a hash key unless its bytes
// hash to it, and a new blob costs as few object-store requests as that allows.
//
// put() hashes and counts the body while copying it into part buffers and refuses it on a size or hash
// mismatch before anything becomes visible:
// - up to PART_SIZE_BYTES (nearly every file of a site): the body is whole in memory when its hash is
//   known, so it goes straight to its hash key as one PutObject with Content-MD5 and the hash as SigV4's
//   payload hash (which the SDK would otherwise compute again); the ETag of the answer confirms what was
//   kept. One request per new blob (five before: temp PUT, two HEADs, copy, delete).
// - larger, with the hash given in advance (the upload path always has the manifest's): a multipart
//   upload straight to the hash key, completed only after the bytes hashed to it, then one HEAD checks
//   the stored length.
// - larger without a hash: a multipart upload to `<prefix>tmp/<random>`, checked, copied to its hash key
//   and deleted.
// Rewriting an existing blob writes identical bytes, so concurrent puts of one content are harmless; an
// aborted put leaves nothing visible (a PutObject is atomic, an incomplete multipart upload is invisible).
//
// Limits and operator notes:
// - Memory per put is bounded by (UPLOAD_QUEUE_SIZE + 1) x PART_SIZE_BYTES of reused part buffers (or the
//   body's size when smaller). lib-storage's Upload was measured and dropped: it allocates a fresh
//   concatenated buffer per part, and with V8's lazy collection of those a 100 MB put grew RSS by 90-110 MB
//   at 8 MiB x 4 (still 50-67 MB at 5 MiB x 1).
// - The temp path's commit is a single CopyObject, which S3 caps at 5 GiB (MAX_BLOB_BYTES); larger blobs
//   would need a multipart copy (UploadPartCopy), which is not implemented: put() refuses them up front.
// - A crash mid-put leaves `tmp/` objects (init() removes those older than an hour) or incomplete multipart
//   uploads: give the bucket a lifecycle rule that aborts incomplete multipart uploads after a day.
// - checksumMode defaults to WHEN_REQUIRED: with WHEN_SUPPORTED, SDK v3 sends streamed bodies as
//   `aws-chunked` with a trailing checksum, which some S3-compatible stores (s3rver, older MinIO/Ceph) keep
//   verbatim, framing included. This store only sends Buffers (plain bodies with a checksum header), and
//   put() checks the stored length anyway, so such a store fails loudly instead of keeping corrupt bytes.

import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { BlobConfig } from '../../config.js';
import { type Clock, systemClock } from '../../shared/clock.js';
import { assertPutOptions, assertValidRange, readVerified } from './body.js';
import { STALE_TMP_AGE_MS } from './disk.js';
import { ObjectWriter } from './s3-writer.js';
import {
  assertSha256Hex,
  BlobNotFoundError,
  type BlobStat,
  type BlobStore,
  type GetOptions,
  isSha256Hex,
  type PutOptions,
  type PutResult,
} from './types.js';

export type S3BlobConfig = Extract<BlobConfig, { provider: 's3' }>;

export interface S3BlobStoreOptions {
  /** Key prefix for every object (e.g. `slipway/` or a per-test-run prefix); a trailing `/` is added. */
  prefix?: string;
  /** Time source for init()'s stale-temp-object rule. */
  clock?: Clock;
  /** ListObjectsV2 MaxKeys (default 1000, the S3 maximum); tests lower it to exercise pagination. */
  listPageSize?: number;
  /** Multipart part size (default PART_SIZE_BYTES, at least S3's minimum of 5 MiB). */
  partSizeBytes?: number;
  /** Parts sent concurrently (default UPLOAD_QUEUE_SIZE); memory is (this + 1) x partSizeBytes per put. */
  uploadQueueSize?: number;
  /** Overrides merged into the S3Client configuration (e.g. a custom requestHandler or maxAttempts). */
  clientConfig?: Partial<S3ClientConfig>;
}

/** Multipart part size (S3's minimum); a body up to this size is sent as one PutObject. */
export const PART_SIZE_BYTES = 5 * 1024 * 1024;
/** Parts sent concurrently; a put holds at most UPLOAD_QUEUE_SIZE + 1 part buffers. */
export const UPLOAD_QUEUE_SIZE = 2;
/** Largest blob put() accepts: the CopyObject limit (bigger objects need a multipart copy). */
export const MAX_BLOB_BYTES = 5 * 1024 * 1024 * 1024;

/** Opening a connection to the object store. */
const S3_CONNECT_TIMEOUT_MS = 3_000;
/** From sending a request to its response head, and the longest silence of a socket mid-body. */
const S3_RESPONSE_TIMEOUT_MS = 30_000;
const TMP_NAME_RANDOM_BYTES = 16;
/** S3's smallest allowed part (all but the last). */
const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
const MAX_LIST_PAGE_SIZE = 1000;
const BLOB_SUFFIX_RE = /^([0-9a-f]{2})\/([0-9a-f]{2})\/([0-9a-f]{64})$/;
const CONTENT_RANGE_RE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

/** The stored object's length differs from the bytes sent (e.g. aws-chunked framing kept verbatim). */
export class BlobStoredSizeError extends Error {
  readonly key: string;
  readonly sent: number;
  readonly stored: number | null;
  constructor(key: string, sent: number, stored: number | null) {
    super(
      `S3 kept ${stored ?? 'no'} bytes at ${key} for a ${sent}-byte body; if the store keeps aws-chunked ` +
        `framing, set checksumMode to WHEN_REQUIRED`,
    );
    this.name = 'BlobStoredSizeError';
    this.key = key;
    this.sent = sent;
    this.stored = stored;
  }
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly bucket: string;
  /** `''` or a prefix ending in `/`. */
  readonly prefix: string;
  /** Every blob key starts with this (`<prefix>blobs/`). */
  readonly blobKeyPrefix: string;
  /** Every temp object key starts with this (`<prefix>tmp/`). */
  readonly tempKeyPrefix: string;
  private readonly clock: Clock;
  private readonly listPageSize: number;
  private readonly partSizeBytes: number;
  private readonly uploadQueueSize: number;
  private readonly checksumMode: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';

  constructor(config: S3BlobConfig, options: S3BlobStoreOptions = {}) {
    const checksumMode = config.checksumMode ?? 'WHEN_REQUIRED';
    this.checksumMode = checksumMode;
    const credentials =
      config.accessKeyId !== undefined && config.secretAccessKey !== undefined
        ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
        : undefined; // the SDK's default provider chain (env, profile, IMDS, ...)
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint !== undefined && { endpoint: config.endpoint }),
      forcePathStyle: config.forcePathStyle,
      ...(credentials !== undefined && { credentials }),
      requestChecksumCalculation: checksumMode,
      responseChecksumValidation: checksumMode,
      // An object store that stops answering fails a request within seconds (then the SDK's retries),
      // instead of holding an upload or a site request for the OS's TCP timeouts.
      requestHandler: {
        connectionTimeout: S3_CONNECT_TIMEOUT_MS,
        requestTimeout: S3_RESPONSE_TIMEOUT_MS,
        throwOnRequestTimeout: true,
        socketTimeout: S3_RESPONSE_TIMEOUT_MS,
      },
      ...options.clientConfig,
    });
    this.bucket = config.bucket;
    this.prefix = normalizePrefix(options.prefix ?? '');
    this.blobKeyPrefix = `${this.prefix}blobs/`;
    this.tempKeyPrefix = `${this.prefix}tmp/`;
    this.clock = options.clock ?? systemClock;
    const pageSize = options.listPageSize ?? MAX_LIST_PAGE_SIZE;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_LIST_PAGE_SIZE) {
      throw new RangeError(`listPageSize must be 1..${MAX_LIST_PAGE_SIZE}, got ${pageSize}`);
    }
    this.listPageSize = pageSize;
    this.partSizeBytes = options.partSizeBytes ?? PART_SIZE_BYTES;
    if (!Number.isSafeInteger(this.partSizeBytes) || this.partSizeBytes < MIN_PART_SIZE_BYTES) {
      throw new RangeError(
        `partSizeBytes must be at least ${MIN_PART_SIZE_BYTES}, got ${this.partSizeBytes}`,
      );
    }
    this.uploadQueueSize = options.uploadQueueSize ?? UPLOAD_QUEUE_SIZE;
    if (!Number.isSafeInteger(this.uploadQueueSize) || this.uploadQueueSize < 1) {
      throw new RangeError(`uploadQueueSize must be a positive integer, got ${this.uploadQueueSize}`);
    }
  }

  static fromConfig(config: BlobConfig, options: S3BlobStoreOptions = {}): S3BlobStore {
    if (config.provider !== 's3')
      throw new TypeError(`S3BlobStore needs an s3 blob config, got ${config.provider}`);
    return new S3BlobStore(config, options);
  }

  /** The object key of a blob (`<prefix>blobs/ab/cd/<sha256>`); does not check existence. */
  objectKey(hash: string): string {
    assertSha256Hex(hash);
    return `${this.blobKeyPrefix}${hash.slice(0, 2)}/${hash.slice(2, 4)}/${hash}`;
  }

  /** Removes temp objects older than STALE_TMP_AGE_MS (left by a crash mid-put). */
  async init(): Promise<void> {
    const cutoffMs = this.clock.now() - STALE_TMP_AGE_MS;
    for await (const { key, lastModified } of this.listKeys(this.tempKeyPrefix)) {
      if (lastModified !== undefined && lastModified.getTime() < cutoffMs) await this.deleteKey(key);
    }
  }

  /** Keys of the temp objects currently present (in-flight or leftover puts). */
  async listTempKeys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const { key } of this.listKeys(this.tempKeyPrefix)) keys.push(key);
    return keys;
  }

  /** Closes the client's sockets; the store is unusable afterwards. */
  close(): void {
    this.client.destroy();
  }

  async has(hash: string): Promise<boolean> {
    return (await this.stat(hash)) !== null;
  }

  async stat(hash: string): Promise<BlobStat | null> {
    const size = await this.headSize(this.objectKey(hash));
    return size === null ? null : { size };
  }

  async put(
    body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
    options: PutOptions,
  ): Promise<PutResult> {
    assertPutOptions(options);
    const { expectedSize, expectedHash } = options;
    if (expectedSize > MAX_BLOB_BYTES) {
      throw new RangeError(
        `expectedSize ${expectedSize} exceeds the S3 store's limit of ${MAX_BLOB_BYTES} bytes`,
      );
    }

    const multipart = expectedSize > this.partSizeBytes;
    // A multipart upload is named before its first part. With the hash known in advance that name is the
    // blob's own key: the object appears only when the upload completes, which happens only after the
    // bytes hashed to it. Without a hash, a temp key, copied to the hash key once the hash is known.
    const uploadKey = multipart
      ? expectedHash !== undefined
        ? this.objectKey(expectedHash)
        : `${this.tempKeyPrefix}${randomBytes(TMP_NAME_RANDOM_BYTES).toString('hex')}`
      : undefined;
    const writer = new ObjectWriter(this.client, this.bucket, uploadKey, expectedSize, {
      partSizeBytes: this.partSizeBytes,
      queueSize: this.uploadQueueSize,
      checksumMode: this.checksumMode,
    });
    // A single-part body is sent with its MD5 (Content-MD5): the store refuses bytes that differ from it,
    // and its ETag (the MD5 of what it kept) confirms the stored bytes without another request.
    const md5 = multipart ? undefined : createHash('md5');
    try {
      // Each chunk is copied into a part buffer (and a full part sent) before the next one is read.
      const { hash, size } = await readVerified(body, options, (chunk) => {
        md5?.update(chunk);
        return writer.write(chunk);
      });
      const finalKey = this.objectKey(hash);
      if (md5 !== undefined) {
        // One PutObject straight to the hash key: the bytes are all in memory and hash to it.
        const digest = md5.digest();
        const etag = await writer.finishSingle(finalKey, digest.toString('base64'), hash);
        if (etag !== `"${digest.toString('hex')}"`) await this.assertStoredSize(finalKey, size);
        return { hash, size };
      }
      await writer.finish();
      await this.assertStoredSize(uploadKey!, size);
      if (uploadKey !== finalKey) await this.commitTemp(uploadKey!, finalKey);
      return { hash, size };
    } catch (err) {
      await writer.abort();
      // A temp object whose CompleteMultipartUpload answer was lost may exist. (A blob key is never
      // removed here: it only ever receives bytes that hash to it, and another put may share it.)
      if (uploadKey?.startsWith(this.tempKeyPrefix)) await this.deleteKey(uploadKey).catch(() => {});
      throw err;
    }
  }

  /**
   * Throws BlobStoredSizeError, and removes the object, unless the store kept exactly `size` bytes at
   * `key` (a store that kept aws-chunked framing verbatim, or one whose ETag is not an MD5).
   */
  private async assertStoredSize(key: string, size: number): Promise<void> {
    const stored = await this.headSize(key);
    if (stored === size) return;
    await this.deleteKey(key).catch(() => {});
    throw new BlobStoredSizeError(key, size, stored);
  }

  /** Copies a verified temp object to its hash key (unless that exists) and removes the temp object. */
  private async commitTemp(tmpKey: string, finalKey: string): Promise<void> {
    try {
      if ((await this.headSize(finalKey)) === null) {
        await this.client.send(
          new CopyObjectCommand({
            Bucket: this.bucket,
            Key: finalKey,
            CopySource: `${encodeURIComponent(this.bucket)}/${encodeKey(tmpKey)}`,
            MetadataDirective: 'COPY',
          }),
        );
      }
    } finally {
      await this.deleteKey(tmpKey).catch(() => {});
    }
  }

  async get(hash: string, options: GetOptions = {}): Promise<NodeJS.ReadableStream> {
    const key = this.objectKey(hash);
    const { start: wantStart, end: wantEnd } = options;
    assertValidRange(options);
    if (wantStart === undefined && wantEnd === undefined) {
      return bodyStream(await this.getObject(key, hash));
    }

    const start = wantStart ?? 0;
    let res: GetObjectCommandOutput;
    try {
      res = await this.getObject(key, hash, `bytes=${start}-${wantEnd ?? ''}`);
    } catch (err) {
      if (!isInvalidRange(err)) throw err;
      // 416 means the object exists but has no byte `start`; from 0 that is the empty blob, which (like
      // the disk store) reads as an empty stream.
      if (start === 0) return Readable.from([]);
      throw new RangeError(`Range start ${start} is past the end of the blob ${hash}`);
    }
    // Trust but verify the server's range: some S3-compatible stores widen it (s3rver answers `bytes=0-0`
    // with the whole object) or ignore it (200 with the full body).
    const stream = bodyStream(res);
    const served = servedRange(res);
    if (served === null) {
      stream.destroy();
      throw new Error(`S3 answered a range request for ${key} without a usable Content-Range`);
    }
    if (start >= served.total) {
      stream.destroy();
      if (start === 0) return Readable.from([]);
      throw new RangeError(`Range start ${start} is past the end of a ${served.total}-byte blob`);
    }
    const end = Math.min(wantEnd ?? served.total - 1, served.total - 1);
    if (served.start > start || served.end < end) {
      stream.destroy();
      throw new Error(
        `S3 served bytes ${served.start}-${served.end} of ${key} for the range ${start}-${end}`,
      );
    }
    if (served.start === start && served.end === end) return stream;
    return sliceBytes(stream, start - served.start, end - start + 1);
  }

  async read(hash: string): Promise<Buffer> {
    const key = this.objectKey(hash);
    const res = await this.getObject(key, hash);
    const parts: Buffer[] = [];
    let length = 0;
    for await (const chunk of bodyStream(res)) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      parts.push(buf);
      length += buf.length;
    }
    if (res.ContentLength !== undefined && length !== res.ContentLength) {
      throw new Error(`S3 sent ${length} of the ${res.ContentLength} bytes of ${key}`);
    }
    return Buffer.concat(parts, length);
  }

  async delete(hash: string): Promise<void> {
    await this.deleteKey(this.objectKey(hash));
  }

  async *list(): AsyncIterable<string> {
    for await (const { key } of this.listKeys(this.blobKeyPrefix)) {
      const m = BLOB_SUFFIX_RE.exec(key.slice(this.blobKeyPrefix.length));
      if (m && isSha256Hex(m[3]) && m[3].startsWith(`${m[1]}${m[2]}`)) yield m[3];
    }
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  private async getObject(key: string, hash: string, range?: string): Promise<GetObjectCommandOutput> {
    try {
      return await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range !== undefined && { Range: range }) }),
      );
    } catch (err) {
      if (isKeyNotFound(err)) throw new BlobNotFoundError(hash);
      throw err;
    }
  }

  /** Null if the object does not exist. */
  private async headSize(key: string): Promise<number | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return res.ContentLength ?? 0;
    } catch (err) {
      if (isKeyNotFound(err)) return null;
      throw err;
    }
  }

  private async deleteKey(key: string): Promise<void> {
    // DeleteObject succeeds (204) for a missing key: idempotent as is.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  private async *listKeys(prefix: string): AsyncGenerator<{ key: string; lastModified: Date | undefined }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          MaxKeys: this.listPageSize,
          ...(token !== undefined && { ContinuationToken: token }),
        }),
      );
      for (const obj of page.Contents ?? []) {
        if (obj.Key !== undefined) yield { key: obj.Key, lastModified: obj.LastModified };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }
}

function normalizePrefix(prefix: string): string {
  const p = prefix.replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/** Encodes each path segment of a key for the x-amz-copy-source header. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

function errorInfo(err: unknown): { name: string | undefined; status: number | undefined } {
  const e = err as { name?: unknown; $metadata?: { httpStatusCode?: unknown } } | null;
  return {
    name: typeof e?.name === 'string' ? e.name : undefined,
    status: typeof e?.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined,
  };
}

/** The key is absent (GetObject: NoSuchKey; HeadObject, which has no error body: NotFound / 404). */
function isKeyNotFound(err: unknown): boolean {
  const { name, status } = errorInfo(err);
  if (name === 'NoSuchKey' || name === 'NotFound') return true;
  return status === 404 && name !== 'NoSuchBucket';
}

function isInvalidRange(err: unknown): boolean {
  const { name, status } = errorInfo(err);
  return name === 'InvalidRange' || status === 416;
}

function bodyStream(res: GetObjectCommandOutput): Readable {
  const body = res.Body as unknown;
  if (body === undefined || body === null) return Readable.from([]);
  if (body instanceof Readable) return body;
  throw new TypeError('S3 GetObject returned a non-stream body (not running on Node.js?)');
}

/** The byte range a GetObject response carries: from Content-Range (206) or the whole object (200). */
function servedRange(res: GetObjectCommandOutput): { start: number; end: number; total: number } | null {
  const status = res.$metadata.httpStatusCode;
  if (status === 200 && res.ContentLength !== undefined) {
    return { start: 0, end: res.ContentLength - 1, total: res.ContentLength };
  }
  const m = res.ContentRange !== undefined ? CONTENT_RANGE_RE.exec(res.ContentRange) : null;
  if (!m || m[3] === '*') return null;
  return { start: Number(m[1]), end: Number(m[2]), total: Number(m[3]) };
}

/** The `length` bytes of `source` after the first `skip`; stops reading (destroys) `source` once done. */
function sliceBytes(source: Readable, skip: number, length: number): Readable {
  async function* slice(): AsyncGenerator<Buffer> {
    let toSkip = skip;
    let toPass = length;
    if (toPass === 0) return;
    for await (const raw of source) {
      let chunk = typeof raw === 'string' ? Buffer.from(raw) : (raw as Buffer);
      if (toSkip > 0) {
        const n = Math.min(toSkip, chunk.length);
        toSkip -= n;
        chunk = chunk.subarray(n);
      }
      if (chunk.length === 0) continue;
      const out = chunk.subarray(0, toPass);
      toPass -= out.length;
      yield out;
      if (toPass === 0) return; // leaving the loop destroys `source`
    }
    throw new Error(`S3 response ended ${toPass} bytes short of the requested range`);
  }
  return Readable.from(slice(), { objectMode: false });
}
