// Bounded in-memory cache measured in bytes, with second-chance (CLOCK) eviction: close to LRU, but a hit
// costs one Map lookup and one flag write instead of a delete + re-insert.

interface Slot<V> {
  value: V;
  bytes: number;
  /** Set on every hit; eviction clears it once (a "second chance") before dropping the entry. */
  referenced: boolean;
}

export class ByteLru<K, V> {
  private readonly slots = new Map<K, Slot<V>>();
  private usedBytes = 0;

  /**
   * @param maxBytes total of the `bytes` charged by `set` that the cache keeps.
   * @param maxItemBytes a value charged more than this is not stored at all (default: `maxBytes`).
   */
  constructor(
    readonly maxBytes: number,
    readonly maxItemBytes: number = maxBytes,
  ) {}

  /** The cached value (marking it recently used), or undefined. */
  get(key: K): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    slot.referenced = true;
    return slot.value;
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  /**
   * Stores `value` charged `bytes`, evicting the least recently used entries until the total fits.
   * The entry just stored is never evicted by its own insertion. Returns false (and stores nothing) when
   * `bytes` exceeds `maxItemBytes`.
   */
  set(key: K, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxItemBytes) return false;
    this.slots.set(key, { value, bytes, referenced: false });
    this.usedBytes += bytes;
    this.evict(key);
    return true;
  }

  delete(key: K): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.slots.delete(key);
    this.usedBytes -= slot.bytes;
    return true;
  }

  /** Drops every entry for which `test` is true (used by invalidation; O(n), events are rare). */
  deleteWhere(test: (key: K, value: V) => boolean): void {
    for (const [key, slot] of this.slots) {
      if (test(key, slot.value)) {
        this.slots.delete(key);
        this.usedBytes -= slot.bytes;
      }
    }
  }

  clear(): void {
    this.slots.clear();
    this.usedBytes = 0;
  }

  /** Bytes currently charged. */
  get bytes(): number {
    return this.usedBytes;
  }

  get size(): number {
    return this.slots.size;
  }

  private evict(keep: K): void {
    while (this.usedBytes > this.maxBytes && this.slots.size > 1) {
      // Map iteration order is insertion order: the first key is the oldest.
      const oldest = this.slots.keys().next().value as K;
      const slot = this.slots.get(oldest)!;
      this.slots.delete(oldest);
      if (oldest === keep) {
        this.slots.set(oldest, slot);
        continue;
      }
      if (slot.referenced) {
        slot.referenced = false;
        this.slots.set(oldest, slot); // second chance: back to the young end
        continue;
      }
      this.usedBytes -= slot.bytes;
    }
  }
}
