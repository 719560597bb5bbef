// Queries of versions, their files (manifests) and the blob index.

import type { Executor } from '../db.js';
import type { VersionFileTable, VersionTable } from '../schema.js';

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

/** Records the stored bytes of one file; true when this call set it (it was still missing). */
export async function setFileHash(
  db: Executor,
  versionId: string,
  path: string,
  hash: string,
): Promise<boolean> {
  const res = await db
    .updateTable('version_files')
    .set({ hash })
    .where('version_id', '=', versionId)
    .where('path', '=', path)
    .where('hash', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
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

/** Indexes a stored blob, or touches it: `created_at` is "last written", so GC spares fresh re-uploads. */
export async function recordBlob(db: Executor, hash: string, size: number, now: number): Promise<void> {
  await db
    .insertInto('blobs')
    .values({ hash, size, created_at: now })
    .onConflict((oc) => oc.column('hash').doUpdateSet({ created_at: now }))
    .execute();
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
