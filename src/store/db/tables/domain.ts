// Queries of domains (custom domains of accounts). A domain may have several pending entries (one per
// account claiming it) and at most one active entry (migration 007's partial unique index): everything
// that serves or answers for a host reads the active entry only (`activeDomain`).

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { DomainTable } from '../schema.js';

export type DomainRow = Selectable<DomainTable>;

/** The entry that owns `domain` (verified by DNS), if any. */
export function activeDomain(db: Executor, domain: string): Promise<DomainRow | undefined> {
  return db
    .selectFrom('domains')
    .selectAll()
    .where('domain', '=', domain)
    .where('status', '=', 'active')
    .executeTakeFirst();
}

/** The account's own entry for `domain`, pending or active. */
export function accountDomain(
  db: Executor,
  accountId: string,
  domain: string,
): Promise<DomainRow | undefined> {
  return db
    .selectFrom('domains')
    .selectAll()
    .where('domain', '=', domain)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** The account's domains, oldest first (the order that decides which ones a smaller plan keeps serving). */
export function accountDomains(db: Executor, accountId: string): Promise<DomainRow[]> {
  return db
    .selectFrom('domains')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('domain')
    .execute();
}

/**
 * The account's oldest `count` active domains (by the order of `accountDomains`): the ones its plan's
 * domain count keeps serving after a downgrade.
 */
export async function keptDomains(db: Executor, accountId: string, count: number): Promise<string[]> {
  const rows = await db
    .selectFrom('domains')
    .select('domain')
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('domain')
    .limit(count)
    .execute();
  return rows.map((r) => r.domain);
}

export async function insertDomain(db: Executor, row: DomainRow): Promise<void> {
  await db.insertInto('domains').values(row).execute();
}

/**
 * Makes the account's pending entry the domain's active one. False when that entry is gone (another
 * account won and removed it); throws a unique violation when another entry is active already.
 */
export async function activateDomain(
  db: Executor,
  accountId: string,
  domain: string,
  now: number,
): Promise<boolean> {
  const res = await db
    .updateTable('domains')
    .set({ status: 'active', verified_at: now })
    .where('domain', '=', domain)
    .where('account_id', '=', accountId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** Drops every pending entry of `domain` (another account's entry became active). */
export async function deletePendingClaims(db: Executor, domain: string): Promise<number> {
  const res = await db
    .deleteFrom('domains')
    .where('domain', '=', domain)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Drops pending entries added before `cutoff` (epoch ms): unverified claims expire. */
export function deleteStalePendingDomains(
  db: Executor,
  cutoff: number,
): Promise<Array<{ account_id: string; domain: string }>> {
  return db
    .deleteFrom('domains')
    .where('status', '=', 'pending')
    .where('created_at', '<', cutoff)
    .returning(['account_id', 'domain'])
    .execute();
}

/**
 * Records the first certificate request of the TLS front end for an active domain. Returns the account
 * whose domain it is when this call made the change (its sslStatus became `active` now), else undefined.
 */
export async function markTlsRequested(
  db: Executor,
  domain: string,
  now: number,
): Promise<string | undefined> {
  const row = await db
    .updateTable('domains')
    .set({ tls_requested_at: now })
    .where('domain', '=', domain)
    .where('status', '=', 'active')
    .where('tls_requested_at', 'is', null)
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id;
}

export async function deleteDomainRow(db: Executor, accountId: string, domain: string): Promise<void> {
  await db.deleteFrom('domains').where('domain', '=', domain).where('account_id', '=', accountId).execute();
}
