// Queries of versions, their files (manifests) and the blob index.

import type { QueryCreator, Selectable } from 'kysely';
import { versionLabel } from '../../../shared/preview-names.js';
import { compiledOnce } from '../compiled.js';
import type { Db, Executor } from '../db.js';
import type { BlobScanTable, Database, VersionFileTable, VersionTable } from '../schema.js';
import { insertBlobScan } from './blob-scan.js';

export type VersionRow = Selectable<VersionTable>;
export type VersionFileRow = VersionFileTable;

/**
 * Rows per INSERT (and hashes per lookup): a manifest's most files (MAX_MANIFEST_FILES), so a version is one
 * statement (issue 23); 6 columns x 1,000 rows are 6,000 bound parameters, far below SQLite's 32,766 and
 * PostgreSQL's 65,535.
 */
const INSERT_CHUNK_ROWS = 1000;

/** A new version; its label is derived from its id here (a copied row's label is never kept). */
export async function insertVersion(
  db: Executor,
  row: Omit<VersionRow, 'label'> & { label?: string | null },
  files: VersionFileRow[],
): Promise<void> {
  await db
    .insertInto('versions')
    .values({ ...row, label: versionLabel(row.id) })
    .execute();
  for (let i = 0; i < files.length; i += INSERT_CHUNK_ROWS) {
    await db
      .insertInto('version_files')
      .values(files.slice(i, i + INSERT_CHUNK_ROWS))
      .execute();
  }
}

export async function findVersion(db: Executor, id: string): Promise<VersionRow | undefined> {
  return (await findVersionQuery(db, id))[0];
}

const findVersionQuery = compiledOnce((db, id) => db.selectFrom('versions').selectAll().where('id', '=', id));

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
  return manifestFilesQuery(db, versionId);
}

const manifestFilesQuery = compiledOnce((db, versionId) =>
  db
    .selectFrom('version_files')
    .select(['path', 'size', 'content_type', 'hash'])
    .where('version_id', '=', versionId),
);

export function versionFiles(db: Executor, versionId: string): Promise<VersionFileRow[]> {
  return db
    .selectFrom('version_files')
    .selectAll()
    .where('version_id', '=', versionId)
    .orderBy('path')
    .execute();
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
 * re-uploads) the blob, saves the secret scan's result of its bytes when the upload scanned them (the first
 * result for a hash and scanner version stays), and records the blob as the file's bytes unless the file
 * already has them. True when this call set the file's hash. One statement on PostgreSQL (data-modifying
 * CTEs: one round trip per upload, issue 23); SQLite, in process, runs them one by one.
 */
export async function recordUpload(
  db: Db,
  file: { versionId: string; path: string },
  blob: { hash: string; size: number; now: number },
  scan?: BlobScanTable,
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
    // The CTEs' names are never referenced (PostgreSQL runs a data-modifying CTE regardless): only their
    // type differs.
    let prefix = db.kysely.with('recorded', touch) as unknown as QueryCreator<Database>;
    if (scan)
      prefix = prefix.with('scanned', (e) => insertBlobScan(e, scan)) as unknown as QueryCreator<Database>;
    const res = await setHash(prefix).executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }
  await touch(db.kysely).execute();
  if (scan) await insertBlobScan(db.kysely, scan).execute();
  return (await setHash(db.kysely).executeTakeFirst()).numUpdatedRows > 0n;
}

/**
 * Indexes (or touches, as recordUpload does) a blob an archive deploy just stored, with the secret scan's
 * result of its bytes when it scanned them: the collector knows the blob from then on, and spares it for
 * BLOB_MIN_AGE_MS, whether or not a version ever names it.
 */
export async function touchBlob(
  db: Db,
  blob: { hash: string; size: number; now: number },
  scan?: BlobScanTable,
): Promise<void> {
  const touch = (e: QueryCreator<Database>) =>
    e
      .insertInto('blobs')
      .values({ hash: blob.hash, size: blob.size, created_at: blob.now })
      .onConflict((oc) => oc.column('hash').doUpdateSet({ created_at: blob.now }));
  if (db.dialect === 'postgres' && scan) {
    // One round trip, as recordUpload.
    await touch(
      db.kysely.with('scanned', (e) => insertBlobScan(e, scan)) as unknown as QueryCreator<Database>,
    ).execute();
    return;
  }
  await touch(db.kysely).execute();
  if (scan) await insertBlobScan(db.kysely, scan).execute();
}

/**
 * touchBlob for many blobs in one transaction (the archive deploy: one statement per 500 blobs, not two
 * round trips per file); a blob listed twice is recorded once.
 */
