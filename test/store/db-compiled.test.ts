// Queries compiled once (src/store/db/compiled.ts, issue 23): the site server's miss-path lookups skip
// Kysely's builder and compiler after the first call, and still answer each call's own value.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compiledOnce } from '../../src/store/db/compiled.js';
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
