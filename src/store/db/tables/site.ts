// Queries of the sites table.

import type { Executor } from '../db.js';

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
