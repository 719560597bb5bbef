// Named, expiring leases so that only one node at a time runs singleton jobs (sweeper, blob GC).

export interface Lease {
  /**
   * Takes lease `name` for `ttlMs` if nobody holds it, or renews it for another `ttlMs` if this holder
   * already does. Returns whether this holder now holds it. Call again well before `ttlMs` runs out.
   */
  tryAcquire(name: string, ttlMs: number): Promise<boolean>;
  /** Gives lease `name` up if (and only if) this holder holds it. */
  release(name: string): Promise<void>;
  /** Releases every lease this holder took and frees its resources. */
  close(): Promise<void>;
}

/** Lease TTLs are whole positive milliseconds. */
export function checkLeaseTtl(ttlMs: number): number {
  if (!Number.isFinite(ttlMs) || ttlMs < 1) throw new RangeError(`lease ttl must be >= 1 ms, got ${ttlMs}`);
  return Math.ceil(ttlMs);
}
