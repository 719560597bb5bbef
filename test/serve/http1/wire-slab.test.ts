import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  SLAB_MAX_BYTES,
  SLAB_PAGE_BYTES,
  type SlabPage,
  WireSlab,
} from '../../../src/serve/http1/wire-slab.js';

interface Held {
  page: SlabPage;
  offset: number;
  bytes: Buffer;
}

function put(slab: WireSlab, bytes: Buffer): Held {
  const { page, offset } = slab.alloc(bytes.length);
  bytes.copy(page.bytes, offset);
  return { page, offset, bytes };
}

function intact(h: Held): boolean {
  return h.page.bytes.subarray(h.offset, h.offset + h.bytes.length).equals(h.bytes);
}

describe('WireSlab', () => {
  test('slots are charged by the 64-byte class that holds them; larger than a slot holds is refused', () => {
    assert.equal(WireSlab.slotBytes(1), 64);
    assert.equal(WireSlab.slotBytes(64), 64);
    assert.equal(WireSlab.slotBytes(65), 128);
    assert.equal(WireSlab.slotBytes(1400), 1408);
    assert.equal(WireSlab.slotBytes(SLAB_MAX_BYTES), SLAB_MAX_BYTES);
    assert.equal(WireSlab.slotBytes(SLAB_MAX_BYTES + 1), -1);
    assert.throws(() => new WireSlab().alloc(SLAB_MAX_BYTES + 1), RangeError);
  });

  test('what one slot holds never changes while others are stored and freed around it', () => {
    // A slot that overlapped another would send one site's bytes in another's response.
    const slab = new WireSlab();
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const held: Held[] = [];
    for (let i = 0; i < 20_000; i++) {
      if (held.length > 0 && random(3) === 0) {
        const [h] = held.splice(random(held.length), 1);
        assert.ok(intact(h!), 'a slot kept its bytes until freed');
        slab.free(h!.page, h!.offset);
      } else {
        const bytes = Buffer.alloc(1 + random(SLAB_MAX_BYTES), i % 251);
        held.push(put(slab, bytes));
      }
    }
    for (const h of held) assert.ok(intact(h), 'every slot still held keeps its bytes');
  });

  test("a freed slot is the next one given; an emptied page goes back, except its class's last", () => {
    const slab = new WireSlab();
    const a = put(slab, Buffer.alloc(1000, 1));
    slab.free(a.page, a.offset);
    const b = put(slab, Buffer.alloc(990, 2));
    assert.equal(b.page, a.page);
    assert.equal(b.offset, a.offset);
    // Two pages of the 1024-byte class, then all of it freed: one page stays for the next entry.
    const perPage = Math.floor(SLAB_PAGE_BYTES / 1024);
    const many = [b, ...Array.from({ length: perPage * 2 - 1 }, () => put(slab, Buffer.alloc(1000)))];
    assert.equal(slab.pages, 2);
    for (const h of many) slab.free(h.page, h.offset);
    assert.equal(slab.pages, 1);
    assert.equal(slab.bytes, perPage * 1024);
  });

  test('memory follows what is held: churn at a steady count does not grow the slab', () => {
    const slab = new WireSlab();
    const held: Held[] = [];
    for (let i = 0; i < 5_000; i++) held.push(put(slab, Buffer.alloc(500 + (i % 7) * 300)));
    const pages = slab.pages;
    // Oldest out, newest in (as LRU eviction does), 50,000 times.
    for (let i = 0; i < 50_000; i++) {
      const h = held.shift()!;
      slab.free(h.page, h.offset);
      held.push(put(slab, Buffer.alloc(500 + (i % 7) * 300)));
    }
    assert.ok(slab.pages <= pages + 7, `pages ${pages} -> ${slab.pages}`);
  });
});
