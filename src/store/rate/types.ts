// Rate-limit counter store: fixed windows, one atomic increment per request.

export interface RateStore {
  /**
   * Atomically adds one to the counter `key` and returns the new count. The counter starts at zero and
   * disappears at `expiresAtMs` (the end of its window).
   */
  increment(key: string, expiresAtMs: number): Promise<number>;
  /** The counter `key` without changing it (0 when absent or past its window). */
  peek(key: string): Promise<number>;
  close(): Promise<void>;
}
