// The db layer hands back numbers (issue 20): every timestamp, size and count a table function returns is
// a JavaScript number on both dialects (PostgreSQL returns BIGINT as text unless told otherwise), so core
// and serve compare and format them without converting. Values past 2^32 catch a 32-bit parse too.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Db } from '../../src/store/db/db.js';
import {
  accountUsage,
  addUsage,
  findAccountById,
  insertAccount,
  setPlan,
} from '../../src/store/db/tables/account.js';
import { accountDomains, insertDomain, markTlsRequested } from '../../src/store/db/tables/domain.js';
import { accountLinks, insertLink } from '../../src/store/db/tables/link.js';
import { findSession, insertSession } from '../../src/store/db/tables/session.js';
import { findLiveSite, insertSite, recountUsage, siteServingRow } from '../../src/store/db/tables/site.js';
import { accountSubscriptions, insertSubscription } from '../../src/store/db/tables/subscription.js';
import {
  findVersion,
  insertVersion,
  manifestFiles,
  versionFiles,
} from '../../src/store/db/tables/version.js';
import { adminQuery, TEST_DATABASE_URL } from '../helpers/app.js';

/** Past 2^32 (a 32-bit parse would wrap) and past the year 2030 (ms). */
const AT = 1_900_000_000_123;
const BIG_BYTES = 6_000_000_007;

/** Fields that hold a number or null in every table (timestamps, sizes, counts). */
const NUMERIC_FIELD = /(?:_at|_until|_end|size|_bytes|_count|attempts)$/;

/** Every numeric field of `row` is a number or null, and at least one is a number. */
function assertNumbers(label: string, row: object | undefined): void {
  assert.ok(row, `${label}: no row`);
  const fields = Object.entries(row).filter(([k]) => NUMERIC_FIELD.test(k));
  assert.ok(fields.length > 0, `${label}: no numeric field`);
  for (const [key, value] of fields) {
    assert.ok(value === null || typeof value === 'number', `${label}.${key} is ${typeof value} ${value}`);
  }
}

const DIALECTS = [
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
      const database = `slipway_n_${randomBytes(6).toString('hex')}`;
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

for (const dialect of DIALECTS) {
  describe(`the db layer returns numbers on ${dialect.name}`, () => {
    let db: Db;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ db, dispose } = await dialect.open());
      await db.migrate();
      const k = db.kysely;
      await insertAccount(k, {
        id: 'acct',
        email: 'n@example.com',
        plan: 'hobby',
        handle: 'num',
        api_key_hash: null,
        created_at: AT,
        updated_at: AT,
      });
      await setPlan(k, 'acct', 'hobby', AT + 1, AT);
      await db.transaction((trx) =>
        insertSite(
          trx,
          {
            slug: 'numbers-site',
            owner_id: 'acct',
            current_version_id: 'ver',
            title: null,
            description: null,
            og_image_path: null,
            password_hash: null,
            expires_at: AT,
            claim_token_hash: null,
            created_at: AT,
            updated_at: AT,
            deleted_at: null,
            takedown_at: null,
            takedown_reason: null,
            analytics_off: 0,
          },
          BIG_BYTES,
        ),
      );
      await insertVersion(
        k,
        {
          id: 'ver',
          site_slug: 'numbers-site',
          status: 'finalized',
          created_at: AT,
          finalized_at: AT,
          upload_expires_at: AT,
          file_count: 1,
          total_size: BIG_BYTES,
        },
        [
          {
            version_id: 'ver',
            path: 'big.bin',
            size: BIG_BYTES,
            content_type: 'application/octet-stream',
            expected_hash: null,
            hash: 'h',
          },
        ],
      );
    });
    after(() => dispose());

    test('rows of every table come back with number timestamps and sizes', async () => {
      const k = db.kysely;
      assertNumbers('account', await findAccountById(k, 'acct'));
      assert.equal((await findAccountById(k, 'acct'))?.plan_until, AT + 1);
      assertNumbers('site', await findLiveSite(k, 'numbers-site'));
      assertNumbers('site record', await siteServingRow(k, 'numbers-site'));
      const version = await findVersion(k, 'ver');
      assertNumbers('version', version);
      assert.equal(version?.total_size, BIG_BYTES);
      for (const file of [...(await versionFiles(k, 'ver')), ...(await manifestFiles(k, 'ver'))]) {
        assertNumbers('version file', file);
        assert.equal(file.size, BIG_BYTES);
      }
      await insertSession(k, { token_hash: 'th', account_id: 'acct', created_at: AT, expires_at: AT + 2 });
      assertNumbers('session', await findSession(k, 'th'));
      await insertDomain(k, {
        domain: 'n.example',
        account_id: 'acct',
        status: 'active',
        token: 't',
        created_at: AT,
        verified_at: AT,
        tls_requested_at: null,
        tls_error: null,
      });
      await markTlsRequested(k, 'n.example', AT + 3);
      const [domain] = await accountDomains(k, 'acct');
      assertNumbers('domain', domain);
      assert.equal(domain?.tls_requested_at, AT + 3);
      await insertLink(k, {
        id: 'lnk',
        account_id: 'acct',
        site_slug: 'numbers-site',
        domain: '',
        location: '/',
        created_at: AT,
      });
      assertNumbers('link', (await accountLinks(k, 'acct'))[0]);
      await insertSubscription(k, {
        id: 'sub',
        account_id: 'acct',
        provider: 'test',
        status: 'active',
        short_url: '',
        current_end: AT,
        event_at: AT,
        checkout_token_hash: null,
        created_at: AT,
        updated_at: AT,
      });
      assertNumbers('subscription', (await accountSubscriptions(k, 'acct'))[0]);
    });

    test('usage counters and their recount are numbers past 2^32 bytes', async () => {
      const k = db.kysely;
      assert.deepEqual(await accountUsage(k, 'acct'), { sites: 1, storageBytes: BIG_BYTES });
      await addUsage(k, 'acct', 0, 1);
      assert.deepEqual(await accountUsage(k, 'acct'), { sites: 1, storageBytes: BIG_BYTES + 1 });
      assert.deepEqual(await recountUsage(k), new Map([['acct', { sites: 1, storageBytes: BIG_BYTES }]]));
    });
  });
}
