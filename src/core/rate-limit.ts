// Rate-limit rule: one-hour windows aligned to the top of the hour; anonymous callers by IP, signed-in
// callers by account, each with its plan's limit (spec "Rate limits").

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

export async function checkRateLimit(
  store: RateStore,
  subject: string,
  limit: number,
  nowMs: number,
): Promise<RateDecision> {
  const windowStart = Math.floor(nowMs / RATE_WINDOW_MS) * RATE_WINDOW_MS;
  const windowEnd = windowStart + RATE_WINDOW_MS;
  const count = await store.increment(`${subject}:${windowStart}`, windowEnd);
  return {
    limit,
    remaining: Math.max(0, limit - count),
    resetAtS: windowEnd / 1000,
    allowed: count <= limit,
    retryAfterS: Math.max(1, Math.ceil((windowEnd - nowMs) / 1000)),
  };
}
