// Queries compiled once (src/store/db/compiled.ts, issue 23): the site server's miss-path lookups and the
// analytics flush's batched statements skip Kysely's builder and compiler after the first call, and still
// run with each call's own values.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compiledOnce, compiledPerShape } from '../../src/store/db/compiled.js';
import { Db } from '../../src/store/db/db.js';
import { siteServingRow, slugState } from '../../src/store/db/tables/site.js';

test('a query compiled once answers each value, and builds once per database', async () => {
  const dbs = [Db.sqlite(':memory:'), Db.sqlite(':memory:')];
  try {
    let builds = 0;
    const byId = compiledOnce((db, id) => {
      builds++;
      return db.selectFrom('accounts').select(['id', 'email']).where('id', '=', id);
    });
    for (const [n, db] of dbs.entries()) {
      await db.migrate();
      await db.kysely
        .insertInto('accounts')
        .values([
          { id: 'acc_a', email: `a${n}@example.com`, created_at: 1, updated_at: 1 },
          { id: 'acc_b', email: `b${n}@example.com`, created_at: 1, updated_at: 1 },
        ] as never)
        .execute();
    }
    for (const [n, db] of dbs.entries()) {
      assert.deepEqual(await byId(db.kysely, 'acc_a'), [{ id: 'acc_a', email: `a${n}@example.com` }]);
      assert.deepEqual(await byId(db.kysely, 'acc_b'), [{ id: 'acc_b', email: `b${n}@example.com` }]);
      // A value that looks like SQL is a value.
      assert.deepEqual(await byId(db.kysely, "acc_a' or '1'='1"), []);
    }
    assert.equal(builds, 2, 'one build per database');
    // The serving lookups built on it.
    assert.equal(await siteServingRow(dbs[0]!.kysely, 'no-such-site'), undefined);
    assert.equal(await slugState(dbs[0]!.kysely, 'no-such-site'), undefined);
  } finally {
    for (const db of dbs) await db.close();
  }
});

test('a query with other parameters than the one value is refused', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const two = compiledOnce((k, id) =>
      k.selectFrom('accounts').select('id').where('id', '=', id).where('email', '=', 'x'),
    );
    await assert.rejects(two(db.kysely, 'acc_a'), /exactly one parameter/);
  } finally {
    await db.close();
  }
});

describe('compiledPerShape (the analytics flush)', () => {
  const keysStatement = (columns: Array<'slug' | 'day' | 'kind' | 'key' | 'count'>, onBuild: () => void) =>
    compiledPerShape({
      build: (db, rows: Array<{ slug: string; day: number; kind: string; key: string; count: number }>) => {
        onBuild();
        return db.insertInto('analytics_keys').values(rows);
      },
      shape: (rows) => String(rows.length),
      params: (rows) => rows.flatMap((r) => columns.map((c) => r[c])),
      probe: (rows) =>
        rows.map((_, i) => ({ slug: `s${i}`, day: -1 - i, kind: `k${i}`, key: `y${i}`, count: -100 - i })),
    });
  const rowsOf = (n: number, day: number) =>
    Array.from({ length: n }, (_, i) => ({ slug: `site-${i}`, day, kind: 'path', key: '/', count: i + 1 }));

  test('writes each call’s rows, building once per shape across transactions and once per database', async () => {
    const dbs = [Db.sqlite(':memory:'), Db.sqlite(':memory:')];
    try {
      let builds = 0;
      const insert = keysStatement(['slug', 'day', 'kind', 'key', 'count'], () => builds++);
      for (const db of dbs) {
        await db.migrate();
        for (const day of [1, 2, 3]) await db.transaction((trx) => insert(trx, rowsOf(3, day)));
        await db.transaction((trx) => insert(trx, rowsOf(5, 4)));
        const stored = await db.kysely
          .selectFrom('analytics_keys')
          .selectAll()
          .orderBy('day')
          .orderBy('slug')
          .execute();
        assert.equal(stored.length, 3 * 3 + 5);
        assert.deepEqual(stored.at(-1), { slug: 'site-4', day: 4, kind: 'path', key: '/', count: 5 });
      }
      assert.equal(builds, 4, 'two shapes, on each of two databases');
    } finally {
      for (const db of dbs) await db.close();
    }
  });

  test('a params() that puts one column in another’s place is refused at the first compile, writing nothing', async () => {
    const db = Db.sqlite(':memory:');
    try {
      await db.migrate();
      // kind and key swapped, on rows whose kind and key are equal: a check of these rows' own values
      // would pass and the next rows would be written wrong; the probe's distinct values catch it.
      const swapped = keysStatement(['slug', 'day', 'key', 'kind', 'count'], () => {});
      const rows = rowsOf(2, 1).map((r) => ({ ...r, key: r.kind }));
      await assert.rejects(swapped(db.kysely, rows), /does not give the statement's parameters/);
      assert.equal((await db.kysely.selectFrom('analytics_keys').selectAll().execute()).length, 0);
    } finally {
      await db.close();
    }
  });
});
