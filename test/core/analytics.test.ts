// The analytics counter's pieces (issue 25): referrer hosts, the key lists' bound, sketches that survive
// storage and merge, and a failed flush put back without losing or doubling anything.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AnalyticsCounter,
  MAX_KEYS_PER_INTERVAL,
  OTHER_KEY,
  referrerHost,
} from '../../src/core/analytics.js';
import {
  decodeSketch,
  emptySketch,
  encodeSketch,
  finish,
  mixString,
  sketchAdd,
  sketchEstimate,
  sketchMerge,
} from '../../src/core/hll.js';
import { MovableClock } from '../../src/shared/clock.js';

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15';

describe('analytics counter', () => {
  test('referrer hosts: scheme, port, user info, path and case removed; no host, no referrer', () => {
    assert.equal(referrerHost('https://News.Example.org/item?id=1'), 'news.example.org');
    assert.equal(referrerHost('http://user:pw@example.com:8080/x'), 'example.com');
    assert.equal(referrerHost('https://example.com'), 'example.com');
    assert.equal(referrerHost('android-app://com.google.android.gm/'), 'com.google.android.gm');
    assert.equal(referrerHost('not a url'), '');
  });

  test('links inside the site are no referrers, whatever the port or case of Host', () => {
    const clock = new MovableClock();
    const c = new AnalyticsCounter(clock);
    const view = (host: string, referer: string) =>
      c.record('s', 'h.example', 200, 10, '/', true, true, { host, referer, 'user-agent': UA }, '192.0.2.1');
    view('Demo.localhost:8080', 'http://demo.localhost:8080/about');
    view('demo.localhost', 'https://demo.localhost/');
    view('demo.localhost', 'https://demo.l/'); // a prefix of the host is another site
    const tally = [...c.take().values()][0]!.get('s')!;
    assert.equal(tally.pageViews, 3);
    assert.deepEqual([...tally.referrers!], [['demo.l', 1]]);
  });

  test('at most MAX_KEYS_PER_INTERVAL paths per site; the rest add up under (other)', () => {
    const c = new AnalyticsCounter(new MovableClock());
    for (let i = 0; i < MAX_KEYS_PER_INTERVAL + 50; i++)
      c.record('s', 'h.example', 404, 0, `/random-${i}`, false, true, { 'user-agent': UA }, '');
    const tally = [...c.take().values()][0]!.get('s')!;
    assert.equal(tally.notFound, MAX_KEYS_PER_INTERVAL + 50);
    assert.equal(tally.notFoundPaths!.size, MAX_KEYS_PER_INTERVAL + 1);
    assert.equal(tally.notFoundPaths!.get(OTHER_KEY), 50);
  });

  test('sketches survive text storage, sparse and dense, and merge without counting twice', () => {
    const a = emptySketch();
    const b = emptySketch();
    const add = (s: typeof a, i: number) => sketchAdd(s, finish(mixString(12345, `visitor-${i}`)));
    for (let i = 0; i < 30; i++) add(a, i);
    assert.notEqual(a.sparse, null);
    assert.deepEqual(decodeSketch(encodeSketch(a)), a);
    for (let i = 0; i < 5000; i++) add(b, i);
    assert.notEqual(b.dense, null);
    assert.deepEqual(decodeSketch(encodeSketch(b)), b);
    const merged = decodeSketch(encodeSketch(b));
    sketchMerge(merged, a); // a's visitors are among b's
    assert.equal(sketchEstimate(merged), sketchEstimate(b));
    assert.ok(Math.abs(sketchEstimate(b) - 5000) / 5000 < 0.1, `${sketchEstimate(b)}`);
    assert.equal(sketchEstimate(decodeSketch('garbage')), 0);
  });

  test('a failed flush is put back and added to what came since', () => {
    const c = new AnalyticsCounter(new MovableClock());
    const view = (ua: string) =>
      c.record('s', 'h.example', 200, 5, '/', true, true, { 'user-agent': ua }, '192.0.2.9');
    view(UA);
    view(UA);
    const failed = c.take();
    view(`${UA} other`);
    c.restore(failed);
    const tally = [...c.take().values()][0]!.get('s')!;
    assert.equal(tally.pageViews, 3);
    assert.equal(tally.bytes, 15);
    assert.equal(sketchEstimate(tally.visitors!), 2);
    assert.equal(c.take().size, 0);
  });
});
