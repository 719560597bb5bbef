// The serving view of a `sites` row: what the hot path needs to decide 404 / 410 / password gate / files.

import { createHash } from 'node:crypto';
import type { Db } from '../store/db/db.js';
import { siteServingRow } from '../store/db/tables/site.js';

export interface SiteRecord {
  readonly slug: string;
  /** Tombstoned: answers 404, never its old files. */
  readonly deleted: boolean;
  /** The live (finalized) version; null until the first finalize. A pending version never appears here. */
  readonly versionId: string | null;
  readonly title: string | null;
  readonly description: string | null;
  readonly ogImagePath: string | null;
  /** scrypt string (`scrypt$salt$hash`); null = not protected. */
  readonly passwordHash: string | null;
  /**
   * Short digest of `passwordHash`, bound into password-gate cookies: a new password (new salt) or its
   * removal changes it, so every earlier session ends.
   */
  readonly passwordFingerprint: string;
  /** Epoch ms after which the site answers 410; compared with the clock on every request (no event needed). */
  readonly expiresAt: number | null;
  /** Taken down by an operator: every host of the site answers 451 (core/operators.ts). */
  readonly takenDown: boolean;
  /** Its owner's account is suspended: every host of the site answers 403. */
  readonly ownerSuspended: boolean;
  /** The owner switched visitor counting off (issue 25): answers are not counted. */
  readonly analyticsOff: boolean;
}

/** Bytes of password fingerprint kept (128 bits: collisions are out of reach, cookies stay short). */
const FINGERPRINT_BYTES = 16;

export function passwordFingerprint(passwordHash: string | null): string {
  if (passwordHash === null) return '';
  return createHash('sha256')
    .update(passwordHash)
    .digest()
    .subarray(0, FINGERPRINT_BYTES)
    .toString('base64url');
}

/** Loads the record of `slug` (deleted sites included, as tombstones); null when no such row exists. */
export async function loadSiteRecord(db: Db, slug: string): Promise<SiteRecord | null> {
  const row = await siteServingRow(db.kysely, slug);
  if (row === undefined) return null;
  return {
    slug: row.slug,
    deleted: row.deleted_at !== null,
    versionId: row.current_version_id,
    title: row.title,
    description: row.description,
    ogImagePath: row.og_image_path,
    passwordHash: row.password_hash,
    passwordFingerprint: passwordFingerprint(row.password_hash),
    expiresAt: row.expires_at,
    takenDown: row.takedown_at !== null,
    ownerSuspended: row.owner_suspended_at !== null,
    analyticsOff: row.analytics_off === 1,
  };
}
