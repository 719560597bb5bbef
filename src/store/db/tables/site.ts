// Queries of the sites table (a deleted site keeps its row as a tombstone so its slug is never reissued).

import type { Executor } from '../db.js';
import type { SiteTable } from '../schema.js';

export type SiteRow = SiteTable;

/** A site that has not been deleted. */
export function findLiveSite(db: Executor, slug: string): Promise<SiteRow | undefined> {
  return db
    .selectFrom('sites')
    .selectAll()
    .where('slug', '=', slug)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function insertSite(db: Executor, row: SiteRow): Promise<void> {
  await db.insertInto('sites').values(row).execute();
}

export async function updateSite(
  db: Executor,
  slug: string,
  patch: Partial<Omit<SiteRow, 'slug'>>,
): Promise<void> {
  await db.updateTable('sites').set(patch).where('slug', '=', slug).execute();
}

export async function countOwnedSites(db: Executor, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom('sites')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('owner_id', '=', ownerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sites the account owns (not deleted), and the bytes of their current versions (CONTRACT "Account"). */
export async function ownedUsage(
  db: Executor,
  ownerId: string,
): Promise<{ sites: number; storageBytes: number }> {
  const row = await db
    .selectFrom('sites')
    .leftJoin('versions', 'versions.id', 'sites.current_version_id')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('sites'),
      eb.fn.coalesce(eb.fn.sum<number | string | null>('versions.total_size'), eb.lit(0)).as('bytes'),
    ])
    .where('sites.owner_id', '=', ownerId)
    .where('sites.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { sites: Number(row.sites), storageBytes: Number(row.bytes) };
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
