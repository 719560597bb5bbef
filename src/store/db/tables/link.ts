// Queries of links: a site mounted at a location of its owner's handle (`domain` = '') or domain.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { LinkTable } from '../schema.js';

export type LinkRow = Selectable<LinkTable>;

/** The handle's links are stored with this domain value. */
export const HANDLE_TARGET = '';

export function accountLinks(db: Executor, accountId: string): Promise<LinkRow[]> {
  return db
    .selectFrom('links')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** Links of one target (the account's handle, or a domain), longest location first. */
export async function targetLinks(db: Executor, accountId: string, domain: string): Promise<LinkRow[]> {
  const rows = await db
    .selectFrom('links')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('domain', '=', domain)
    .execute();
  return rows.sort((a, b) => b.location.length - a.location.length);
}

/** Links that mount a site. */
export function siteLinks(db: Executor, slug: string): Promise<LinkRow[]> {
  return db.selectFrom('links').selectAll().where('site_slug', '=', slug).execute();
}

export async function insertLink(db: Executor, row: LinkRow): Promise<void> {
  await db.insertInto('links').values(row).execute();
}

/** Deletes links matching the filter; returns the deleted rows (for cache invalidation). */
export async function deleteLinksWhere(
  db: Executor,
  filter: { id?: string; accountId?: string; slug?: string; domain?: string },
): Promise<LinkRow[]> {
  let select = db.selectFrom('links').selectAll();
  let del = db.deleteFrom('links');
  if (filter.id !== undefined) {
    select = select.where('id', '=', filter.id);
    del = del.where('id', '=', filter.id);
  }
  if (filter.accountId !== undefined) {
    select = select.where('account_id', '=', filter.accountId);
    del = del.where('account_id', '=', filter.accountId);
  }
  if (filter.slug !== undefined) {
    select = select.where('site_slug', '=', filter.slug);
    del = del.where('site_slug', '=', filter.slug);
  }
  if (filter.domain !== undefined) {
    select = select.where('domain', '=', filter.domain);
    del = del.where('domain', '=', filter.domain);
  }
  const rows = await select.execute();
  if (rows.length > 0) await del.execute();
  return rows;
}
