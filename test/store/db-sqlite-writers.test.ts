// One SQLite file written by several processes (WORKERS > 1 on the embedded set): a transaction that reads
// and then writes while another connection commits must wait its turn, not fail with SQLITE_BUSY (a
// deferred BEGIN's snapshot goes stale and busy_timeout cannot help it; Db begins transactions IMMEDIATE).
// The other writer is a worker thread with a connection of its own: SQLite locks the file, not the process.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { Db } from '../../src/store/db/db.js';

/** Commits one insert after another for `ms`, from its own connection, as another worker process would. */
const OTHER_WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
const SQLite = require('better-sqlite3');
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const insert = db.prepare("insert into counter (who) values ('other')");
const until = Date.now() + workerData.ms;
let n = 0;
parentPort.postMessage('started');
while (Date.now() < until) { insert.run(); n++; }
parentPort.postMessage(n);
`;

test('transactions that read then write succeed while another connection keeps committing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-sqlite-'));
  const file = join(dir, 'shared.db');
  const db = Db.sqlite(file);
  try {
    await sql`create table counter (id integer primary key, who text not null)`.execute(db.kysely);
    const other = new Worker(OTHER_WRITER, { eval: true, workerData: { file, ms: 1500 } });
    const otherDone = new Promise<number>((resolve, reject) => {
      other.on('message', (m) => typeof m === 'number' && resolve(m));
      other.on('error', reject);
    });
    await new Promise((resolve) => other.once('message', resolve));

    const failures: string[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        await db.transaction(async (trx) => {
          await sql`select count(*) as n from counter`.execute(trx);
          await sleep(5); // the other connection commits meanwhile
          await sql`insert into counter (who) values ('us')`.execute(trx);
        });
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    const theirs = await otherDone;
    assert.deepEqual(failures, [], 'no transaction failed');
    assert.ok(theirs > 0, 'the other connection committed too');
    const rows = await sql<{ n: number }>`select count(*) as n from counter where who = 'us'`.execute(
      db.kysely,
    );
    assert.equal(rows.rows[0]?.n, 20);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
