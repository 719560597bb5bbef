// Queries of domains (custom domains of accounts).

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { DomainTable } from '../schema.js';

export type DomainRow = Selectable<DomainTable>;

export function findDomain(db: Executor, domain: string): Promise<DomainRow | undefined> {
  return db.selectFrom('domains').selectAll().where('domain', '=', domain).executeTakeFirst();
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

export async function insertDomain(db: Executor, row: DomainRow): Promise<void> {
  await db.insertInto('domains').values(row).execute();
}

export async function markDomainVerified(db: Executor, domain: string, now: number): Promise<void> {
  await db
    .updateTable('domains')
    .set({ status: 'active', verified_at: now })
    .where('domain', '=', domain)
    .execute();
}

/** Records the first certificate request of the TLS front end for an active domain. */
export async function markTlsRequested(db: Executor, domain: string, now: number): Promise<void> {
  await db
    .updateTable('domains')
    .set({ tls_requested_at: now })
    .where('domain', '=', domain)
    .where('tls_requested_at', 'is', null)
    .execute();
}

export async function deleteDomainRow(db: Executor, domain: string): Promise<void> {
  await db.deleteFrom('domains').where('domain', '=', domain).execute();
}
