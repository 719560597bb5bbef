// The account's usage counters (accounts.site_count, stored_bytes) equal what they count, recomputed from
// the sites and their live versions, after a seeded random sequence of every operation that moves them:
// create, finalize, update, delete, claim, duplicate, restore, metadata/expiry, the sweeper (anonymous
// expiry, stale versions, GC). GET /api/v1/account reads the counters, so it is checked too.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { migrationProvider } from '../../src/store/db/migrations.js';
import type { Database } from '../../src/store/db/schema.js';
import { recountUsage } from '../../src/store/db/tables/site.js';
import { signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { publish, update } from '../helpers/publish.js';

/** mulberry32: a small seeded generator, so a failing sequence can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 20261123;
const STEPS = 120;

describe('account usage counters', () => {
  let t: TestApp;
  const keys: string[] = [];

  before(async () => {
    t = await startTestApp({ ANONYMOUS_GRACE_S: '60' });
    keys.push(await signIn(t, 'counter-a@example.com'), await signIn(t, 'counter-b@example.com'));
  });
  after(() => t.close());

  /** Compares every account's counters with the recount and with GET /api/v1/account. */
  async function assertConsistent(step: string): Promise<void> {
    const truth = await recountUsage(t.ctx.db.kysely);
    const accounts = await t.ctx.db.kysely
      .selectFrom('accounts')
      .select(['id', 'site_count', 'stored_bytes'])
      .execute();
    for (const a of accounts) {
      const expected = truth.get(a.id) ?? { sites: 0, storageBytes: 0 };
      assert.deepEqual(
        { sites: Number(a.site_count), storageBytes: Number(a.stored_bytes) },
        expected,
        `${step}: counters of ${a.id}`,
      );
    }
    for (const key of keys) {
      const res = await t.api('/api/v1/account', { key });
      const listed = await t.api('/api/v1/publishes', { key });
      assert.equal(res.body.usage.sites.used, listed.body.total, `${step}: account and list agree`);
      const total = listed.body.sites.reduce((n: number, s: { totalSize: number }) => n + s.totalSize, 0);
      assert.equal(res.body.usage.storage.usedBytes, total, `${step}: usedBytes is the listed live bytes`);
    }
  }

  test(`a random sequence of ${STEPS} operations (seed ${SEED}) keeps the counters exact`, async () => {
    const random = rng(SEED);
    const pick = <T>(xs: T[]): T | undefined =>
      xs.length === 0 ? undefined : xs[Math.floor(random() * xs.length)];
    const owned: Array<{ slug: string; key: string }> = [];
    const anonymous: Array<{ slug: string; claimToken: string }> = [];
    const content = () => 'x'.repeat(1 + Math.floor(random() * 5000)) + random().toString(36);
    const counts: Record<string, number> = {};

    const operations: Record<string, () => Promise<unknown>> = {
      async create() {
        const key = pick(keys)!;
        const out = await publish(
          t,
          { 'index.html': content(), 'a.css': content() },
          { key, finalize: random() < 0.85 },
        );
        if (out.create.status === 201) owned.push({ slug: out.slug, key });
      },
      async createAnonymous() {
        const out = await publish(t, { 'index.html': content() });
        if (out.create.status === 201)
          anonymous.push({ slug: out.slug, claimToken: out.create.body.claimToken });
      },
      async update() {
        const site = pick(owned);
        if (site)
          await update(t, site.key, site.slug, { 'index.html': content() }, { finalize: random() < 0.8 });
      },
      async delete() {
        const site = pick(owned);
        if (!site) return;
        await t.api(`/api/v1/publish/${site.slug}`, { method: 'DELETE', key: site.key });
        owned.splice(owned.indexOf(site), 1);
      },
      async claim() {
        const site = pick(anonymous);
        if (!site) return;
        const key = pick(keys)!;
        const res = await t.api(`/api/v1/publish/${site.slug}/claim`, {
          method: 'POST',
          key,
          body: { claimToken: site.claimToken },
        });
        anonymous.splice(anonymous.indexOf(site), 1);
        if (res.status === 200) owned.push({ slug: site.slug, key });
      },
      async duplicate() {
        const site = pick(owned);
        if (!site) return;
        const res = await t.api(`/api/v1/publish/${site.slug}/duplicate`, { method: 'POST', key: site.key });
        if (res.status === 201) owned.push({ slug: res.body.slug, key: site.key });
      },
      async restore() {
        const site = pick(owned);
        if (!site) return;
        const versions = await t.api(`/api/v1/publish/${site.slug}/versions`, { key: site.key });
        const version = pick((versions.body?.versions ?? []) as Array<{ versionId: string }>);
        if (version)
          await t.api(`/api/v1/publish/${site.slug}/versions/${version.versionId}/restore`, {
            method: 'POST',
            key: site.key,
          });
      },
      async expire() {
        const site = pick(owned);
        if (site)
          await t.api(`/api/v1/publish/${site.slug}/metadata`, {
            method: 'PATCH',
            key: site.key,
            body: { ttlSeconds: random() < 0.5 ? 1 : null },
          });
      },
      async sweep() {
        // Past anonymous expiry and grace, past the finalize grace: the sweeper deletes and collects.
        t.clock.advance(25 * 3_600_000);
        await sweepNow(t);
        anonymous.length = 0;
      },
    };
    const names = Object.keys(operations);
    const weights: Record<string, number> = { create: 4, update: 3, sweep: 0.5 };
    const bag = names.flatMap((n) => Array.from({ length: Math.round((weights[n] ?? 1.5) * 2) }, () => n));

    for (let step = 1; step <= STEPS; step++) {
      const name = pick(bag)!;
      counts[name] = (counts[name] ?? 0) + 1;
      await operations[name]!();
      if (step % 10 === 0) await assertConsistent(`step ${step} (${name})`);
    }
    await assertConsistent('end');
    // The sequence exercised every operation, and the accounts ended with sites and bytes to count.
    assert.deepEqual(
      names.filter((n) => !counts[n]),
      [],
      `operations never drawn: ${JSON.stringify(counts)}`,
    );
    const truth = await recountUsage(t.ctx.db.kysely);
    assert.ok([...truth.values()].some((u) => u.sites > 0 && u.storageBytes > 0));
  });
});

