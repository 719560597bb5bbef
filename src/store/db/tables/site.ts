// Queries of the sites table (a deleted site keeps its row as a tombstone so its slug is never reissued).

import type { Transaction } from 'kysely';
import { compiledOnce } from '../compiled.js';
import type { Executor } from '../db.js';
import type { Database, SiteTable } from '../schema.js';
import { addUsage } from './account.js';
import { deleteAliasesOf } from './alias.js';
import { deleteSiteAnalytics } from './analytics.js';
import { deleteSiteDeployTokens } from './deploy-token.js';
import { deleteLinksWhere } from './link.js';
import { deleteProxyHosts } from './proxy-host.js';
import { deleteSiteVariables } from './site-variable.js';
import { deleteVersionsOf } from './version.js';

export type SiteRow = SiteTable;

/**
 * The fields that decide what a site counts toward its owner's usage (1 site, and the bytes of its live
 * version, while it is owned and not deleted). Only insertSite() and changeSite() write them, so the
 * account counters (accounts.site_count, accounts.stored_bytes) move in the same transaction.
 */
type CountedField = 'owner_id' | 'current_version_id' | 'deleted_at';

/** A site that has not been deleted. */
export function findLiveSite(db: Executor, slug: string): Promise<SiteRow | undefined> {
  return db
    .selectFrom('sites')
    .selectAll()
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** The fields the site server serves a site by (its record, serve/site-record.ts); deleted sites included. */
export async function siteServingRow(db: Executor, slug: string) {
  return (await servingRowQuery(db, slug))[0];
}

// The owner's suspension rides along (one indexed join): a suspended owner's sites answer 403.
const servingRowQuery = compiledOnce((db, slug) =>
  db
    .selectFrom('sites as s')
    .leftJoin('accounts as a', 'a.id', 's.owner_id')
    .select([
      's.slug',
      's.current_version_id',
      's.title',
      's.description',
      's.og_image_path',
      's.password_hash',
      's.expires_at',
      's.deleted_at',
      's.takedown_at',
      's.analytics_off',
      'a.suspended_at as owner_suspended_at',
    ])
    .where('s.slug', '=', slug),
);

/** Whether a site has this slug: `live`, `deleted` (a retired slug: its row stays), or undefined (none). */
export async function slugState(db: Executor, slug: string): Promise<'live' | 'deleted' | undefined> {
  const row = (await slugStateQuery(db, slug))[0];
  return row === undefined ? undefined : row.deleted_at === null ? 'live' : 'deleted';
}

const slugStateQuery = compiledOnce((db, slug) =>
  db.selectFrom('sites').select('deleted_at').where('slug', '=', slug),
);

/** A new site; `liveBytes` is the total size of `row.current_version_id` (0 when it has none yet). */
export async function insertSite(trx: Transaction<Database>, row: SiteRow, liveBytes: number): Promise<void> {
  await trx.insertInto('sites').values(row).execute();
  if (row.owner_id !== null && row.deleted_at === null) await addUsage(trx, row.owner_id, 1, liveBytes);
}

/** Changes fields that do not move usage counters (title, password, expiry, ...). */
export async function updateSite(
  db: Executor,
  slug: string,
  patch: Partial<Omit<SiteRow, 'slug' | CountedField>>,
): Promise<void> {
  await db.updateTable('sites').set(patch).where('slug', '=', slug).execute();
}

/**
 * Takes the site row's lock for the rest of the transaction without changing it (a no-op write: the row
 * lock on PostgreSQL, the write lock on SQLite). Every transaction that changes a site and what hangs off
 * it locks the row first: one lock order, so two of them never deadlock.
 */
export async function lockSite(trx: Transaction<Database>, slug: string): Promise<void> {
  await trx
    .updateTable('sites')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('slug', '=', slug)
    .execute();
}

/**
 * Writes `patch` (which may change the owner, the live version or delete the site) and moves the usage
 * counters of the old and new owner by what the site counted before and counts after. The row is locked
 * first (a write to it takes the row lock on PostgreSQL and the write lock on SQLite), so concurrent
 * changes of one site apply one after the other. Returns false, changing nothing, when `guard` refuses
 * the locked row (e.g. a claim that lost a race).
 */
export async function changeSite(
  trx: Transaction<Database>,
  slug: string,
  patch: Partial<Omit<SiteRow, 'slug'>>,
  guard: (row: SiteRow) => boolean = () => true,
): Promise<boolean> {
  await lockSite(trx, slug);
  const before = await trx.selectFrom('sites').selectAll().where('slug', '=', slug).executeTakeFirst();
  if (before === undefined || !guard(before)) return false;
  await trx.updateTable('sites').set(patch).where('slug', '=', slug).execute();
  const after: SiteRow = { ...before, ...patch };
  const was = await counted(trx, before);
  const is = await counted(trx, after);
  if (was.owner !== null && was.owner === is.owner) {
    if (was.bytes !== is.bytes) await addUsage(trx, was.owner, 0, is.bytes - was.bytes);
    return true;
  }
  if (was.owner !== null) await addUsage(trx, was.owner, -1, -was.bytes);
  if (is.owner !== null) await addUsage(trx, is.owner, 1, is.bytes);
  return true;
}

/**
 * Deletes a site: the row stays as a tombstone (the slug is never reissued) with nothing left on it, and its
 * versions, aliases, variables, proxy hosts, links and deploy tokens go in the same transaction. The owner's usage drops by changeSite.
 */
export async function tombstoneSite(trx: Transaction<Database>, slug: string, now: number): Promise<void> {
  await changeSite(trx, slug, {
    deleted_at: now,
    updated_at: now,
    current_version_id: null,
    title: null,
    description: null,
    og_image_path: null,
    password_hash: null,
    claim_token_hash: null,
  });
  await deleteVersionsOf(trx, slug);
  await deleteAliasesOf(trx, slug);
  await deleteSiteVariables(trx, slug);
  await deleteProxyHosts(trx, slug);
  await deleteLinksWhere(trx, { slug });
  await deleteSiteDeployTokens(trx, slug);
  // Its visit counts go with it (counts still in a node's memory arrive later and age out with retention).
  await deleteSiteAnalytics(trx, slug);
}

/** Who a site state counts toward, and with how many bytes (its live version's total size). */
async function counted(db: Executor, row: SiteRow): Promise<{ owner: string | null; bytes: number }> {
  if (row.owner_id === null || row.deleted_at !== null) return { owner: null, bytes: 0 };
  if (row.current_version_id === null) return { owner: row.owner_id, bytes: 0 };
  const version = await db
    .selectFrom('versions')
    .select('total_size')
    .where('id', '=', row.current_version_id)
    .executeTakeFirst();
  return { owner: row.owner_id, bytes: version?.total_size ?? 0 };
}

/**
 * Usage recomputed from the sites and their live versions, per owner: the truth the counters keep, for
 * checking them (test/http/usage-counters.test.ts). Migration 002 fills the counters with the same query.
 */
export async function recountUsage(
  db: Executor,
): Promise<Map<string, { sites: number; storageBytes: number }>> {
  const rows = await db
    .selectFrom('sites')
    .leftJoin('versions', 'versions.id', 'sites.current_version_id')
    .select((eb) => [
      'sites.owner_id',
      eb.fn.countAll<number | string>().as('sites'),
      eb.fn.coalesce(eb.fn.sum<number | string | null>('versions.total_size'), eb.lit(0)).as('bytes'),
    ])
    .where('sites.owner_id', 'is not', null)
    .where('sites.deleted_at', 'is', null)
    .groupBy('sites.owner_id')
    .execute();
  // Aggregates are the one place a driver hands back text (PostgreSQL's SUM of bigint is numeric).
  return new Map(rows.map((r) => [r.owner_id!, { sites: Number(r.sites), storageBytes: Number(r.bytes) }]));
}

export interface SiteListRow extends SiteRow {
  file_count: number | null;
  total_size: number | null;
}

/** Owned live sites, newest first, keyset-paginated on (created_at, slug). */
export function listOwnedSites(
  db: Executor,
  ownerId: string,
  limit: number,
  after?: { createdAt: number; slug: string },
): Promise<SiteListRow[]> {
  let q = db
    .selectFrom('sites')
    .leftJoin('versions', 'versions.id', 'sites.current_version_id')
    .selectAll('sites')
    .select(['versions.file_count', 'versions.total_size'])
    .where('sites.owner_id', '=', ownerId)
    .where('sites.deleted_at', 'is', null);
  if (after) {
    q = q.where((eb) =>
      eb.or([
        eb('sites.created_at', '<', after.createdAt),
        eb.and([eb('sites.created_at', '=', after.createdAt), eb('sites.slug', '<', after.slug)]),
      ]),
    );
  }
  return q.orderBy('sites.created_at', 'desc').orderBy('sites.slug', 'desc').limit(limit).execute();
}

/** Expired anonymous sites whose grace period has passed (the sweeper deletes them). */
export async function expiredAnonymousSlugs(
  db: Executor,
  expiredBefore: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('sites')
    .select('slug')
    .where('owner_id', 'is', null)
    .where('deleted_at', 'is', null)
    .where('expires_at', '<=', expiredBefore)
    .limit(limit)
    .execute();
  return rows.map((r) => r.slug);
}
