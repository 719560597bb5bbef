// Queries of blob_scans: the secret scan's result per blob hash and scanner version.

import type { Executor } from '../db.js';
import type { BlobScanTable } from '../schema.js';

/** Hashes per query (bound parameters stay far below SQLite's and PostgreSQL's limits). */
const LOOKUP_CHUNK = 500;

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

/** Records a result; a concurrent scan of the same bytes has the same result, so the first one stays. */
export async function saveBlobScan(db: Executor, row: BlobScanTable): Promise<void> {
  await db
    .insertInto('blob_scans')
    .values(row)
    .onConflict((oc) => oc.columns(['hash', 'scanner_version']).doNothing())
    .execute();
}

/** Forgets every result of a blob (its bytes are being deleted). */
export async function deleteBlobScans(db: Executor, hash: string): Promise<void> {
  await db.deleteFrom('blob_scans').where('hash', '=', hash).execute();
}
