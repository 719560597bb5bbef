// ByteLru: the byte-bounded, second-chance cache behind every site-server cache.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ByteLru } from '../../src/serve/lru.js';

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
});
