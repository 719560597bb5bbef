// Bounded in-memory cache measured in bytes, with second-chance (CLOCK) eviction: close to LRU, but a hit
// costs one Map lookup and one flag write instead of a delete + re-insert.

/**
 * An entry's place in an eviction order: a doubly linked list through the entries themselves. (A Map or
 * Set used as a queue is not one: V8 leaves a deleted entry's slot as a hole until the table is rebuilt,
 * and every `keys().next()` walks the holes at the front from the start: issue 23 measured 5-40 us per
 * eviction with 150,000 entries, most of a random spread's CPU over 100,000 sites.)
 */
interface OrderNode {
  prev: OrderNode | null;
  next: OrderNode | null;
  /** Set on every hit; eviction clears it once (a "second chance") before dropping the entry. */
  referenced: boolean;
}

/** Entries oldest first: O(1) to append, to unlink any entry, and to find the next to evict. */
class EvictionOrder<N extends OrderNode> {
  private head: N | null = null;
  private tail: N | null = null;
  /** Entries in the order. */
  size = 0;

  /** Appends `node` at the young end (it must not be in the order). */
  push(node: N): void {
    node.prev = this.tail;
    node.next = null;
    if (this.tail === null) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.size++;
  }

  /** Whether `node` is in this order. */
  has(node: N): boolean {
    return node.prev !== null || this.head === node;
  }

  unlink(node: N): void {
    if (node.prev === null) this.head = node.next as N | null;
    else node.prev.next = node.next;
    if (node.next === null) this.tail = node.prev as N | null;
    else node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    this.size--;
  }

  /** Moves `node` to the young end (a second chance). */
  requeue(node: N): void {
    if (node === this.tail) return;
    this.unlink(node);
    this.push(node);
  }

  /**
   * The entry to evict next: the oldest that is neither `keep` (the entry just stored) nor read since its
   * last chance. Read ones, and `keep`, go to the young end with the flag cleared (their second chance).
   * The order must hold an entry besides `keep`.
   */
  victim(keep: N): N {
    for (;;) {
      const oldest = this.head!;
      if (oldest !== keep && !oldest.referenced) return oldest;
      oldest.referenced = false;
      this.requeue(oldest);
    }
  }

  clear(): void {
    this.head = null;
    this.tail = null;
    this.size = 0;
  }
}

interface Slot<K, V> extends OrderNode {
  readonly key: K;
  value: V;
  bytes: number;
}

export class ByteLru<K, V> {
  private readonly slots = new Map<K, Slot<K, V>>();
  private readonly order = new EvictionOrder<Slot<K, V>>();
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
    const slot: Slot<K, V> = { key, value, bytes, referenced: false, prev: null, next: null };
    this.slots.set(key, slot);
    this.order.push(slot);
    this.usedBytes += bytes;
    this.evict(slot);
    return true;
  }

  delete(key: K): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    this.drop(slot);
    return true;
  }

  /** Drops every entry for which `test` is true (used by invalidation; O(n), events are rare). */
  deleteWhere(test: (key: K, value: V) => boolean): void {
    for (const [key, slot] of this.slots) if (test(key, slot.value)) this.drop(slot);
  }

  clear(): void {
    if (this.onDrop !== undefined)
      for (const [key, slot] of this.slots) this.onDrop(key, slot.value, slot.bytes);
    this.slots.clear();
    this.order.clear();
    this.usedBytes = 0;
  }

  /** Bytes currently charged. */
  get bytes(): number {
    return this.usedBytes;
  }

  get size(): number {
    return this.slots.size;
  }

  private drop(slot: Slot<K, V>): void {
    this.slots.delete(slot.key);
    this.order.unlink(slot);
    this.usedBytes -= slot.bytes;
    this.onDrop?.(slot.key, slot.value, slot.bytes);
  }

  private evict(keep: Slot<K, V>): void {
    while (this.usedBytes > this.maxBytes && this.order.size > 1) this.drop(this.order.victim(keep));
  }
}

/** An entry of a SharedByteLru: in its partition's Map by key, and in the shared eviction order. */
interface SharedSlot extends OrderNode {
  value: unknown;
  readonly bytes: number;
  readonly partition: LruPartition<unknown>;
  readonly key: string;
}

export interface PartitionOptions<V> {
  /** A value charged more than this is not stored (default: the whole budget). */
  maxItemBytes?: number;
  /** Called for every entry of this partition that leaves, with its key. */
  onDrop?: (key: string, value: V) => void;
  /**
   * New entries start as if read once: eviction passes over them once before it may drop them, while an
   * unread entry of another partition goes the first time. For entries worth more than what they were
   * built from (a finished response over the host, site and bytes that made it).
   */
  startsReferenced?: boolean;
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

  /** A value charged more than this is not stored (so one kind cannot take the whole budget at once). */
  readonly maxItemBytes: number;
  private readonly onDrop: ((key: string, value: V) => void) | undefined;
  private readonly startsReferenced: boolean;

  constructor(
    private readonly shared: SharedByteLru,
    options: PartitionOptions<V>,
  ) {
    this.maxItemBytes = options.maxItemBytes ?? shared.maxBytes;
    this.onDrop = options.onDrop;
    this.startsReferenced = options.startsReferenced ?? false;
  }

  /** The cached value (marking it recently used), or undefined. */
  get(key: string): V | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    slot.referenced = true;
    return slot.value as V;
  }

  /**
   * Clears the entry's read mark, if it is here: eviction drops it on its next pass unless it is read
   * again before (for an entry whose use something else now serves).
   */
  settle(key: string): void {
    const slot = this.slots.get(key);
    if (slot !== undefined) slot.referenced = false;
  }

  /** As ByteLru.set; false (and the key's old value gone) when `bytes` exceeds maxItemBytes. */
  set(key: string, value: V, bytes: number): boolean {
    this.delete(key);
    if (bytes > this.maxItemBytes || bytes > this.shared.maxBytes) return false;
    const slot: SharedSlot = {
      value,
      bytes,
      referenced: this.startsReferenced,
      partition: this as LruPartition<unknown>,
      key,
      prev: null,
      next: null,
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
  /** Every entry of every partition, oldest first. */
  private readonly order = new EvictionOrder<SharedSlot>();
  private usedBytes = 0;

  constructor(readonly maxBytes: number) {}

  /** A partition; `name` (one per partition) only tells them apart. */
  partition<V>(name: string, options: PartitionOptions<V> = {}): LruPartition<V> {
    if (this.names.has(name)) throw new Error(`partition ${name} exists`);
    this.names.add(name);
    return new LruPartition<V>(this, options);
  }

  get bytes(): number {
    return this.usedBytes;
  }

  /** @internal a partition stored `slot`: charge it, then evict down to the budget (never `slot` itself). */
  added(slot: SharedSlot): void {
    this.order.push(slot);
    this.usedBytes += slot.bytes;
    while (this.usedBytes > this.maxBytes && this.order.size > 1) {
      const victim = this.order.victim(slot);
      this.removed(victim);
      victim.partition.dropped(victim);
    }
  }

  /** @internal a partition dropped `slot` itself (or eviction did): out of the order and the charge. */
  removed(slot: SharedSlot): void {
    if (!this.order.has(slot)) return;
    this.order.unlink(slot);
    this.usedBytes -= slot.bytes;
  }
}
