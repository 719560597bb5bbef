// Where the memo keeps small responses' bytes: fixed-size slots in 64 KB pages, one size class per 64
// bytes, instead of one ArrayBuffer each. Issue 23 measured a node serving 100,000 one-page sites at random
// at 850 MB RSS for a 256 MB budget; per memoized response, the Buffer and ArrayBuffer objects (~180 bytes
// of V8 heap), the backing store's own allocations (~150 bytes of malloc) and the bytes themselves came back
// only after a major collection found them dead, and freed 1-4 KB chunks in LRU order left malloc's arena
// fragmented. A slot is reused the moment its entry leaves the memo, and a page goes back when it empties.
//
// Bytes in a slot are only ever copied out (the fast path copies a small response into its write buffer),
// never handed to a socket: a slot freed and refilled while a write still pointed at it would send another
// site's bytes.

/** Bytes of one page. */
export const SLAB_PAGE_BYTES = 64 * 1024;
/** Slot sizes step by this much (the most a slot wastes, less one byte). */
const SLOT_STEP = 64;
/**
 * Largest response kept in a slot; larger ones get a buffer of their own. With the status line, Date and
 * connection fields (~100 bytes) a slot's response still fits the half of Buffer's 8 KB pool that the fast
 * path copies small responses into.
 */
export const SLAB_MAX_BYTES = 3968;

/** A page of one size class: its bytes and which of its slots are free. */
export class SlabPage {
  readonly bytes: Buffer;
  /** Indexes of the free slots (a stack: the last freed is reused first, while its memory is warm). */
  readonly free: number[] = [];
  /** Slots in use. */
  used = 0;
  /** Where this page is in its class's `open` list; -1 when full (not listed). */
  openIndex = -1;

  constructor(readonly sizeClass: SizeClass) {
    this.bytes = Buffer.allocUnsafeSlow(sizeClass.slotBytes * sizeClass.slots);
    for (let i = sizeClass.slots - 1; i >= 0; i--) this.free.push(i);
  }
}

class SizeClass {
  readonly slots: number;
  /** Pages with a free slot; a new slot comes from the last one. */
  readonly open: SlabPage[] = [];

  constructor(readonly slotBytes: number) {
    this.slots = Math.floor(SLAB_PAGE_BYTES / slotBytes);
  }
}

/** A slot: its page, and where in the page's bytes it starts. */
export interface SlabSlot {
  readonly page: SlabPage;
  readonly offset: number;
}

export class WireSlab {
  private readonly classes: SizeClass[] = [];
  /** Pages held, over all classes. */
  pages = 0;
  /** Bytes of the pages held. */
  bytes = 0;

  constructor() {
    for (let bytes = SLOT_STEP; bytes <= SLAB_MAX_BYTES; bytes += SLOT_STEP)
      this.classes.push(new SizeClass(bytes));
  }

  /** Bytes a slot for `length` bytes takes (what to charge for it), or -1 if too large for a slot. */
  static slotBytes(length: number): number {
    if (length > SLAB_MAX_BYTES) return -1;
    return Math.max(1, Math.ceil(length / SLOT_STEP)) * SLOT_STEP;
  }

  /** A free slot of at least `length` bytes (0..SLAB_MAX_BYTES). */
  alloc(length: number): SlabSlot {
    if (!(length >= 0 && length <= SLAB_MAX_BYTES)) throw new RangeError(`no slot holds ${length} bytes`);
    const sizeClass = this.classes[WireSlab.slotBytes(length) / SLOT_STEP - 1]!;
    let page = sizeClass.open[sizeClass.open.length - 1];
    if (page === undefined) {
      page = new SlabPage(sizeClass);
      page.openIndex = sizeClass.open.length;
      sizeClass.open.push(page);
      this.pages++;
      this.bytes += page.bytes.length;
    }
    const slot = page.free.pop()!;
    page.used++;
    if (page.free.length === 0) this.unlist(page);
    return { page, offset: slot * sizeClass.slotBytes };
  }

  /** Gives back the slot at `offset` of `page`; it must not be used again. */
  free(page: SlabPage, offset: number): void {
    const sizeClass = page.sizeClass;
    page.free.push(offset / sizeClass.slotBytes);
    page.used--;
    if (page.openIndex < 0) {
      page.openIndex = sizeClass.open.length;
      sizeClass.open.push(page);
    }
    // An empty page goes back, unless it is its class's only open one (an entry stored and dropped in
    // turn would otherwise allocate and free a page each time).
    if (page.used === 0 && sizeClass.open.length > 1) {
      this.unlist(page);
      this.pages--;
      this.bytes -= page.bytes.length;
    }
  }

  private unlist(page: SlabPage): void {
    const open = page.sizeClass.open;
    const last = open.pop()!;
    if (last !== page) {
      open[page.openIndex] = last;
      last.openIndex = page.openIndex;
    }
    page.openIndex = -1;
  }
}
