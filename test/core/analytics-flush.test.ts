// A flush in parts (issue 25): a node that answered many sites writes them FLUSH_SITES_PER_WRITE at a time,
// each part in its own transaction with the event loop free between parts; a part that fails goes back to
// the counter with every part not yet written, and nothing already written is counted twice.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  AnalyticsCounter,
  FLUSH_SITES_PER_WRITE,
  HOUR_MS,
  splitInterval,
  writeIntervalInParts,
} from '../../src/core/analytics.js';
import { MovableClock } from '../../src/shared/clock.js';
import { Db } from '../../src/store/db/db.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0.0.0 Safari/537.36';
const SITES = 2 * FLUSH_SITES_PER_WRITE + FLUSH_SITES_PER_WRITE / 2;

function countedInTwoHours(): AnalyticsCounter {
  const clock = new MovableClock();
  clock.set(Date.UTC(2026, 10, 25, 9, 30));
  const c = new AnalyticsCounter(clock);
  for (let hour = 0; hour < 2; hour++) {
    for (let i = 0; i < SITES; i++)
      c.record(`site-${i}`, 'h.example', 200, 10, '/', true, true, { 'user-agent': UA }, '192.0.2.1');
    clock.advance(HOUR_MS);
  }
  return c;
}

test('an interval is cut by sites, each site with all its hours in one part', () => {
  const parts = splitInterval(countedInTwoHours().take(), FLUSH_SITES_PER_WRITE);
  assert.equal(parts.length, 3);
  const slugsOf = (part: (typeof parts)[0]) => new Set([...part.values()].flatMap((m) => [...m.keys()]));
  assert.deepEqual(
    parts.map((p) => [p.size, slugsOf(p).size]),
    [
      [2, FLUSH_SITES_PER_WRITE],
      [2, FLUSH_SITES_PER_WRITE],
      [2, FLUSH_SITES_PER_WRITE / 2],
    ],
  );
});

test('a failed part goes back with the parts after it; written parts are not written again', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const counter = countedInTwoHours();
    // The second transaction fails (e.g. SQLITE_BUSY, a lost connection): the first part is committed.
    let transactions = 0;
    const failing = Object.create(db) as Db;
    failing.transaction = ((fn: never) => {
      transactions++;
      return transactions === 2 ? Promise.reject(new Error('database is locked')) : db.transaction(fn);
    }) as Db['transaction'];
    await assert.rejects(
      writeIntervalInParts(failing, counter.take(), (rest) => counter.restore(rest)),
      /database is locked/,
    );
    assert.equal(transactions, 2, 'no part is tried after a failure');
    const views = async () =>
      Number(
        (
          await db.kysely
            .selectFrom('analytics_counts')
            .select((eb) => eb.fn.sum<number>('page_views').as('n'))
            .where('granularity', '=', 'hour')
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await views(), 2 * FLUSH_SITES_PER_WRITE, 'the first part, both hours');
    assert.equal(
      counter.pendingSites,
      2 * (SITES - FLUSH_SITES_PER_WRITE),
      'the rest is back in the counter',
    );
    // The next flush writes the rest: every site's two hours exactly once.
    await writeIntervalInParts(db, counter.take(), () => assert.fail('nothing fails now'));
    assert.equal(await views(), 2 * SITES);
    const perSite = await db.kysely
      .selectFrom('analytics_counts')
      .select(['slug'])
      .where('granularity', '=', 'day')
      .where('page_views', '!=', 2)
      .execute();
    assert.deepEqual(perSite, []);
  } finally {
    await db.close();
  }
});

test('a paced flush rests between parts as long as each part took: serving keeps half the event loop', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const spans: Array<{ start: number; end: number }> = [];
    const slow = Object.create(db) as Db;
    slow.transaction = (async (fn: never) => {
      const start = performance.now();
      // A part that holds the loop for 20 ms, as ~250 sites of a large interval do.
      while (performance.now() - start < 20) {}
      const out = await db.transaction(fn);
      spans.push({ start, end: performance.now() });
      return out;
    }) as Db['transaction'];
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    await writeIntervalInParts(
      slow,
      countedInTwoHours().take(),
      () => assert.fail('nothing fails'),
      () => 1,
    );
    clearInterval(ticker);
    assert.equal(spans.length, Math.ceil(SITES / FLUSH_SITES_PER_WRITE));
    for (let i = 1; i < spans.length; i++) {
      const took = spans[i - 1]!.end - spans[i - 1]!.start;
      const rested = spans[i]!.start - spans[i - 1]!.end;
      assert.ok(
        rested >= took * 0.9,
        `part ${i}: rested ${rested.toFixed(1)} ms after ${took.toFixed(1)} ms`,
      );
    }
    assert.ok(ticks >= spans.length, `timers ran ${ticks} times during the flush`);

    // Unpaced (shutdown, or a flush asked for): parts follow one another at once.
    spans.length = 0;
    await writeIntervalInParts(slow, countedInTwoHours().take(), () => assert.fail('nothing fails'));
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i]!.start - spans[i - 1]!.end < 10);
  } finally {
    await db.close();
  }
});

test("a written part's tallies are let go during the flush, not at its end", async () => {
  // A paced flush of 100,000 sites takes ~10 s; holding every written part until the end kept the interval
  // being written and the one filling meanwhile whole together (issue 23).
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const interval = countedInTwoHours().take();
    // site-0's tallies of both hours are in the first part. (A FinalizationRegistry, not WeakRefs: a new
    // WeakRef keeps its target alive until V8's job ends.)
    const collected: string[] = [];
    const registry = new FinalizationRegistry((hour: string) => collected.push(hour));
    // In a function of its own: a loop variable of this async function would hold the last hour's Map.
    const watch = () => {
      for (const [hour, sites] of interval) registry.register(sites.get('site-0')!, String(hour));
    };
    watch();
    let collectedBeforeLastPart: string[] = [];
    let transactions = 0;
    const watching = Object.create(db) as Db;
    watching.transaction = (async (fn: never) => {
      transactions++;
      if (transactions === 3) {
        // Finalization callbacks run as tasks of their own, some time after the collection.
        for (let i = 0; i < 20 && collected.length < 2; i++) {
          gc();
          await sleep(10);
        }
        collectedBeforeLastPart = [...collected];
      }
      return db.transaction(fn);
    }) as Db['transaction'];
    await writeIntervalInParts(watching, interval, () => assert.fail('nothing fails'));
    assert.equal(transactions, 3);
    assert.equal(collectedBeforeLastPart.length, 2, 'the first part is written: its tallies are garbage');
  } finally {
    await db.close();
  }
});
