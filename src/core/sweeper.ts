// The sweeper: deletes expired anonymous sites after their grace period, abandons pending versions whose
// upload window passed, removes custom domains left unverified past PENDING_DOMAIN_TTL_MS, and
// garbage-collects blobs that no version references. Runs at start and then on an interval.

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { ChangeBus } from '../shared/events.js';
import type { BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { deleteBlobScans } from '../store/db/tables/blob-scan.js';
import { deleteStalePendingDomains } from '../store/db/tables/domain.js';
import { expiredAnonymousSlugs, tombstoneSite } from '../store/db/tables/site.js';
import {
  abandonVersion,
  blobPage,
  forgetBlobIfUnreferenced,
  referencedHashes,
  reindexBlob,
  stalePendingVersions,
} from '../store/db/tables/version.js';
import type { Lease } from '../store/lease/types.js';
import { pruneAudit, recordAudit } from './audit.js';
import { PENDING_DOMAIN_TTL_MS } from './domains.js';
import { UPLOAD_URL_TTL_S } from './upload-token.js';

/** A pending version may still be finalized this long after its upload window closed. */
export const FINALIZE_GRACE_MS = 3_600_000;
/**
 * A blob written (or re-written) within this window is never collected: an upload address lives
 * UPLOAD_URL_TTL_S, so bytes an in-flight upload just stored are safe until their file row names them.
 */
export const BLOB_MIN_AGE_MS = UPLOAD_URL_TTL_S * 1000 + FINALIZE_GRACE_MS;
const BATCH = 500;

export interface SweepDeps {
  db: Db;
  blobs: BlobStore;
  clock: Clock;
  changes: ChangeBus;
  logger: Logger;
  /** How long an expired anonymous site stays (answering 410) before it is deleted. */
  anonymousGraceMs: number;
  /** Only the node holding the `sweeper` lease sweeps (several nodes share one database). */
  lease: Lease;
  /** Renews certificates obtained on demand that end within 30 days, retries failed ones (core/certificates.ts). */
  renewCertificates?: () => Promise<{ renewed: number; failed: number }>;
  /** AUDIT_RETENTION_DAYS: audit entries older than this are removed (undefined: kept). */
  auditRetentionDays?: number;
  /** Queues `site.expiring` webhook events and prunes the delivery log (core/webhooks.ts sweepWebhooks). */
  sweepWebhooks?: () => Promise<{ expiring: number; pruned: number }>;
  /** Removes visit counts past their retention and the salts of past days (core/analytics.ts). */
  sweepAnalytics?: () => Promise<number>;
}

export interface SweepReport {
  sitesDeleted: number;
  versionsAbandoned: number;
  /** Pending custom-domain entries removed (never verified in PENDING_DOMAIN_TTL_MS). */
  domainsExpired: number;
  blobsDeleted: number;
  /** Certificates renewed or first issued after a failure (with on-demand certificates). */
  certificatesRenewed: number;
  /** `site.expiring` webhook events queued (each site and expiry time once). */
  expiryWarnings: number;
  /** Audit log entries removed past AUDIT_RETENTION_DAYS. */
  auditPruned: number;
  /** Analytics rows removed (hourly counts older than 7 days, daily ones past ANALYTICS_RETENTION_DAYS). */
  analyticsRowsDeleted: number;
}

export async function sweepOnce(deps: SweepDeps): Promise<SweepReport> {
  const now = deps.clock.now();
  const report: SweepReport = {
    sitesDeleted: 0,
    versionsAbandoned: 0,
    domainsExpired: 0,
    blobsDeleted: 0,
    certificatesRenewed: 0,
    expiryWarnings: 0,
    auditPruned: 0,
    analyticsRowsDeleted: 0,
  };

  for (const slug of await expiredAnonymousSlugs(deps.db.kysely, now - deps.anonymousGraceMs, BATCH)) {
    await deps.db.transaction((trx) => tombstoneSite(trx, slug, now));
    await deps.changes.publish({ kind: 'site', slug });
    report.sitesDeleted++;
  }

  for (const version of await stalePendingVersions(deps.db.kysely, now - FINALIZE_GRACE_MS, BATCH)) {
    await abandonVersion(deps.db.kysely, version.id);
    report.versionsAbandoned++;
  }

  // A pending entry serves nothing and has no links: removing it needs no change event. Each removal is
  // the system's entry in its account's audit log, in the same transaction.
  report.domainsExpired = await deps.db.transaction(async (trx) => {
    const gone = await deleteStalePendingDomains(trx, now - PENDING_DOMAIN_TTL_MS);
    for (const d of gone) {
      await recordAudit(trx, {
        accountId: d.account_id,
        action: 'domain.expire',
        target: d.domain,
        details: { reason: 'not verified in 7 days' },
        at: now,
        actor: { kind: 'system' },
        ip: null,
      });
    }
    return gone.length;
  });

  // Audit entries past AUDIT_RETENTION_DAYS (core/audit.ts).
  if (deps.auditRetentionDays !== undefined) {
    report.auditPruned = await pruneAudit(deps.db, now, deps.auditRetentionDays);
  }

  // The blob index is walked a page at a time, letting requests run between pages: on SQLite a query
  // holds the event loop, and one over every blob took a noticeable pause at 100,000 sites.
  const cutoff = now - BLOB_MIN_AGE_MS;
  let held = false;
  for (let after = ''; ; await nextTurn()) {
    const page = await blobPage(deps.db.kysely, after, BATCH);
    if (page.length === 0) break;
    after = page[page.length - 1]!.hash;
    const old = page.filter((b) => b.created_at < cutoff).map((b) => b.hash);
    const referenced = old.length === 0 ? new Set<string>() : await referencedHashes(deps.db.kysely, old);
    for (const b of page) {
      const hash = b.hash;
      if (b.created_at >= cutoff || referenced.has(hash)) continue;
      // A backup copying the blobs its snapshot references: delete nothing (held is checked again after
      // the row is forgotten, as the backup may have started in between; then the row comes back).
      held = (await deps.blobs.deletionHeld?.()) === true;
      if (held) break;
      // Forget the index row first (atomically re-checking references), then drop the bytes.
      if (await forgetBlobIfUnreferenced(deps.db.kysely, hash, cutoff)) {
        held = (await deps.blobs.deletionHeld?.()) === true;
        if (held) {
          await reindexBlob(deps.db.kysely, b);
          break;
        }
        await deleteBlobScans(deps.db.kysely, hash);
        await deps.blobs.delete(hash);
        report.blobsDeleted++;
      }
    }
    if (held || page.length < BATCH) break;
  }

  if (deps.renewCertificates !== undefined) {
    try {
      report.certificatesRenewed = (await deps.renewCertificates()).renewed;
    } catch (err) {
      deps.logger.error({ err }, 'certificate renewal failed');
    }
  }

  if (deps.sweepWebhooks !== undefined) {
    try {
      report.expiryWarnings = (await deps.sweepWebhooks()).expiring;
    } catch (err) {
      deps.logger.error({ err }, 'webhook sweep failed');
    }
  }

  if (deps.sweepAnalytics !== undefined) {
    try {
      report.analyticsRowsDeleted = await deps.sweepAnalytics();
    } catch (err) {
      deps.logger.error({ err }, 'analytics sweep failed');
    }
  }

  if (
    report.sitesDeleted +
      report.versionsAbandoned +
      report.domainsExpired +
      report.blobsDeleted +
      report.certificatesRenewed +
      report.expiryWarnings +
      report.auditPruned >
    0
  )
    deps.logger.info(report, 'swept');
  return report;
}

const LEASE_NAME = 'sweeper';

/**
 * Runs sweepOnce now and every `intervalMs` on the node that holds the sweeper lease; never two at
 * once. The holder renews every interval; if it dies another node takes over within three intervals.
 */
export function startSweeper(deps: SweepDeps, intervalMs: number): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running
      .then(async () => {
        if (!(await deps.lease.tryAcquire(LEASE_NAME, 3 * intervalMs))) return;
        deps.logger.debug('sweeping (holder of the sweeper lease)');
        await sweepOnce(deps);
      })
      .catch((err) => deps.logger.error({ err }, 'sweep failed'));
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await deps.lease.release(LEASE_NAME).catch(() => {});
    },
  };
}
