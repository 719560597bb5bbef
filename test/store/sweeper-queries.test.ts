// The sweeper's look-ups read index ranges, not whole tables (issue 23: at 100,000 sites they scanned
// every version and every anonymous site at start and every sweep, holding SQLite's event loop).
// Checked on SQLite's query plans (EXPLAIN QUERY PLAN) of the exact SQL the table functions run.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { migrationProvider } from '../../src/store/db/migrations.js';
import type { Database } from '../../src/store/db/schema.js';
import { expiredAnonymousSlugs } from '../../src/store/db/tables/site.js';
import { blobPage, stalePendingVersions } from '../../src/store/db/tables/version.js';

async function planOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string> {
  const sqlite = new SQLite(':memory:');
  const queries: Array<{ sql: string; parameters: readonly unknown[] }> = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: sqlite }),
    log: (event) => {
      queries.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest();
    if (error) throw error;
    queries.length = 0;
    await run(db);
    assert.equal(queries.length, 1);
    const { sql, parameters } = queries[0]!;
    const rows = sqlite.prepare(`explain query plan ${sql}`).all(...parameters) as Array<{ detail: string }>;
    return rows.map((r) => r.detail).join('; ');
  } finally {
    await db.destroy();
  }
}

const TABLE = [
  {
    name: 'stalePendingVersions',
    run: (db: Kysely<Database>) => stalePendingVersions(db, Date.now(), 500),
    index: 'versions_status_upload_expires_idx',
  },
  {
    name: 'expiredAnonymousSlugs',
    run: (db: Kysely<Database>) => expiredAnonymousSlugs(db, Date.now(), 500),
    index: 'sites_owner_expires_idx',
  },
  {
    name: 'blobPage',
    run: (db: Kysely<Database>) => blobPage(db, 'ab', 500),
    index: 'sqlite_autoindex_blobs',
  },
];

for (const { name, run, index } of TABLE) {
  test(`${name} searches an index, never scans its table`, async () => {
    const plan = await planOf(run);
    assert.doesNotMatch(plan, /\bSCAN (versions|sites|blobs)\b(?! USING)/, plan);
    assert.match(plan, new RegExp(`USING (COVERING )?INDEX ${index}`), plan);
  });
}
