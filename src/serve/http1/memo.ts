// The fast path's response memo: a site response the site server marked reusable (a whole public file
// from memory, see SiteResponse.send) is kept as its ready-to-send bytes, header fields and body in one
// buffer, keyed by what the response depends on. The next identical request is one Map lookup and one
// write: no host, site, file or body lookups, so serving 100,000 sites touches little more memory per
// request than serving 10. An entry holds until a change event for its site or host (or one for every
// host) and until the site's expiry. Its memory is a partition of the site server's serving budget.

import type { ReuseTally } from '../../core/analytics.js';
import type { LruPartition } from '../lru.js';

export interface MemoEntry {
  /** Header fields (after Date and Connection), the blank line, then the body. */
  readonly wire: Buffer;
  /** The site and host the response was made for (their change events end it). */
  readonly slug: string;
  readonly host: string;
  /** The change-event count it is known valid at: made then, or checked since (see ResponseMemo.get). */
  generation: number;
  /** Epoch ms after which the entry must not be used (the site's expiry). */
  readonly until: number;
  /** What answering it again records for visitor analytics (core/analytics.ts); undefined: nothing. */
  readonly tally: ReuseTally | undefined;
}

/** What ends memoized responses: the site server's change events. */
export interface MemoValidity {
  /** Whether no event that could change what `slug` answers on `host` came after `generation`. */
  unchangedSince(slug: string, host: string, generation: number): boolean;
}

/** Responses larger than this are not memoized (writing them costs far more than the lookups saved). */
export const MEMO_MAX_ENTRY_BYTES = 64 * 1024;
/**
 * Heap held by an entry beside its wire bytes: the Buffer and its ArrayBuffer (~200 bytes with the
 * allocation's header), the entry, the cache slot and Map slot (~150), and the tally's object (~60).
 */
export const MEMO_ENTRY_OVERHEAD_BYTES = 420;
/** The most one entry is charged (its key included); a longer key leaves the response unmemoized. */
export const MEMO_MAX_CHARGE_BYTES = MEMO_MAX_ENTRY_BYTES + 8 * 1024;

export class ResponseMemo {
  constructor(
    private readonly entries: LruPartition<MemoEntry>,
    private readonly validity: MemoValidity,
  ) {}

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

  /** Stores `entry`; false when it is charged more than one entry may be (it is not stored). */
  set(key: string, entry: MemoEntry): boolean {
    return this.entries.set(key, entry, entry.wire.length + key.length * 2 + MEMO_ENTRY_OVERHEAD_BYTES);
  }

  get bytes(): number {
    return this.entries.bytes;
  }
}
