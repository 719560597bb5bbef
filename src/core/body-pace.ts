// How slowly a request body may arrive. Without a bound, a client sending one byte every few seconds holds
// its connection (and an upload's temp file or multipart upload) for as long as it likes: an idle timeout
// alone does not help, since every byte resets it. The rule is a credit of waiting time: the client starts
// with `stallMs`, every moment the server waits for its next bytes spends credit, and every byte earns
// 1000 / `minBytesPerS` ms back, up to `stallMs` again. A body slower than `minBytesPerS` on average runs
// out of credit and is cut; a fast one may still pause for up to `stallMs` (a phone changing cells).
// Only time spent waiting on the client counts: while the consumer (a disk or S3 write) is busy, the
// body is not being read and the client is not to blame.

import { ApiError } from './errors.js';

export interface BodyPace {
  /** The longest the client may keep the server waiting for more bytes (its full credit), in ms. */
  stallMs: number;
  /** Each byte earns 1000 / minBytesPerS ms of credit: the slowest sustained rate a body may have. */
  minBytesPerS: number;
}

/**
 * 30 s of stall and 1 KiB/s sustained: a phone on a poor link (10 kB/s and up) never comes near it, a
 * 1-byte-per-2-s trickle is cut within ~30 s. Apache's mod_reqtimeout defaults to 20 s and 500 B/s.
 */
export const BODY_PACE: BodyPace = { stallMs: 30_000, minBytesPerS: 1024 };

export class BodyTooSlowError extends Error {
  /** Fastify's body reader keeps a statusCode it finds on a stream's error. */
  readonly statusCode = 408;
  constructor(pace: BodyPace) {
    super(
      `The request body arrived too slowly (slower than ${pace.minBytesPerS} bytes/s on average, ` +
        `or nothing for ${Math.round(pace.stallMs / 1000)} s).`,
    );
    this.name = 'BodyTooSlowError';
  }
}

/** The spec's error body for a body cut off by the pace rule (RFC 9110 §15.5.9 408 Request Timeout). */
export function bodyTooSlow(err: BodyTooSlowError): ApiError {
  return new ApiError('INVALID_REQUEST', err.message, {
    status: 408,
    hint: 'Send the body again; on a slow link, send fewer files at once.',
  });
}

/** The one paced reader of each body (a request): what the handler reads and the final drain share one credit. */
const readers = new WeakMap<object, PacedBody>();

/** `source`'s paced reader, made on first use. */
export function pacedBody(source: AsyncIterable<Uint8Array | string>, pace: BodyPace): PacedBody {
  let body = readers.get(source);
  if (body === undefined) {
    body = new PacedBody(source, pace);
    readers.set(source, body);
  }
  return body;
}

/** `source`'s paced reader if anything has read through one. */
export function existingPacedBody(source: object): PacedBody | undefined {
  return readers.get(source);
}

/**
 * A body read under the pace rule. A reader that stops early abandons the rest rather than destroying
 * `source`: for a request, destroying it cuts the connection before the answer can be written; the rest
 * is drained (drain()) or the connection closed after the answer (src/serve/exchange.ts).
 */
export class PacedBody {
  /** The client used up its credit: the body will not be read further. */
  tooSlow = false;
  /** Every byte has been read. */
  finished = false;
  private readonly chunks: AsyncIterator<Uint8Array | string>;
  private readonly msPerByte: number;
  private creditMs: number;
  /** Reads run one at a time, so waiting is never counted twice. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    source: AsyncIterable<Uint8Array | string>,
    private readonly pace: BodyPace,
  ) {
    this.chunks = source[Symbol.asyncIterator]();
    this.msPerByte = 1000 / pace.minBytesPerS;
    this.creditMs = pace.stallMs;
  }

  /** The next chunk, or null at the end; throws BodyTooSlowError once the credit is used up. */
  next(): Promise<Uint8Array | null> {
    const read = this.queue.then(() => this.pull());
    this.queue = read.catch(() => {});
    return read;
  }

  /** The chunks as they come (the rest stays unread if the consumer stops early). */
  async *read(): AsyncGenerator<Uint8Array, void, undefined> {
    for (let chunk = await this.next(); chunk !== null; chunk = await this.next()) yield chunk;
  }

  /** Reads and drops whatever is left, under the same credit. */
  async drain(): Promise<void> {
    while ((await this.next()) !== null);
  }

  private async pull(): Promise<Uint8Array | null> {
    if (this.finished) return null;
    if (this.tooSlow) throw new BodyTooSlowError(this.pace);
    const waitStarted = performance.now();
    let next: IteratorResult<Uint8Array | string>;
    try {
      next = await within(this.chunks.next(), this.creditMs, this.pace);
    } catch (err) {
      if (err instanceof BodyTooSlowError) this.tooSlow = true;
      throw err;
    }
    if (next.done) {
      this.finished = true;
      return null;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    const waitedMs = performance.now() - waitStarted;
    this.creditMs = Math.min(this.pace.stallMs, this.creditMs - waitedMs + chunk.byteLength * this.msPerByte);
    return chunk;
  }
}

/** `promise`, or BodyTooSlowError if it has not settled within `ms` (a later rejection is swallowed). */
function within<T>(promise: Promise<T>, ms: number, pace: BodyPace): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new BodyTooSlowError(pace)), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
