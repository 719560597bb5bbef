import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type MemoEntry, ResponseMemo } from '../../../src/serve/http1/memo.js';
import { SLAB_PAGE_BYTES } from '../../../src/serve/http1/wire-slab.js';
import { SharedByteLru } from '../../../src/serve/lru.js';

const always = { unchangedSince: () => true };
const facts = (slug: string) => ({
  slug,
  host: `${slug}.example`,
  generation: 0,
  until: Number.MAX_SAFE_INTEGER,
  tally: undefined,
});

function memoOf(budget: number): { memo: ResponseMemo; shared: SharedByteLru } {
  const shared = new SharedByteLru(budget);
  const memo = new ResponseMemo(
    (onDrop) => shared.partition<MemoEntry>('r', { onDrop, startsReferenced: true }),
    always,
  );
  return { memo, shared };
}

function sent(entry: MemoEntry): string {
  return entry.bytes.toString('latin1', entry.offset, entry.offset + entry.length);
}

describe('ResponseMemo storage', () => {
  test('every hit answers the bytes stored for its key while entries are evicted and replaced around it', () => {
    // Small responses share slab pages: a slot given to one site while another's entry still pointed at it
    // would answer the wrong site's page.
    const { memo } = memoOf(400_000);
    const stored = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const site = `s${i % 3000}`;
      const key = `${site}.example\n/p${i % 7}`;
      const body = `<p>${site} ${i} ${'x'.repeat((i * 37) % 3000)}</p>`;
      const fields = `Content-Length: ${body.length}\r\n\r\n`;
      assert.ok(memo.store(key, fields, Buffer.from(body, 'latin1'), facts(site)));
      stored.set(key, fields + body);
      const probe = `s${(i * 7919) % 3000}.example\n/p${(i * 31) % 7}`;
      const hit = memo.get(probe, 0, 0);
      if (hit !== undefined)
        assert.equal(sent(hit), stored.get(probe), `the bytes of ${JSON.stringify(probe)}`);
    }
  });

  test('an entry that leaves gives its memory back: the slab follows the budget, not the entries ever made', () => {
    const budget = 2_000_000;
    const { memo } = memoOf(budget);
    const body = Buffer.alloc(1200, 0x61);
    for (let i = 0; i < 100_000; i++)
      memo.store(`site-${i}.example\n/`, 'Content-Length: 1200\r\n\r\n', body, facts(`site-${i}`));
    assert.ok(memo.bytes <= budget);
    // The entries held fit in the charged bytes; a page more of the one size class in use.
    assert.ok(
      memo.slabBytes <= memo.bytes + SLAB_PAGE_BYTES,
      `slab ${memo.slabBytes} for ${memo.bytes} charged`,
    );
  });

  test('responses larger than a slot get a buffer of their own; larger than 64 KB are not memoized', () => {
    const { memo } = memoOf(10_000_000);
    assert.ok(memo.store('a\n/big', 'Content-Length: 10000\r\n\r\n', Buffer.alloc(10_000, 0x62), facts('a')));
    const big = memo.get('a\n/big', 0, 0)!;
    assert.equal(big.page, null);
    assert.equal(sent(big), `Content-Length: 10000\r\n\r\n${'b'.repeat(10_000)}`);
    assert.equal(memo.store('a\n/huge', '\r\n', Buffer.alloc(65 * 1024), facts('a')), false);
    assert.equal(memo.get('a\n/huge', 0, 0), undefined);
  });
});