test('migration 002 fills the counters of accounts that already have sites', async () => {
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
  try {
    const migrator = new Migrator({ db, provider: migrationProvider });
    assert.equal((await migrator.migrateTo('001_initial')).error, undefined);
    const now = Date.now();
    await sql`insert into accounts (id, email, plan, created_at, updated_at) values
      ('a', 'a@example.com', 'free', ${now}, ${now}), ('b', 'b@example.com', 'free', ${now}, ${now})`.execute(
      db,
    );
    const site = (slug: string, owner: string | null, version: string | null, deleted: number | null) =>
      sql`insert into sites (slug, owner_id, current_version_id, created_at, updated_at, deleted_at)
          values (${slug}, ${owner}, ${version}, ${now}, ${now}, ${deleted})`.execute(db);
    const version = (id: string, slug: string, size: number) =>
      sql`insert into versions (id, site_slug, status, created_at, upload_expires_at, file_count, total_size)
          values (${id}, ${slug}, 'finalized', ${now}, ${now}, 1, ${size})`.execute(db);
    await site('s1', 'a', 'v1', null);
    await site('s2', 'a', null, null); // pending: counts as a site, no bytes
    await site('s3', 'a', 'v3', now); // deleted: not counted
    await site('s4', null, 'v4', null); // anonymous
    await version('v1', 's1', 100);
    await version('v1old', 's1', 5000); // history: not counted
    await version('v3', 's3', 700);
    await version('v4', 's4', 900);
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const rows = await db
      .selectFrom('accounts')
      .select(['id', 'site_count', 'stored_bytes'])
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.id, Number(r.site_count), Number(r.stored_bytes)]),
      [
        ['a', 2, 100],
        ['b', 0, 0],
      ],
    );
  } finally {
    await db.destroy();
  }
});

describe('concurrent changes of one site', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await startTestApp();
    key = await signIn(t, 'concurrent@example.com');
  });
  after(() => t.close());

  test('update, finalize, restore and delete racing on one site never answer 5xx, and counters stay exact', async () => {
    // Every transaction that changes a site and its versions locks the site row first: with two lock
    // orders, PostgreSQL would abort one of two such transactions as a deadlock (a 500).
    const statuses: number[] = [];
    for (let round = 0; round < 12; round++) {
      const first = await publish(t, { 'index.html': `v1 ${round}` }, { key });
      const slug = first.slug;
      const next = await update(t, key, slug, { 'index.html': `v2 ${round}` }, { finalize: false });
      const answers = await Promise.all([
        t.api(`/api/v1/publish/${slug}/finalize`, {
          method: 'POST',
          key,
          body: { versionId: next.versionId },
        }),
        t.api(`/api/v1/publish/${slug}`, {
          method: 'PUT',
          key,
          body: { files: [{ path: 'a.txt', size: 1, contentType: 'text/plain' }] },
        }),
        t.api(`/api/v1/publish/${slug}/versions/${first.versionId}/restore`, { method: 'POST', key }),
        round % 2 === 0
          ? t.api(`/api/v1/publish/${slug}`, { method: 'DELETE', key })
          : t.api('/api/v1/account', { key }),
      ]);
      statuses.push(...answers.map((a) => a.status));
      for (const a of answers) assert.ok(a.status < 500, `${a.status} ${a.text}`);
    }
    const truth = await recountUsage(t.ctx.db.kysely);
    const account = await t.api('/api/v1/account', { key });
    const expected = [...truth.values()][0] ?? { sites: 0, storageBytes: 0 };
    assert.equal(account.body.usage.sites.used, expected.sites);
    assert.equal(account.body.usage.storage.usedBytes, expected.storageBytes);
    assert.ok(statuses.includes(200), 'some of the racing changes succeeded');
  });
});
