// Queries of versions, their files (manifests) and the blob index.

import type { QueryCreator } from 'kysely';
import type { Db, Executor } from '../db.js';
import type { Database, VersionFileTable, VersionTable } from '../schema.js';

export type VersionRow = VersionTable;
export type VersionFileRow = VersionFileTable;

/** Rows per INSERT: keeps bound parameters far below SQLite's and PostgreSQL's limits. */
const INSERT_CHUNK_ROWS = 200;

export async function insertVersion(db: Executor, row: VersionRow, files: VersionFileRow[]): Promise<void> {
  await db.insertInto('versions').values(row).execute();
  for (let i = 0; i < files.length; i += INSERT_CHUNK_ROWS) {
    await db
      .insertInto('version_files')
      .values(files.slice(i, i + INSERT_CHUNK_ROWS))
      .execute();
  }
}

export function findVersion(db: Executor, id: string): Promise<VersionRow | undefined> {
  return db.selectFrom('versions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The site's pending version (at most one is pending: a new create/update abandons the previous). */
export function pendingVersionOf(db: Executor, slug: string): Promise<VersionRow | undefined> {
  return db
    .selectFrom('versions')
    .selectAll()
    .where('site_slug', '=', slug)
    .where('status', '=', 'pending')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

/** Marks the site's pending versions abandoned and drops their file lists (their blobs become collectable). */
export async function abandonPendingVersions(db: Executor, slug: string): Promise<void> {
  const pending = db
    .selectFrom('versions')
    .select('id')
    .where('site_slug', '=', slug)
    .where('status', '=', 'pending');
  await db.deleteFrom('version_files').where('version_id', 'in', pending).execute();
  await db
    .updateTable('versions')
    .set({ status: 'abandoned' })
    .where('site_slug', '=', slug)
    .where('status', '=', 'pending')
    .execute();
}

/**
 * Makes a pending version finalized; false (nothing changed) when it is no longer pending (abandoned or
 * finalized by a concurrent call).
 */
export async function markVersionFinalized(db: Executor, id: string, now: number): Promise<boolean> {
  const res = await db
    .updateTable('versions')
    .set({ status: 'finalized', finalized_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** The fields of a version's files the site server keeps in memory (its manifest), in no order. */
export function manifestFiles(
  db: Executor,
  versionId: string,
): Promise<Pick<VersionFileRow, 'path' | 'size' | 'content_type' | 'hash'>[]> {
  return db
    .selectFrom('version_files')
    .select(['path', 'size', 'content_type', 'hash'])
    .where('version_id', '=', versionId)
    .execute();
}

export function versionFiles(db: Executor, versionId: string): Promise<VersionFileRow[]> {
  return db
    .selectFrom('version_files')
    .selectAll()
    .where('version_id', '=', versionId)
    .orderBy('path')
    .execute();
}

export function versionFile(
  db: Executor,
  versionId: string,
  path: string,
): Promise<VersionFileRow | undefined> {
  return db
    .selectFrom('version_files')
    .selectAll()
    .where('version_id', '=', versionId)
    .where('path', '=', path)
    .executeTakeFirst();
}

/** A file of a version with the version's status: what an upload address needs, in one query. */
export function uploadTarget(
  db: Executor,
  versionId: string,
  path: string,
): Promise<(VersionFileRow & { status: VersionRow['status'] }) | undefined> {
  return db
    .selectFrom('version_files')
    .innerJoin('versions', 'versions.id', 'version_files.version_id')
    .selectAll('version_files')
    .select('versions.status')
    .where('version_files.version_id', '=', versionId)
    .where('version_files.path', '=', path)
    .executeTakeFirst();
}

/**
 * After an upload stored `hash`: indexes (or touches: `created_at` is "last written", so GC spares fresh
 * re-uploads) the blob and records it as the file's bytes unless
 * the file already has them. True when this call set the file's hash. One statement on PostgreSQL (a
 * data-modifying CTE: one round trip per upload instead of two); SQLite, in process, runs the two.
 */
export async function recordUpload(
  db: Db,
  file: { versionId: string; path: string },
  blob: { hash: string; size: number; now: number },
): Promise<boolean> {
  const touch = (e: QueryCreator<Database>) =>
    e
      .insertInto('blobs')
      .values({ hash: blob.hash, size: blob.size, created_at: blob.now })
      .onConflict((oc) => oc.column('hash').doUpdateSet({ created_at: blob.now }));
  const setHash = (e: QueryCreator<Database>) =>
    e
      .updateTable('version_files')
      .set({ hash: blob.hash })
      .where('version_id', '=', file.versionId)
      .where('path', '=', file.path)
      .where('hash', 'is', null);
  if (db.dialect === 'postgres') {
    // The CTE's name is never referenced (PostgreSQL runs a data-modifying CTE regardless): only its type differs.
    const withTouch = db.kysely.with('recorded', touch) as unknown as QueryCreator<Database>;
    const res = await setHash(withTouch).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
  await touch(db.kysely).execute();
  return (await setHash(db.kysely).executeTakeFirst()).numUpdatedRows > 0n;
}

export async function missingPaths(db: Executor, versionId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('version_files')
    .select('path')
    .where('version_id', '=', versionId)
    .where('hash', 'is', null)
    .orderBy('path')
    .execute();
  return rows.map((r) => r.path);
}

export function finalizedVersions(db: Executor, slug: string): Promise<VersionRow[]> {
  return db
    .selectFrom('versions')
    .selectAll()
    .where('site_slug', '=', slug)
    .where('status', '=', 'finalized')
    .orderBy('finalized_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/** Deletes every version of a site and their file lists (site delete). */
export async function deleteVersionsOf(db: Executor, slug: string): Promise<void> {
  const ids = db.selectFrom('versions').select('id').where('site_slug', '=', slug);
  await db.deleteFrom('version_files').where('version_id', 'in', ids).execute();
  await db.deleteFrom('versions').where('site_slug', '=', slug).execute();
}

/** Pending versions whose upload window closed before `before` (the sweeper abandons them). */
export async function stalePendingVersions(
  db: Executor,
  before: number,
  limit: number,
): Promise<VersionRow[]> {
  return db
    .selectFrom('versions')
    .selectAll()
    .where('status', '=', 'pending')
    .where('upload_expires_at', '<=', before)
    .limit(limit)
    .execute();
}

export async function abandonVersion(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('version_files').where('version_id', '=', id).execute();
  await db
    .updateTable('versions')
    .set({ status: 'abandoned' })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

// ---- blob index -------------------------------------------------------------------------------

/**
 * The subset of `hashes` whose bytes some version of the owner's sites already holds (stored, not
 * merely promised). Scoped to the owner: knowing a hash must not let anyone publish bytes they
 * never had (the classic cross-account dedup leak).
 */
export async function ownerStoredHashes(
  db: Executor,
  ownerId: string,
  hashes: string[],
): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < hashes.length; i += INSERT_CHUNK_ROWS) {
    const rows = await db
      .selectFrom('version_files')
      .innerJoin('versions', 'versions.id', 'version_files.version_id')
      .innerJoin('sites', 'sites.slug', 'versions.site_slug')
      .select('version_files.hash')
      .distinct()
      .where('sites.owner_id', '=', ownerId)
      .where('version_files.hash', 'in', hashes.slice(i, i + INSERT_CHUNK_ROWS))
      .execute();
    for (const r of rows) if (r.hash) found.add(r.hash);
  }
  return found;
}

/** Blobs no version file references (by stored or expected hash) and older than `createdBefore`. */
export async function unreferencedBlobs(
  db: Executor,
  createdBefore: number,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('blobs')
    .select('hash')
    .where('created_at', '<', createdBefore)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(selectFrom('version_files').select('path').whereRef('version_files.hash', '=', 'blobs.hash')),
      ),
    )
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('version_files')
            .select('path')
            .whereRef('version_files.expected_hash', '=', 'blobs.hash'),
        ),
      ),
    )
    .limit(limit)
    .execute();
  return rows.map((r) => r.hash);
}

/**
 * Removes a blob's index row only if it is still unreferenced and was not written again since
 * `createdBefore`; true when the caller may delete the bytes.
 */
export async function forgetBlobIfUnreferenced(
  db: Executor,
  hash: string,
  createdBefore: number,
): Promise<boolean> {
  const res = await db
    .deleteFrom('blobs')
    .where('hash', '=', hash)
    .where('created_at', '<', createdBefore)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('version_files').select('path').where('version_files.hash', '=', hash))),
    )
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('version_files').select('path').where('version_files.expected_hash', '=', hash))),
    )
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}
