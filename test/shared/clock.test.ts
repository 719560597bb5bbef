import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Clock, COARSE_CLOCK_MS, MovableClock, systemClock } from '../../src/shared/clock.js';

test('the system clock read coarsely is never ahead of it and falls behind by at most COARSE_CLOCK_MS', async () => {
  const coarseNow = systemClock.coarseNow!;
  let seen = coarseNow();
  // Several readings across a few timer periods: each within the bound, and time moves on.
  for (let i = 0; i < 8; i++) {
    await sleep(COARSE_CLOCK_MS / 2);
    const before = Date.now();
    const c = coarseNow();
    // A timer may run late by the event loop's own delays; a busy CI machine gets 4 periods of slack.
    assert.ok(c <= before, `coarse ${c} ahead of ${before}`);
    assert.ok(before - c <= 5 * COARSE_CLOCK_MS, `coarse ${c} behind ${before} by ${before - c} ms`);
    assert.ok(c >= seen);
    seen = c;
  }
  assert.ok(seen > Date.now() - 10 * COARSE_CLOCK_MS);
});

test('a test clock has no coarse reading: counters read its exact now()', () => {
  const clock: Clock = new MovableClock();
  assert.equal(clock.coarseNow, undefined);
});
