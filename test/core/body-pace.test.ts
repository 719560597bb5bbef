// The pace rule of request bodies (issue 19 item 6): a credit of waiting time, spent while the server waits
// for the client and earned back per byte; a slow consumer is not the client's fault. Real timers, short
// bounds (the rule runs on socket time, which the movable clock does not drive).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BodyPace, BodyTooSlowError, pacedBody } from '../../src/core/body-pace.js';

const PACE: BodyPace = { stallMs: 300, minBytesPerS: 1000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A body yielding `count` chunks of `size` bytes, waiting `gapMs(i)` before chunk i. */
async function* source(count: number, size: number, gapMs: (i: number) => number) {
  for (let i = 0; i < count; i++) {
    await sleep(gapMs(i));
    yield Buffer.alloc(size, i);
  }
}

/** Reads the whole body through the rule; resolves with the bytes read, or the error and when it came. */
async function consume(body: AsyncIterable<Uint8Array>, consumerMs = 0) {
  const started = Date.now();
  let bytes = 0;
  try {
    for await (const chunk of pacedBody(body, PACE).read()) {
      bytes += chunk.byteLength;
      if (consumerMs > 0) await sleep(consumerMs);
    }
    return { bytes, error: null, atMs: Date.now() - started };
  } catch (error) {
    return { bytes, error, atMs: Date.now() - started };
  }
}

describe('pacedBody', () => {
  test('a silent client is cut after the stall bound', async () => {
    const res = await consume(source(1, 10, () => 5000));
    assert.ok(res.error instanceof BodyTooSlowError);
    assert.ok(res.atMs >= 290 && res.atMs < 1500, `cut after ${res.atMs} ms`);
  });

  test('a trickle (1 byte every 100 ms, 10 B/s against 1000 B/s) is cut within about the stall bound', async () => {
    const res = await consume(source(100, 1, () => 100));
    assert.ok(res.error instanceof BodyTooSlowError);
    assert.ok(res.atMs < 1500, `cut after ${res.atMs} ms`);
    assert.ok(res.bytes <= 10);
  });

  test('a body above the minimum rate passes however long it takes', async () => {
    // 100 bytes every 50 ms = 2000 B/s for 1 s, over three times the stall bound.
    const res = await consume(source(20, 100, () => 50));
    assert.equal(res.error, null);
    assert.equal(res.bytes, 2000);
    assert.ok(res.atMs > 3 * PACE.stallMs);
  });

  test('a pause shorter than the stall bound, after a good pace, passes', async () => {
    const res = await consume(source(10, 500, (i) => (i === 5 ? 250 : 10)));
    assert.equal(res.error, null);
    assert.equal(res.bytes, 5000);
  });

  test('a body slightly under the minimum rate runs out of credit', async () => {
    // 30 bytes every 50 ms = 600 B/s: each chunk earns 30 ms for 50 ms of waiting.
    const res = await consume(source(100, 30, () => 50));
    assert.ok(res.error instanceof BodyTooSlowError);
    assert.ok(res.atMs > PACE.stallMs, `cut after ${res.atMs} ms: credit was drawn down, not reset`);
  });

  test('time the consumer spends is not charged to the client', async () => {
    // Bytes are there at once; the consumer (a disk or S3 write) takes 200 ms a chunk, 1.2 s in all.
    const res = await consume(
      source(6, 1, () => 0),
      200,
    );
    assert.equal(res.error, null);
    assert.equal(res.bytes, 6);
  });

  test('the drain continues under the credit the reader left', async () => {
    const body = pacedBody(
      source(100, 1, () => 100),
      PACE,
    );
    const reader = body.read();
    await reader.next();
    await reader.return(undefined);
    await assert.rejects(body.drain(), BodyTooSlowError);
    assert.equal(body.tooSlow, true);
  });
});
