// Helpers shared by blob stores: reading an upload body (a stream or async iterable of chunks) and
// checking a requested byte range.

import type { GetOptions } from './types.js';

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
