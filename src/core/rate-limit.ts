// Rate-limit rule: one-hour windows aligned to the top of the hour; anonymous callers by IP, signed-in
// callers by account, each with its plan's limit (spec "Rate limits"). The same fixed-window counter
// serves the sign-in limits and the site password gate (its own window length).

import type { RateStore } from '../store/rate/types.js';

export const RATE_WINDOW_MS = 3_600_000;

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds of the next window start (X-RateLimit-Reset). */
  resetAtS: number;
  allowed: boolean;
  /** Seconds until the window resets (Retry-After). */
  retryAfterS: number;
}

/** The window `checkRateLimit` would count `subject` in, as it stands, without counting anything. */
export async function peekRateLimit(
  store: RateStore,
  subject: string,
  limit: number,
  nowMs: number,
  windowMs: number = RATE_WINDOW_MS,
): Promise<RateDecision> {
  const windowStart = Math.floor(nowMs / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  const count = await store.peek(`${subject}:${windowStart}`);
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetAtS: windowEnd / 1000,
    allowed: count < limit,
    retryAfterS: Math.max(1, Math.ceil((windowEnd - nowMs) / 1000)),
  };
}

/**
 * Counts one request of `subject` in the current fixed window (aligned to multiples of `windowMs` since the
 * epoch: the top of the hour by default) and says whether it is within `limit`. Counted before the
 * request is served, so parallel requests cannot get past the limit.
 */
export async function checkRateLimit(
  store: RateStore,
  subject: string,
  limit: number,
  nowMs: number,
  windowMs: number = RATE_WINDOW_MS,
): Promise<RateDecision> {
  const windowStart = Math.floor(nowMs / windowMs) * windowMs;
  const windowEnd = windowStart + windowMs;
  const count = await store.increment(`${subject}:${windowStart}`, windowEnd);
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetAtS: windowEnd / 1000,
    allowed: count <= limit,
    retryAfterS: Math.max(1, Math.ceil((windowEnd - nowMs) / 1000)),
  };
}
