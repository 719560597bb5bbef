// In-process rate-limit counters. Node runs JavaScript on one thread and increment() does not await
// between read and write, so concurrent requests can never over-admit.

import type { Clock } from '../../shared/clock.js';
import type { RateStore } from './types.js';

const SWEEP_EVERY_N = 1000;

export class MemoryRateStore implements RateStore {
  private readonly counters = new Map<string, { count: number; expiresAtMs: number }>();
  private calls = 0;

  constructor(private readonly clock: Clock) {}

  async increment(key: string, expiresAtMs: number): Promise<number> {
    const now = this.clock.now();
    if (++this.calls % SWEEP_EVERY_N === 0) this.sweep(now);
    const entry = this.counters.get(key);
    if (entry === undefined || entry.expiresAtMs <= now) {
      this.counters.set(key, { count: 1, expiresAtMs });
      return 1;
    }
    entry.count += 1;
    return entry.count;
  }

  async peek(key: string): Promise<number> {
    const entry = this.counters.get(key);
    return entry === undefined || entry.expiresAtMs <= this.clock.now() ? 0 : entry.count;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.counters) if (entry.expiresAtMs <= now) this.counters.delete(key);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}
