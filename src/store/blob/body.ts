// Helpers shared by blob stores: reading an upload body (a stream or async iterable of chunks) with its
// count, hash and verification (written once for disk and S3), and checking a requested byte range.

import { createHash } from 'node:crypto';
import {
  assertSha256Hex,
  BlobHashMismatchError,
  BlobSizeMismatchError,
  type GetOptions,
  type PutOptions,
  type PutResult,
} from './types.js';

/** A body chunk as bytes (strings as UTF-8). */
export function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  throw new TypeError(`Blob body chunks must be bytes, got ${typeof chunk}`);
}

/**
 * An http.IncomingMessage whose client disconnects emits 'aborted'; destroy it then so the pending read
 * fails instead of waiting forever. Returns the unsubscribe function.
 */
export function destroyOnAborted(body: unknown): () => void {
  const em = body as {
    on?: (event: string, fn: () => void) => unknown;
    removeListener?: (event: string, fn: () => void) => unknown;
    destroy?: (err?: Error) => unknown;
  };
  if (typeof em.on !== 'function' || typeof em.removeListener !== 'function') return () => {};
  const onAborted = () => {
    if (typeof em.destroy === 'function') em.destroy(new Error('Blob body aborted by the client'));
  };
  em.on('aborted', onAborted);
  return () => em.removeListener?.('aborted', onAborted);
}

/** Throws RangeError unless start/end are non-negative integers with start <= end (when both given). */
export function assertValidRange({ start, end }: GetOptions): void {
  for (const [name, v] of [
    ['start', start],
    ['end', end],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) {
      throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
    }
  }
  if (start !== undefined && end !== undefined && start > end)
    throw new RangeError(`Invalid range ${start}-${end}`);
}

/** Throws RangeError unless expectedSize is a non-negative integer; InvalidBlobHashError for a bad hash. */
export function assertPutOptions({ expectedSize, expectedHash }: PutOptions): void {
  if (!Number.isSafeInteger(expectedSize) || expectedSize < 0) {
    throw new RangeError(`expectedSize must be a non-negative integer, got ${expectedSize}`);
  }
  if (expectedHash !== undefined) assertSha256Hex(expectedHash);
}

/**
 * Reads `body` to its end, counting and hashing every chunk and handing it to `write` before the next one
 * is pulled: nothing accumulates here, and a producer that reuses its buffer cannot make the stored bytes
 * differ from the hash. Throws BlobSizeMismatchError as soon as the count passes expectedSize (reading
 * stops) or when the body ends short, and BlobHashMismatchError when the bytes do not hash to
 * expectedHash; the caller then keeps nothing. A client that disconnects fails the read (destroyOnAborted).
 */
export async function readVerified(
  body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
  { expectedSize, expectedHash }: PutOptions,
  write: (chunk: Uint8Array) => unknown,
): Promise<PutResult> {
  const hasher = createHash('sha256');
  let size = 0;
  const stopWatchingAbort = destroyOnAborted(body);
  try {
    for await (const raw of body) {
      const chunk = toBytes(raw);
      size += chunk.byteLength;
      if (size > expectedSize) throw new BlobSizeMismatchError(expectedSize, size);
      hasher.update(chunk);
      await write(chunk);
    }
  } finally {
    stopWatchingAbort();
  }
  if (size !== expectedSize) throw new BlobSizeMismatchError(expectedSize, size);
  const hash = hasher.digest('hex');
  if (expectedHash !== undefined && hash !== expectedHash)
    throw new BlobHashMismatchError(expectedHash, hash);
  return { hash, size };
}
