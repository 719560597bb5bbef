// Content-addressed blob store contract (SHA-256 keyed, immutable bytes) shared by the disk and S3 backends.

export interface BlobStat {
  /** Size in bytes. */
  size: number;
}

export interface PutOptions {
  /** Exact number of bytes the body must carry. */
  expectedSize: number;
  /** If given, the body's SHA-256 must equal it (64 lowercase hex). */
  expectedHash?: string;
}

export interface PutResult {
  /** SHA-256 of the stored bytes (64 lowercase hex). */
  hash: string;
  /** Size in bytes. */
  size: number;
}

export interface GetOptions {
  /** First byte offset, inclusive (default 0). */
  start?: number;
  /** Last byte offset, inclusive like HTTP Range (default: last byte; clamped to it). */
  end?: number;
}

export interface BlobStore {
  has(hash: string): Promise<boolean>;
  /** Null if absent. */
  stat(hash: string): Promise<BlobStat | null>;
  /**
   * Streams `body` to a temp object while computing SHA-256 and counting bytes; refuses (throws, keeps
   * nothing) if the byte count differs from expectedSize (failing fast, and stopping reading the body, as
   * soon as it exceeds it) or the hash differs from expectedHash; then commits atomically under the hash
   * (a no-op if it already exists). Never buffers the whole body. A body that errors, is aborted or ends
   * short makes it throw and keep nothing.
   */
  put(body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>, options: PutOptions): Promise<PutResult>;
  /**
   * Readable of the bytes (optionally a byte range); throws BlobNotFoundError if absent and RangeError if
   * the range is invalid or starts past the last byte.
   */
  get(hash: string, options?: GetOptions): Promise<NodeJS.ReadableStream>;
  /**
   * Whole small blob into memory (used by the serving cache for small files). Throws BlobNotFoundError.
   * `size`, when the caller knows it (a manifest entry), lets the disk store read a small blob at once.
   */
  read(hash: string, size?: number): Promise<Buffer>;
  /** Idempotent. */
  delete(hash: string): Promise<void>;
  /**
   * True while a backup (`slipway admin backup`, src/cli/backup.ts) is copying this store: the garbage
   * collector deletes nothing then. Stores no backup reads (S3) leave it out.
   */
  deletionHeld?(): Promise<boolean>;
  /** Every stored hash, in no particular order (for the garbage collector). */
  list(): AsyncIterable<string>;
  /** Reachability probe for /readyz; throws if the store is unusable. */
  ping(): Promise<void>;
  /**
   * Absolute file path of a blob when the store is on local disk (lets the site server use fs streams /
   * sendfile-like paths); absent for remote stores. Does not check existence.
   */
  localPath?(hash: string): string;
  /** Releases connections (remote stores). */
  close?(): void | Promise<void>;
  /**
   * A batch of puts made durable together (stores where one flush is much cheaper than one per blob):
   * absent where every put is already as cheap as it gets (S3's PUT is durable when answered).
   */
  batch?(): BlobBatch;
}

/**
 * Many blobs stored as one: `put` stores and verifies a blob's bytes as BlobStore.put does, but it is
 * neither durable nor visible (has/get/read do not see it) until `commit` settles; `discard` (also after a
 * failed commit) leaves nothing. The archive deploy puts a thousand files this way: one filesystem flush
 * for all of them instead of four fsyncs per file.
 */
export interface BlobBatch {
  put(body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>, options: PutOptions): Promise<PutResult>;
  commit(): Promise<void>;
  discard(): Promise<void>;
}

const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

/** True for a SHA-256 digest written as 64 lowercase hex characters. */
export function isSha256Hex(s: unknown): s is string {
  return typeof s === 'string' && SHA256_HEX_RE.test(s);
}

/** Every method taking a hash throws this (before touching storage) when it is not 64 lowercase hex. */
export class InvalidBlobHashError extends TypeError {
  readonly hash: string;
  constructor(hash: string) {
    super(`Invalid blob hash (want 64 lowercase hex): ${JSON.stringify(String(hash).slice(0, 80))}`);
    this.name = 'InvalidBlobHashError';
    this.hash = hash;
  }
}

export class BlobNotFoundError extends Error {
  readonly hash: string;
  constructor(hash: string) {
    super(`Blob not found: ${hash}`);
    this.name = 'BlobNotFoundError';
    this.hash = hash;
  }
}

export class BlobSizeMismatchError extends Error {
  readonly expected: number;
  /** Bytes received; when the body overran, the count at the point reading stopped (a lower bound). */
  readonly actual: number;
  constructor(expected: number, actual: number) {
    super(
      actual > expected
        ? `Blob body exceeds the expected size of ${expected} bytes (read ${actual} so far)`
        : `Blob body has ${actual} bytes, expected ${expected}`,
    );
    this.name = 'BlobSizeMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

export class BlobHashMismatchError extends Error {
  readonly expected: string;
  readonly actual: string;
  constructor(expected: string, actual: string) {
    super(`Blob body hashes to ${actual}, expected ${expected}`);
    this.name = 'BlobHashMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

/** Throws InvalidBlobHashError unless `hash` is 64 lowercase hex. */
export function assertSha256Hex(hash: string): void {
  if (!isSha256Hex(hash)) throw new InvalidBlobHashError(hash);
}
