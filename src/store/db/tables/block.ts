// Queries of the operators' blocklists (core/operators.ts) and of the takedown and suspension columns.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { BlockTable } from '../schema.js';
import type { AccountRow } from './account.js';
import type { SiteRow } from './site.js';

export type BlockRow = Selectable<BlockTable>;
export type BlockKind = BlockTable['kind'];

export async function insertBlock(db: Executor, row: BlockRow): Promise<void> {
  await db.insertInto('blocks').values(row).execute();
}

export function findBlock(db: Executor, kind: BlockKind, value: string): Promise<BlockRow | undefined> {
  return db
    .selectFrom('blocks')
    .selectAll()
    .where('kind', '=', kind)
    .where('value', '=', value)
    .executeTakeFirst();
}

/** Every block, newest first (an operator's list: hundreds, not millions). */
export function listBlocks(db: Executor, kind?: BlockKind): Promise<BlockRow[]> {
  let q = db.selectFrom('blocks').selectAll();
  if (kind !== undefined) q = q.where('kind', '=', kind);
  return q.orderBy('created_at', 'desc').orderBy('id').execute();
}

/** True when the block existed. */
export async function deleteBlock(db: Executor, id: string): Promise<BlockRow | undefined> {
  const row = await db.selectFrom('blocks').selectAll().where('id', '=', id).executeTakeFirst();
  if (row === undefined) return undefined;
  await db.deleteFrom('blocks').where('id', '=', id).execute();
  return row;
}

/** The blocks among `values` of one kind (one indexed query). */
export async function blockedValues(db: Executor, kind: BlockKind, values: string[]): Promise<BlockRow[]> {
  if (values.length === 0) return [];
  const out: BlockRow[] = [];
  // Chunks keep the statement under SQLite's bound-parameter limit for large versions.
  for (let i = 0; i < values.length; i += 500) {
    const chunk = values.slice(i, i + 500);
    out.push(
      ...(await db
        .selectFrom('blocks')
        .selectAll()
        .where('kind', '=', kind)
        .where('value', 'in', chunk)
        .execute()),
    );
  }
  return out;
}

/**
 * The blocked hashes among a version's files (stored or expected), in one statement whatever the number of
 * files: finalize's check (a 1000-file version took two round trips as chunked look-ups).
 */
export async function blockedHashesOfVersion(db: Executor, versionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('version_files as vf')
    .innerJoin('blocks as b', (join) =>
      join
        .on('b.kind', '=', 'hash')
        .on((eb) => eb(eb.fn.coalesce('vf.hash', 'vf.expected_hash'), '=', eb.ref('b.value'))),
    )
    .select('b.value')
    .distinct()
    .where('vf.version_id', '=', versionId)
    .execute();
  return rows.map((r) => r.value);
}

export async function setSiteTakedown(
  db: Executor,
  slug: string,
  takedown: { reason: string; at: number } | null,
): Promise<void> {
  await db
    .updateTable('sites')
    .set({ takedown_reason: takedown?.reason ?? null, takedown_at: takedown?.at ?? null })
    .where('slug', '=', slug)
    .execute();
}

export async function setAccountSuspension(
  db: Executor,
  id: string,
  suspension: { reason: string; at: number } | null,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ suspended_reason: suspension?.reason ?? null, suspended_at: suspension?.at ?? null })
    .where('id', '=', id)
    .execute();
}

// ---- the operators' look-ups (core/operators.ts search and views) ---------------------------------

/** The account holding `handle`, by id. */
export async function accountIdByHandle(db: Executor, handle: string): Promise<string | undefined> {
  return (await db.selectFrom('accounts').select('id').where('handle', '=', handle).executeTakeFirst())?.id;
}

/** Accounts holding `domain` (pending claims included) and the sites linked on it. */
export async function domainHolders(
  db: Executor,
  domain: string,
): Promise<{ accountIds: string[]; slugs: string[] }> {
  const owners = await db.selectFrom('domains').select('account_id').where('domain', '=', domain).execute();
  const links = await db.selectFrom('links').select('site_slug').where('domain', '=', domain).execute();
  return { accountIds: owners.map((o) => o.account_id), slugs: links.map((l) => l.site_slug) };
}

/**
 * Accounts whose email is `email` or contains it, oldest first. `%` and `_` typed by the operator act as
 * LIKE wildcards (a wider search, never a wrong one; SQLite has no default LIKE escape to rely on).
 */
export async function accountIdsByEmail(db: Executor, email: string, limit: number): Promise<string[]> {
  const pattern = `%${email}%`;
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where((eb) => eb.or([eb('email', '=', email), eb('email', 'like', pattern)]))
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Sites with a version (any) holding a file of this hash. */
export async function slugsWithHash(db: Executor, hash: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('version_files as f')
    .innerJoin('versions as v', 'v.id', 'f.version_id')
    .select('v.site_slug')
    .distinct()
    .where((eb) => eb.or([eb('f.hash', '=', hash), eb('f.expected_hash', '=', hash)]))
    .limit(limit)
    .execute();
  return rows.map((r) => r.site_slug);
}

export function sitesBySlugs(db: Executor, slugs: string[], limit: number): Promise<SiteRow[]> {
  if (slugs.length === 0) return Promise.resolve([]);
  return db.selectFrom('sites').selectAll().where('slug', 'in', slugs).limit(limit).execute();
}

export function accountsByIds(db: Executor, ids: string[], limit: number): Promise<AccountRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('accounts').selectAll().where('id', 'in', ids).limit(limit).execute();
}

/** Sites (deleted ones included) of these accounts, newest first. */
export function sitesOfAccounts(db: Executor, ids: string[], limit: number): Promise<SiteRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('sites')
    .selectAll()
    .where('owner_id', 'in', ids)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

/** A site by slug, deleted or not. */
export function anySiteRow(db: Executor, slug: string): Promise<SiteRow | undefined> {
  return db.selectFrom('sites').selectAll().where('slug', '=', slug).executeTakeFirst();
}

export async function versionFileCount(db: Executor, versionId: string): Promise<number> {
  const row = await db
    .selectFrom('version_files')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The distinct stored hashes of a version's files. */
export async function versionHashes(db: Executor, versionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('version_files')
    .select('hash')
    .distinct()
    .where('version_id', '=', versionId)
    .where('hash', 'is not', null)
    .execute();
  return rows.map((r) => r.hash!);
}

/** Those of `hashes` that the live version of a site other than `slug`, not deleted or taken down, serves. */
export async function hashesServedElsewhere(
  db: Executor,
  hashes: string[],
  slug: string,
): Promise<Set<string>> {
  const shared = new Set<string>();
  for (let i = 0; i < hashes.length; i += 500) {
    const rows = await db
      .selectFrom('version_files as f')
      .innerJoin('sites as s', 's.current_version_id', 'f.version_id')
      .select('f.hash')
      .distinct()
      .where('f.hash', 'in', hashes.slice(i, i + 500))
      .where('s.slug', '!=', slug)
      .where('s.deleted_at', 'is', null)
      .where('s.takedown_at', 'is', null)
      .execute();
    for (const r of rows) if (r.hash) shared.add(r.hash);
  }
  return shared;
}