export async function touchBlobs(
  db: Db,
  blobs: ReadonlyArray<{ hash: string; size: number; now: number; scan?: BlobScanTable }>,
): Promise<void> {
  const unique = [...new Map(blobs.map((b) => [b.hash, b])).values()];
  const scans = unique.flatMap((b) => (b.scan ? [b.scan] : []));
  await db.transaction(async (trx) => {
    for (let i = 0; i < unique.length; i += TOUCH_CHUNK_ROWS) {
      await trx
        .insertInto('blobs')
        .values(
          unique
            .slice(i, i + TOUCH_CHUNK_ROWS)
            .map((b) => ({ hash: b.hash, size: b.size, created_at: b.now })),
        )
        .onConflict((oc) =>
          oc.column('hash').doUpdateSet((eb) => ({ created_at: eb.ref('excluded.created_at') })),
        )
        .execute();
    }
    for (let i = 0; i < scans.length; i += TOUCH_CHUNK_ROWS) {
      await trx
        .insertInto('blob_scans')
        .values(scans.slice(i, i + TOUCH_CHUNK_ROWS))
        .onConflict((oc) => oc.columns(['hash', 'scanner_version']).doNothing())
        .execute();
    }
  });
}
/** Rows per statement of touchBlobs (well under SQLite's and PostgreSQL's bound-parameter limits). */
const TOUCH_CHUNK_ROWS = 500;

/**
 * Records the expected bytes as stored for every file of a pending version that has none yet: the archive
 * deploy stored each file's bytes (and computed its hash) before the version was made, so the expected
 * hash is the stored one. Returns how many files it set.
 */
export async function markExpectedStored(db: Executor, versionId: string): Promise<number> {
  const res = await db
    .updateTable('version_files')
    .set((eb) => ({ hash: eb.ref('expected_hash') }))
    .where('version_id', '=', versionId)
    .where('hash', 'is', null)
    .where('expected_hash', 'is not', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
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

/** The site's finalized version with this label (its preview host's version), or undefined. */
export function finalizedVersionByLabel(
  db: Executor,
  slug: string,
  label: string,
): Promise<Pick<VersionRow, 'id'> | undefined> {
  return db
    .selectFrom('versions')
    .select('id')
    .where('site_slug', '=', slug)
    .where('label', '=', label)
    .where('status', '=', 'finalized')
    .orderBy('created_at')
    .executeTakeFirst();
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

/**
 * Abandons a pending version and drops its file list; a version no longer pending (a finalize that won)
 * keeps both. The status moves first, so a finalize running meanwhile either wins or is refused.
 */
export async function abandonVersion(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('versions')
    .set({ status: 'abandoned' })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
  const abandoned = db
    .selectFrom('versions')
    .select('id')
    .where('id', '=', id)
    .where('status', '=', 'abandoned');
  await db.deleteFrom('version_files').where('version_id', 'in', abandoned).execute();
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

/**
 * One page of the blob index in hash order after `after` (`''`: from the start), at most `limit`: a step of
 * the collector's walk, so no sweep runs one query over every blob (issue 23: at 100,000 blobs that query
 * held the event loop for 70-240 ms at start and every sweep).
 */
export async function blobPage(
  db: Executor,
  after: string,
  limit: number,
): Promise<Array<{ hash: string; size: number; created_at: number }>> {
  return db
    .selectFrom('blobs')
    .select(['hash', 'size', 'created_at'])
    .where('hash', '>', after)
    .orderBy('hash')
    .limit(limit)
    .execute();
}

/** Puts back a row forgetBlobIfUnreferenced removed (its bytes were kept: a backup held deletion). */
export async function reindexBlob(db: Executor, blob: { hash: string; size: number; created_at: number }) {
  await db
    .insertInto('blobs')
    .values({ hash: blob.hash, size: blob.size, created_at: blob.created_at })
    .onConflict((oc) => oc.column('hash').doNothing())
    .execute();
}

/** Which of `hashes` some version file references, by stored or expected hash. */
export async function referencedHashes(db: Executor, hashes: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < hashes.length; i += INSERT_CHUNK_ROWS) {
    const chunk = hashes.slice(i, i + INSERT_CHUNK_ROWS);
    const rows = await db
      .selectFrom('version_files')
      .select('hash as ref')
      .where('hash', 'in', chunk)
      .union(
        db.selectFrom('version_files').select('expected_hash as ref').where('expected_hash', 'in', chunk),
      )
      .execute();
    for (const r of rows) if (r.ref) found.add(r.ref);
  }
  return found;
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
