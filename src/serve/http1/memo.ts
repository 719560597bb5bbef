// The fast path's response memo: a site response the site server marked reusable (a whole public file
// from memory, see SiteResponse.send) is kept as its ready-to-send bytes, header fields and body together
// (a small one in a slot of the memo's slab, a larger one in a buffer of its own), keyed by what the
// response depends on. The next identical request is one Map lookup and one write: no host, site, file or
// body lookups, so serving 100,000 sites touches little more memory per request than serving 10. An entry
// holds until a change event for its site or host (or one for every host) and until the site's expiry. Its
// memory is a partition of the site server's serving budget.

import type { ReuseTally } from '../../core/analytics.js';
import { ownedString } from '../../shared/strings.js';
import type { LruPartition } from '../lru.js';
import { type SlabPage, WireSlab } from './wire-slab.js';

/** A memoized response. */
export class MemoEntry {
  constructor(
    /**
     * Its bytes are `length` bytes of this buffer from `offset`: the header fields (after Date and
     * Connection), the blank line, then the body. A slab page's (`page`), or the entry's own buffer.
     */
    readonly bytes: Buffer,
    readonly offset: number,
    readonly length: number,
    /** The slab page holding the bytes (they are only copied out: see wire-slab.ts); null: own buffer. */
    readonly page: SlabPage | null,
    /** The site and host the response was made for (their change events end it). */
    readonly slug: string,
    readonly host: string,
    /** The change-event count it is known valid at: made then, or checked since (see ResponseMemo.get). */
    public generation: number,
    /** Epoch ms after which the entry must not be used (the site's expiry). */
    readonly until: number,
    /** What answering it again records for visitor analytics (core/analytics.ts); undefined: nothing. */
    readonly tally: ReuseTally | undefined,
  ) {}
}

/** What a response's entry is made with, beside its bytes. */
export interface MemoFacts {
  slug: string;
  host: string;
  generation: number;
  until: number;
  tally: ReuseTally | undefined;
}

/** What ends memoized responses: the site server's change events. */
export interface MemoValidity {
  /** Whether no event that could change what `slug` answers on `host` came after `generation`. */
  unchangedSince(slug: string, host: string, generation: number): boolean;
}

/** Where the memo's entries are kept; it calls `onDrop` for each entry that leaves (evicted, deleted, replaced). */
export type MemoStore = (onDrop: (key: string, entry: MemoEntry) => void) => LruPartition<MemoEntry>;

/** Responses larger than this are not memoized (writing them costs far more than the lookups saved). */
export const MEMO_MAX_ENTRY_BYTES = 64 * 1024;
/**
 * Heap held by an entry beside its bytes and key: the entry, its cache slot and Map slot, the tally's object
 * and the host it was made for (issue 23 measured 436 bytes a one-page site's entry at 100,000 entries).
 */
export const MEMO_ENTRY_OVERHEAD_BYTES = 420;
/** An entry with a buffer of its own holds that Buffer, its ArrayBuffer and their malloc'd parts too. */
export const MEMO_OWN_BUFFER_OVERHEAD_BYTES = 200;
/** The most one entry is charged (its key included); a longer key leaves the response unmemoized. */
export const MEMO_MAX_CHARGE_BYTES = MEMO_MAX_ENTRY_BYTES + 8 * 1024;

export class ResponseMemo {
  private readonly entries: LruPartition<MemoEntry>;
  /** Small responses' bytes (one ArrayBuffer per response cost more than the response: wire-slab.ts). */
  private readonly slab = new WireSlab();

  constructor(
    store: MemoStore,
    private readonly validity: MemoValidity,
  ) {
    this.entries = store((_key, entry) => {
      if (entry.page !== null) this.slab.free(entry.page, entry.offset);
    });
  }

  /**
   * The key of a GET for `target` on `host` (the raw Host field) with this Accept-Encoding field: the only
   * inputs of a reusable response once Range, conditional and Cookie fields are absent. The query is left
   * out (reusable responses never depend on it), so `?random` cache-busting cannot churn the memo.
   */
  static key(host: string, target: string, acceptEncoding: string | undefined): string {
    const q = target.indexOf('?');
    const path = q < 0 ? target : target.slice(0, q);
    // LF cannot occur in a parsed field value or target, so the parts cannot run into each other.
    return acceptEncoding === undefined ? `${host}\n${path}` : `${host}\n${path}\n${acceptEncoding}`;
  }

  /** The entry for `key` if it still holds at `generation` (the current count) and `now`. */
  get(key: string, generation: number, now: number): MemoEntry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    if (entry.generation !== generation) {
      // Events came since: only those for this entry's site or host (or for all hosts) end it. Checked
      // once per event count, so a hit after the check costs what it did before.
      if (!this.validity.unchangedSince(entry.slug, entry.host, entry.generation)) {
        this.entries.delete(key);
        return undefined;
      }
      entry.generation = generation;
    }
    return entry;
  }

  /**
   * Memoizes `fields` (latin1 header text ending in the blank line) and `body` under `key`; false when the
   * response is too large, or charged more than one entry may be (nothing is stored).
   */
  store(key: string, fields: string, body: Buffer, facts: MemoFacts): boolean {
    const length = fields.length + body.length;
    if (length > MEMO_MAX_ENTRY_BYTES) return false;
    // The key is a copy: as made, it is slices of the request's head text, and would keep it all alive.
    const owned = ownedString(key);
    const slotBytes = WireSlab.slotBytes(length);
    let bytes: Buffer;
    let offset = 0;
    let page: SlabPage | null = null;
    let charge = owned.length * 2 + MEMO_ENTRY_OVERHEAD_BYTES;
    if (slotBytes > 0) {
      ({ page, offset } = this.slab.alloc(length));
      bytes = page.bytes;
      charge += slotBytes;
    } else {
      bytes = Buffer.allocUnsafeSlow(length);
      charge += length + MEMO_OWN_BUFFER_OVERHEAD_BYTES;
    }
    bytes.write(fields, offset, 'latin1');
    body.copy(bytes, offset + fields.length);
    const { slug, host, generation, until, tally } = facts;
    const entry = new MemoEntry(bytes, offset, length, page, slug, host, generation, until, tally);
    if (this.entries.set(owned, entry, charge)) return true;
    if (entry.page !== null) this.slab.free(entry.page, entry.offset);
    return false;
  }

  /** Bytes charged for the entries. */
  get bytes(): number {
    return this.entries.bytes;
  }

  /** Bytes of the slab pages held (small entries' bytes, with their slots' free space). */
  get slabBytes(): number {
    return this.slab.bytes;
  }
}
