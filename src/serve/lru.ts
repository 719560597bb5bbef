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

/** An entry of a SharedByteLru: in its partition's Map by key, and in the shared eviction order. */
interface SharedSlot {
  value: unknown;
  readonly bytes: number;
  /** Set on every hit; eviction clears it once (a "second chance") before dropping the entry. */
  referenced: boolean;
  readonly partition: LruPartition<unknown>;
  readonly key: string;
}

/**
 * One kind of entry in a byte budget shared by several kinds (SharedByteLru): its own keys (a Map of its
 * own, so a lookup hashes the caller's key as it is: issue 23 measured a prefixed key, a new string per
 * request, at 4 % of the site server's CPU on a 404) and byte count, the shared eviction order.
 */
export class LruPartition<V> {
  /** Bytes charged by this partition's entries. */
  bytes = 0;
  private readonly slots = new Map<string, SharedSlot>();

  constructor(
    private readonly shared: SharedByteLru,
    /** A value charged more than this is not stored (so one kind cannot take the whole budget at once). */
    readonly maxItemBytes: number,
    /** Called for every entry of this partition that leaves, with its key. */
    readonly onDrop?: (key: string, value: V) => void,
  ) {}

  /** The cached value (marking it recently used), or undefined. */
  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    slot.referenced = true;
    return slot.value as V;
  }

  /** As ByteLru.set; false (and the key's old value gone) when `bytes` exceeds maxItemBytes. */
  set(key: string, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxItemBytes || bytes > this.shared.maxBytes) return false;
    const slot: SharedSlot = {
      value,
      bytes,
      referenced: false,
      partition: this as LruPartition<unknown>,
      key,
    };
    this.slots.set(key, slot);
    this.bytes += bytes;
    this.shared.added(slot);
    return true;
  }

  delete(key: string): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.shared.removed(slot);
    this.dropped(slot);
    return true;
  }

  /** Drops this partition's entries for which `test` is true (O(entries of this partition); events are rare). */
  deleteWhere(test: (key: string, value: V) => boolean): void {
    for (const slot of this.slots.values()) {
      if (test(slot.key, slot.value as V)) {
        this.shared.removed(slot);
        this.dropped(slot);
      }
    }
  }

  clear(): void {
    this.deleteWhere(() => true);
  }

  /** @internal the entry leaves this partition (deleted here, or evicted by SharedByteLru). */
  dropped(slot: SharedSlot): void {
    this.slots.delete(slot.key);
    this.bytes -= slot.bytes;
    this.onDrop?.(slot.key, slot.value as V);
  }
}

/**
 * A byte budget several kinds of entry share (the site server's host routes, site states and file bytes):
 * one second-chance order over all of them, so memory goes to whichever kind the traffic reuses, instead of
 * fixed shares that leave one kind's budget idle while another kind misses.
 */
export class SharedByteLru {
  private readonly names = new Set<string>();
  /** Every entry of every partition, oldest first (Set iteration is insertion order). */
  private readonly order = new Set<SharedSlot>();
  private usedBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** A partition; `name` (one per partition) only tells them apart. */
  partition<V>(
    name: string,
    maxItemBytes: number = this.maxBytes,
    onDrop?: (key: string, value: V) => void,
  ): LruPartition<V> {
    if (this.names.has(name)) throw new Error(`partition ${name} exists`);
    this.names.add(name);
    return new LruPartition<V>(this, maxItemBytes, onDrop);
  }

  get bytes(): number {
    return this.usedBytes;
  }

  /** @internal a partition stored `slot`: charge it, then evict down to the budget (never `slot` itself). */
  added(slot: SharedSlot): void {
    this.order.add(slot);
    this.usedBytes += slot.bytes;
    while (this.usedBytes > this.maxBytes && this.order.size > 1) {
      const oldest = this.order.values().next().value as SharedSlot;
      this.order.delete(oldest);
      if (oldest === slot || oldest.referenced) {
        oldest.referenced = false;
        this.order.add(oldest); // second chance (or the newcomer): back to the young end
        continue;
      }
      this.usedBytes -= oldest.bytes;
      oldest.partition.dropped(oldest);
    }
  }

  /** @internal a partition dropped `slot` itself. */
  removed(slot: SharedSlot): void {
    if (this.order.delete(slot)) this.usedBytes -= slot.bytes;
  }
}
