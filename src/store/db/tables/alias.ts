// Queries of site aliases: `<slug>--<name>` names one finalized version of the site and moves when re-pointed.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { SiteAliasTable } from '../schema.js';

export type AliasRow = Selectable<SiteAliasTable>;

/** The site's aliases, by name. */
export function siteAliases(db: Executor, slug: string): Promise<AliasRow[]> {
  return db.selectFrom('site_aliases').selectAll().where('site_slug', '=', slug).orderBy('name').execute();
}

export function findAlias(db: Executor, slug: string, name: string): Promise<AliasRow | undefined> {
  return db
    .selectFrom('site_aliases')
    .selectAll()
    .where('site_slug', '=', slug)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** The version an alias points at, if it is still finalized (the alias host's version). */
export async function aliasVersion(db: Executor, slug: string, name: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('site_aliases')
    .innerJoin('versions', 'versions.id', 'site_aliases.version_id')
    .select('site_aliases.version_id')
    .where('site_aliases.site_slug', '=', slug)
    .where('site_aliases.name', '=', name)
    .where('versions.site_slug', '=', slug)
    .where('versions.status', '=', 'finalized')
    .executeTakeFirst();
  return row?.version_id;
}

/** Points `name` at `versionId` (creating the alias or moving it). */
export async function upsertAlias(
  db: Executor,
  slug: string,
  name: string,
  versionId: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('site_aliases')
    .values({ site_slug: slug, name, version_id: versionId, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.columns(['site_slug', 'name']).doUpdateSet({ version_id: versionId, updated_at: now }),
    )
    .execute();
}

export async function countAliases(db: Executor, slug: string): Promise<number> {
  const row = await db
    .selectFrom('site_aliases')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('site_slug', '=', slug)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Removes an alias; false when there was none. */
export async function deleteAlias(db: Executor, slug: string, name: string): Promise<boolean> {
  const res = await db
    .deleteFrom('site_aliases')
    .where('site_slug', '=', slug)
    .where('name', '=', name)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** Every alias of a site (site delete). */
export async function deleteAliasesOf(db: Executor, slug: string): Promise<void> {
  await db.deleteFrom('site_aliases').where('site_slug', '=', slug).execute();
}
