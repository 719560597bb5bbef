// Queries of blob_scans: the secret scan's result per blob hash and scanner version.

import type { QueryCreator } from 'kysely';
import type { Executor } from '../db.js';
import type { BlobScanTable, Database } from '../schema.js';

/**
 * Hashes per query: a manifest's most files (MAX_MANIFEST_FILES), so a finalize reads its results in one
 * statement; bound parameters stay far below SQLite's 32,766 and PostgreSQL's 65,535.
 */
const LOOKUP_CHUNK = 1000;

/** The stored results (JSON text) of `hashes` for `scannerVersion`, by hash; missing hashes are absent. */
export async function findBlobScans(
  db: Executor,
  scannerVersion: string,
  hashes: string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < hashes.length; i += LOOKUP_CHUNK) {
    const rows = await db
      .selectFrom('blob_scans')
      .select(['hash', 'findings'])
      .where('scanner_version', '=', scannerVersion)
      .where('hash', 'in', hashes.slice(i, i + LOOKUP_CHUNK))
      .execute();
    for (const r of rows) found.set(r.hash, r.findings);
  }
  return found;
}

/**
 * Records a result; a concurrent scan of the same bytes has the same result, so the first one stays. The
 * statement unexecuted, so an upload's one statement can carry it (version.ts recordUpload).
 */
export const insertBlobScan = (db: QueryCreator<Database>, row: BlobScanTable) =>
  db
    .insertInto('blob_scans')
    .values(row)
    .onConflict((oc) => oc.columns(['hash', 'scanner_version']).doNothing());

export async function saveBlobScan(db: Executor, row: BlobScanTable): Promise<void> {
  await insertBlobScan(db, row).execute();
}

/** Forgets every result of a blob (its bytes are being deleted). */
export async function deleteBlobScans(db: Executor, hash: string): Promise<void> {
  await db.deleteFrom('blob_scans').where('hash', '=', hash).execute();
}
