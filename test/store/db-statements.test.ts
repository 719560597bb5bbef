// SQLite's prepared statements are kept by SQL text (src/store/db/db.ts StatementCache): a query that runs
// again is not prepared again (issue 23: preparing cost as much as running the small queries of a publish
// or of a site's first request), and the cache stays bounded however many distinct texts run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { Db, STATEMENT_CACHE_MAX } from '../../src/store/db/db.js';
import { findAccountById } from '../../src/store/db/tables/account.js';

test('Db.sqlite prepares a query once and reuses the statement when it runs again', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const statements = db.statements!;
    await findAccountById(db.kysely, 'acc_1');
    const before = statements.prepared;
    for (let i = 0; i < 10; i++) assert.equal(await findAccountById(db.kysely, `acc_${i}`), undefined);
    assert.equal(statements.prepared, before);
  } finally {
    await db.close();
  }
});

test('Db.sqlite keeps at most STATEMENT_CACHE_MAX statements, dropping the least recently used', async () => {
  const db = Db.sqlite(':memory:');
  try {
    const statements = db.statements!;
    const select = (n: number) => sql<{ n: number }>`select ${sql.lit(n)} as n`.execute(db.kysely);
    await select(-1);
    for (let i = 0; i < STATEMENT_CACHE_MAX + 50; i++) {
      assert.equal((await select(i)).rows[0]?.n, i);
      // -1 stays in use, so it is never the least recently used.
      await select(-1);
    }
    assert.equal(statements.size, STATEMENT_CACHE_MAX);
    const prepared = statements.prepared;
    await select(-1);
    assert.equal(statements.prepared, prepared, 'the statement in use was kept');
    await select(0);
    assert.equal(statements.prepared, prepared + 1, 'the oldest statement was dropped');
  } finally {
    await db.close();
  }
});

test('Db.sqlite streams a query and then runs it again', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const query = db.kysely.selectFrom('accounts').select('id');
    const rows: unknown[] = [];
    for await (const row of query.stream()) rows.push(row);
    assert.deepEqual(rows, []);
    assert.deepEqual(await query.execute(), []);
  } finally {
    await db.close();
  }
});
