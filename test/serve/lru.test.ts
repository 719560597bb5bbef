// ByteLru: the byte-bounded, second-chance cache behind every site-server cache.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteLru, SharedByteLru } from '../../src/serve/lru.js';

describe('ByteLru', () => {
  test('keeps the total charged bytes within maxBytes, evicting the oldest first', () => {
    const lru = new ByteLru<string, number>(100);
    for (let i = 0; i < 10; i++) lru.set(`k${i}`, i, 30);
    assert.ok(lru.bytes <= 100);
    assert.equal(lru.size, 3);
    assert.equal(lru.get('k9'), 9);
    assert.equal(lru.get('k0'), undefined);
  });

  test('a recently read entry gets a second chance over an unread one', () => {
    const lru = new ByteLru<string, string>(3);
    lru.set('a', 'A', 1);
    lru.set('b', 'B', 1);
    lru.set('c', 'C', 1);
    assert.equal(lru.get('a'), 'A');
    lru.set('d', 'D', 1);
    assert.equal(lru.get('a'), 'A', 'read entry survives');
    assert.equal(lru.get('b'), undefined, 'oldest unread entry is evicted');
  });

  test('refuses values over maxItemBytes; replaces values of the same key', () => {
    const lru = new ByteLru<string, string>(100, 10);
    assert.equal(lru.set('big', 'x', 11), false);
    assert.equal(lru.has('big'), false);
    lru.set('k', 'one', 5);
    lru.set('k', 'two', 7);
    assert.equal(lru.get('k'), 'two');
    assert.equal(lru.bytes, 7);
  });

  test('the entry just stored survives its own insertion even when it alone exceeds the budget', () => {
    const lru = new ByteLru<string, string>(10, 50);
    lru.set('a', 'A', 5);
    lru.set('huge', 'H', 40);
    assert.equal(lru.get('huge'), 'H');
    assert.equal(lru.size, 1);
  });

  test('delete, deleteWhere and clear release their bytes', () => {
    const lru = new ByteLru<string, number>(100);
    lru.set('a', 1, 10);
    lru.set('b', 2, 20);
    lru.set('c', 3, 30);
    assert.equal(lru.delete('a'), true);
    assert.equal(lru.bytes, 50);
    lru.deleteWhere((_k, v) => v === 2);
    assert.equal(lru.bytes, 30);
    lru.clear();
    assert.equal(lru.bytes, 0);
    assert.equal(lru.size, 0);
  });

  test('onDrop hears of every entry that leaves: evicted, deleted, replaced, cleared', () => {
    const dropped: string[] = [];
    const lru = new ByteLru<string, number>(30, 30, (k, v) => dropped.push(`${k}=${v}`));
    lru.set('a', 1, 10);
    lru.set('b', 2, 10);
    lru.set('c', 3, 10);
    lru.set('d', 4, 10);
    assert.deepEqual(dropped, ['a=1']);
    lru.set('b', 20, 10);
    lru.delete('c');
    lru.deleteWhere((k) => k === 'd');
    lru.clear();
    assert.deepEqual(dropped, ['a=1', 'b=2', 'c=3', 'd=4', 'b=20']);
  });

  test('SharedByteLru: partitions share one budget and eviction order, each counts its own bytes', () => {
    const shared = new SharedByteLru(100);
    const dropped: string[] = [];
    const a = shared.partition<string>('a', { maxItemBytes: 100, onDrop: (k) => dropped.push(`a:${k}`) });
    const b = shared.partition<string>('b', { maxItemBytes: 40 });
    a.set('x', 'ax', 30);
    b.set('x', 'bx', 30);
    assert.equal(b.set('big', 'too big', 41), false);
    // One kind may take what the other leaves: 'a' grows to 70 while 'b' holds 30.
    a.set('y', 'ay', 40);
    assert.deepEqual([a.bytes, b.bytes, shared.bytes], [70, 30, 100]);
    // Past the budget the least recently used entry goes, whichever kind it is: 'a:x' was read, so it gets
    // a second chance and 'b:x' goes; then 'a:y'.
    a.get('x');
    a.set('z', 'az', 30);
    assert.equal(b.get('x'), undefined);
    assert.deepEqual([a.bytes, b.bytes], [100, 0]);
    a.set('w', 'aw', 10);
    assert.equal(a.get('y'), undefined);
    assert.deepEqual(dropped, ['a:y']);
    a.clear();
    assert.deepEqual([a.bytes, shared.bytes], [0, 0]);
  });

  test('SharedByteLru: one key in two partitions is two entries; dropping one kind leaves the other', () => {
    const shared = new SharedByteLru(100);
    const hosts = shared.partition<string>('h');
    const sites = shared.partition<string>('s');
    hosts.set('same', 'host', 10);
    sites.set('same', 'site', 20);
    assert.deepEqual([hosts.get('same'), sites.get('same'), shared.bytes], ['host', 'site', 30]);
    hosts.deleteWhere(() => true);
    assert.deepEqual([hosts.get('same'), sites.get('same')], [undefined, 'site']);
    assert.deepEqual([hosts.bytes, sites.bytes, shared.bytes], [0, 20, 20]);
    // Replacing an entry charges the new size only.
    sites.set('same', 'site2', 50);
    assert.deepEqual([sites.bytes, shared.bytes], [50, 50]);
    assert.throws(() => shared.partition('h'), /exists/);
  });

  test('SharedByteLru: a partition whose entries start referenced outlasts unread entries of the others', () => {
    // A memoized response and what it was made from (route, state, bytes), one site after another with
    // nothing read again: with their head start the responses outlast what made them.
    const fill = (startsReferenced: boolean) => {
      const shared = new SharedByteLru(100);
      const parts = shared.partition<string>('parts');
      const responses = shared.partition<string>('responses', { startsReferenced });
      for (let site = 0; site < 10; site++) {
        parts.set(`s${site}`, 'route, state, bytes', 15);
        responses.set(`s${site}`, 'response', 5);
      }
      const kept = (p: typeof parts) =>
        Array.from({ length: 10 }, (_, s) => `s${s}`).filter((k) => p.get(k) !== undefined);
      return { parts, responses, kept: { responses: kept(responses), parts: kept(parts) } };
    };
    const plain = fill(false);
    const lastFive = ['s5', 's6', 's7', 's8', 's9'];
    assert.deepEqual(plain.kept, { responses: lastFive, parts: lastFive });
    const headStart = fill(true);
    assert.deepEqual(headStart.kept, {
      responses: ['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'],
      parts: ['s7', 's8', 's9'],
    });
    // Once past its head start, a response never read again goes like any other entry.
    const { parts, responses } = fill(true);
    for (let site = 10; site < 40; site++) parts.set(`s${site}`, 'route, state, bytes', 15);
    assert.equal(responses.bytes, 0);
  });

  test('random operations leave both caches exactly where a plain second-chance model is', () => {
    // The model: an array oldest first, entries moved to the end for their second chance.
    type E = { key: string; bytes: number; referenced: boolean };
    const MAX = 500;
    const model: E[] = [];
    const modelSet = (key: string, bytes: number) => {
      const at = model.findIndex((e) => e.key === key);
      if (at >= 0) model.splice(at, 1);
      const entry = { key, bytes, referenced: false };
      model.push(entry);
      let used = model.reduce((n, e) => n + e.bytes, 0);
      while (used > MAX && model.length > 1) {
        const oldest = model.shift()!;
        if (oldest === entry || oldest.referenced) {
          oldest.referenced = false;
          model.push(oldest);
        } else used -= oldest.bytes;
      }
    };
    const lru = new ByteLru<string, number>(MAX);
    const shared = new SharedByteLru(MAX);
    const parts = [shared.partition<number>('a'), shared.partition<number>('b')];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 5000; i++) {
      const n = rand(60);
      const key = `k${n}`;
      const part = parts[n % 2]!;
      const op = rand(10);
      if (op < 5) {
        const bytes = 1 + rand(40);
        modelSet(key, bytes);
        lru.set(key, n, bytes);
        part.set(key, n, bytes);
      } else if (op < 9) {
        const e = model.find((x) => x.key === key);
        if (e !== undefined) e.referenced = true;
        assert.equal(lru.get(key), e === undefined ? undefined : n);
        assert.equal(part.get(key), e === undefined ? undefined : n);
      } else {
        const at = model.findIndex((x) => x.key === key);
        if (at >= 0) model.splice(at, 1);
        assert.equal(lru.delete(key), at >= 0);
        assert.equal(part.delete(key), at >= 0);
      }
      const used = model.reduce((t, e) => t + e.bytes, 0);
      assert.equal(lru.size, model.length);
      assert.equal(lru.bytes, used);
      assert.equal(shared.bytes, used);
    }
  });

  test('eviction costs the same with 200,000 entries as with a few (no walk over deleted slots)', () => {
    // A Map or Set used as the queue made each eviction walk the holes earlier evictions left at its front:
    // 5-40 us an eviction at this size, 100,000 evictions 0.5-4 s. A linked order takes milliseconds; the
    // bound leaves a slow machine 50 times that.
    const lru = new ByteLru<number, number>(200_000);
    const shared = new SharedByteLru(200_000);
    const part = shared.partition<number>('p');
    for (let i = 0; i < 200_000; i++) {
      lru.set(i, i, 1);
      part.set(String(i), i, 1);
    }
    const started = performance.now();
    for (let i = 200_000; i < 300_000; i++) {
      lru.set(i, i, 1);
      part.set(String(i), i, 1);
    }
    const ms = performance.now() - started;
    assert.equal(lru.size, 200_000);
    assert.equal(lru.get(99_999), undefined);
    assert.equal(lru.get(100_000), 100_000);
    assert.equal(part.get('100000'), 100_000);
    assert.ok(ms < 1500, `100,000 evictions from each cache took ${ms.toFixed(0)} ms`);
  });
});
