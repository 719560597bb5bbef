// Migrations that reshape existing rows, on both dialects (SQLite in memory, a fresh PostgreSQL
// database): rows written under the previous schema come through, and the new constraints hold.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { type Kysely, Migrator, sql } from 'kysely';
import { Db } from '../../src/store/db/db.js';
import { migrationProvider } from '../../src/store/db/migrations.js';
import type { Database } from '../../src/store/db/schema.js';
import { adminQuery, TEST_DATABASE_URL } from '../helpers/app.js';

interface Dialect {
  name: string;
  open(): Promise<{ db: Db; dispose(): Promise<void> }>;
}

const DIALECTS: Dialect[] = [
  {
    name: 'SQLite',
    async open() {
      const db = Db.sqlite(':memory:');
      return { db, dispose: () => db.close() };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const database = `slipway_m_${randomBytes(6).toString('hex')}`;
      await adminQuery(`create database ${database}`);
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${database}`;
      const db = Db.postgres(url.toString());
      return {
        db,
        async dispose() {
          await db.close();
          await adminQuery(`drop database if exists ${database} with (force)`);
        },
      };
    },
  },
];

const isUnique = (err: { code?: string }) => err.code === '23505' || err.code === 'SQLITE_CONSTRAINT_UNIQUE';

for (const dialect of DIALECTS) {
  describe(`migrations on ${dialect.name}`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    let k: Kysely<Database>;
    let migrator: Migrator;
    // A fresh database per test: each starts below the migration it checks.
    beforeEach(async () => {
      ({ db, dispose } = await dialect.open());
      k = db.kysely;
      migrator = new Migrator({ db: k, provider: migrationProvider });
    });
    afterEach(() => dispose());

    test('007 keeps every domain row; then one active entry per domain, one entry per account', async () => {
      assert.equal((await migrator.migrateTo('006_sessions')).error, undefined);
      const now = Date.now();
      for (const id of ['a', 'b', 'c'])
        await sql`insert into accounts (id, email, plan, created_at, updated_at)
          values (${id}, ${`${id}@example.com`}, 'free', ${now}, ${now})`.execute(k);
      await sql`insert into domains (domain, account_id, status, token, created_at, verified_at, tls_requested_at)
        values ('live.example', 'a', 'active', 't1', ${now}, ${now + 1}, ${now + 2}),
               ('wait.example', 'b', 'pending', 't2', ${now}, null, null)`.execute(k);

      assert.equal((await migrator.migrateToLatest()).error, undefined);
      const rows = await k.selectFrom('domains').selectAll().orderBy('domain').execute();
      assert.deepEqual(
        rows.map((r) => ({ ...r, created_at: Number(r.created_at) })),
        [
          {
            domain: 'live.example',
            account_id: 'a',
            status: 'active',
            token: 't1',
            created_at: now,
            verified_at: now + 1,
            tls_requested_at: now + 2,
            tls_error: null,
          },
          {
            domain: 'wait.example',
            account_id: 'b',
            status: 'pending',
            token: 't2',
            created_at: now,
            verified_at: null,
            tls_requested_at: null,
            tls_error: null,
          },
        ],
      );
      const entry = (domain: string, account_id: string, status: 'pending' | 'active') => ({
        domain,
        account_id,
        status,
        token: `${account_id}-${domain}`,
        created_at: now,
        verified_at: null,
        tls_requested_at: null,
        tls_error: null,
      });
      // Several accounts may hold a domain pending, even one another account has active ...
      await k
        .insertInto('domains')
        .values([entry('wait.example', 'a', 'pending'), entry('live.example', 'b', 'pending')])
        .execute();
      // ... but never a second active entry, nor one account twice.
      await assert.rejects(
        k
          .insertInto('domains')
          .values(entry('live.example', 'c', 'active'))
          .execute(),
        isUnique,
      );
      await assert.rejects(
        k
          .insertInto('domains')
          .values(entry('wait.example', 'b', 'pending'))
          .execute(),
        (err: { code?: string }) => err.code === '23505' || err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY',
      );
      await k
        .updateTable('domains')
        .set({ status: 'active' })
        .where('domain', '=', 'wait.example')
        .where('account_id', '=', 'b')
        .execute();
      await assert.rejects(
        k
          .updateTable('domains')
          .set({ status: 'active' })
          .where('domain', '=', 'wait.example')
          .where('account_id', '=', 'a')
          .execute(),
        isUnique,
      );
    });

    test('008 keeps no test checkout token in clear; a spent link keeps its hash', async () => {
      assert.equal((await migrator.migrateTo('007_domain_claims')).error, undefined);
      const now = Date.now();
      const base = 'https://slipway.example/billing/test-checkout/';
      const sha = (v: string) => createHash('sha256').update(v).digest('hex');
      await sql`insert into accounts (id, email, plan, created_at, updated_at)
        values ('a', 'a@example.com', 'free', ${now}, ${now})`.execute(k);
      await sql`insert into subscriptions (id, account_id, provider, status, short_url, checkout_token_hash, created_at, updated_at)
        values ('sub_open', 'a', 'test', 'created', ${`${base}openToken`}, ${sha('openToken')}, ${now}, ${now}),
               ('sub_paid', 'a', 'test', 'active', ${`${base}paidToken`}, null, ${now}, ${now}),
               ('sub_rzp', 'a', 'razorpay', 'created', 'https://rzp.io/i/abc', null, ${now}, ${now})`.execute(
        k,
      );

      assert.equal((await migrator.migrateToLatest()).error, undefined);
      const rows = await k
        .selectFrom('subscriptions')
        .select(['id', 'short_url', 'checkout_token_hash'])
        .orderBy('id')
        .execute();
      assert.deepEqual(rows, [
        { id: 'sub_open', short_url: '', checkout_token_hash: sha('openToken') },
        { id: 'sub_paid', short_url: '', checkout_token_hash: sha('paidToken') },
        { id: 'sub_rzp', short_url: 'https://rzp.io/i/abc', checkout_token_hash: null },
      ]);
    });
  });
}
