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
   * @param onDrop called for every entry that leaves (evicted, deleted, replaced, cleared): lets an owner
   *   keep an index of the entries in step with the cache.
   */
  constructor(
    readonly maxBytes: number,
    readonly maxItemBytes: number = maxBytes,
    private readonly onDrop?: (key: K, value: V, bytes: number) => void,
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
    this.onDrop?.(key, slot.value, slot.bytes);
    return true;
  }

  /** Drops every entry for which `test` is true (used by invalidation; O(n), events are rare). */
  deleteWhere(test: (key: K, value: V) => boolean): void {
    for (const [key, slot] of this.slots) {
      if (test(key, slot.value)) {
        this.slots.delete(key);
        this.usedBytes -= slot.bytes;
        this.onDrop?.(key, slot.value, slot.bytes);
      }
    }
  }

  clear(): void {
    if (this.onDrop !== undefined)
      for (const [key, slot] of this.slots) this.onDrop(key, slot.value, slot.bytes);
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
      this.onDrop?.(oldest, slot.value, slot.bytes);
    }
  }
}

/**
 * One kind of entry in a byte budget shared by several kinds (SharedByteLru): its own keys and byte count,
 * the shared eviction order. Keys are stored with the partition's one-character prefix.
 */
export class LruPartition<V> {
  /** Bytes charged by this partition's entries. */
  bytes = 0;

  constructor(
    private readonly shared: ByteLru<string, unknown>,
    private readonly prefix: string,
    /** A value charged more than this is not stored (so one kind cannot take the whole budget at once). */
    readonly maxItemBytes: number,
    /** Called for every entry of this partition that leaves, with its key without the prefix. */
    readonly onDrop?: (key: string, value: V) => void,
  ) {}

  get(key: string): V | undefined {
    return this.shared.get(this.prefix + key) as V | undefined;
  }

  /** As ByteLru.set; false (and the key's old value gone) when `bytes` exceeds maxItemBytes. */
  set(key: string, value: V, bytes: number): boolean {
    if (bytes > this.maxItemBytes) {
      this.delete(key);
      return false;
    }
    if (!this.shared.set(this.prefix + key, value, bytes)) return false;
    this.bytes += bytes;
    return true;
  }

  delete(key: string): boolean {
    return this.shared.delete(this.prefix + key);
  }

  /** Drops this partition's entries for which `test` is true (O(every entry of the budget); events are rare). */
  deleteWhere(test: (key: string, value: V) => boolean): void {
    const { prefix } = this;
    this.shared.deleteWhere((k, v) => k.startsWith(prefix) && test(k.slice(prefix.length), v as V));
  }

  clear(): void {
    this.deleteWhere(() => true);
  }

  /** @internal called by SharedByteLru when one of this partition's entries leaves. */
  dropped(key: string, value: unknown, bytes: number): void {
    this.bytes -= bytes;
    this.onDrop?.(key, value as V);
  }
}

/**
 * A ByteLru whose budget several kinds of entry share (the site server's host routes, site states and file
 * bytes): one second-chance order over all of them, so memory goes to whichever kind the traffic reuses,
 * instead of fixed shares that leave one kind's budget idle while another kind misses.
 */
export class SharedByteLru {
  private readonly partitions = new Map<string, LruPartition<unknown>>();
  private readonly lru: ByteLru<string, unknown>;

  constructor(readonly maxBytes: number) {
    this.lru = new ByteLru<string, unknown>(maxBytes, maxBytes, (key, value, bytes) =>
      this.partitions.get(key[0]!)?.dropped(key.slice(1), value, bytes),
    );
  }

  /** A partition named by one character (its key prefix). */
  partition<V>(
    prefix: string,
    maxItemBytes: number = this.maxBytes,
    onDrop?: (key: string, value: V) => void,
  ): LruPartition<V> {
    if (prefix.length !== 1 || this.partitions.has(prefix)) throw new Error(`bad partition prefix ${prefix}`);
    const partition = new LruPartition<V>(this.lru, prefix, maxItemBytes, onDrop);
    this.partitions.set(prefix, partition as LruPartition<unknown>);
    return partition;
  }

  get bytes(): number {
    return this.lru.bytes;
  }
}
