// The fast path's response memo: a site response the site server marked reusable (a whole public file
// from memory, see SiteResponse.send) is kept as its ready-to-send bytes, header fields and body in one
// buffer, keyed by what the response depends on. The next identical request is one Map lookup and one
// write: no host, site, file or body lookups, so serving 5000 sites touches little more memory per request
// than serving 10. Entries are valid for one catalog generation (any change event ends them) and until the
// site's expiry; memory is bounded like the other caches.

import type { ReuseTally } from '../../core/analytics.js';
import { ByteLru } from '../lru.js';

export interface MemoEntry {
  /** Header fields (after Date and Connection), the blank line, then the body. */
  readonly wire: Buffer;
  readonly generation: number;
  /** Epoch ms after which the entry must not be used (the site's expiry). */
  readonly until: number;
  /** What answering it again records for visitor analytics (core/analytics.ts); undefined: nothing. */
  readonly tally: ReuseTally | undefined;
}

/** Responses larger than this are not memoized (writing them costs far more than the lookups saved). */
export const MEMO_MAX_ENTRY_BYTES = 64 * 1024;
/** Map key, Slot and entry objects, charged on top of the bytes. */
const ENTRY_OVERHEAD_BYTES = 200;

export class ResponseMemo {
  private readonly entries: ByteLru<string, MemoEntry>;

  constructor(maxBytes: number) {
    this.entries = new ByteLru(maxBytes, Math.min(maxBytes, MEMO_MAX_ENTRY_BYTES + ENTRY_OVERHEAD_BYTES));
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

  get(key: string, generation: number, now: number): MemoEntry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.generation !== generation || entry.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: MemoEntry): void {
    this.entries.set(key, entry, entry.wire.length + key.length * 2 + ENTRY_OVERHEAD_BYTES);
  }

  get bytes(): number {
    return this.entries.bytes;
  }
}
