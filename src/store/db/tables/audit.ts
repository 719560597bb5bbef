// Queries of audit_log (core/audit.ts): one row per recorded change, written in the change's transaction.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { AuditTable } from '../schema.js';

export type AuditRow = Selectable<AuditTable>;

export async function insertAudit(db: Executor, row: AuditRow): Promise<void> {
  await db.insertInto('audit_log').values(row).execute();
}

/**
 * The account's entries, newest first: ids are ordered by time (core/audit.ts auditId), so `beforeId` is
 * a cursor (the last id of the previous page) and `beforeAt` a time in ms; either narrows the page.
 */
export function accountAudit(
  db: Executor,
  accountId: string,
  page: { limit: number; beforeId?: string; beforeAt?: number },
): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId);
  if (page.beforeId !== undefined) q = q.where('id', '<', page.beforeId);
  if (page.beforeAt !== undefined) q = q.where('at', '<', page.beforeAt);
  return q.orderBy('id', 'desc').limit(page.limit).execute();
}

/**
 * Every account's entries (and the operator actions on no account), newest first, for operators: the same
 * cursor as accountAudit; `accountId` narrows it to one account's log.
 */
export function allAudit(
  db: Executor,
  page: { limit: number; beforeId?: string; beforeAt?: number; accountId?: string },
): Promise<AuditRow[]> {
  if (page.accountId !== undefined) return accountAudit(db, page.accountId, page);
  let q = db.selectFrom('audit_log').selectAll();
  if (page.beforeId !== undefined) q = q.where('id', '<', page.beforeId);
  if (page.beforeAt !== undefined) q = q.where('at', '<', page.beforeAt);
  return q.orderBy('id', 'desc').limit(page.limit).execute();
}

/** Removes entries older than `before` (ms); the number removed. */
export async function deleteAuditBefore(db: Executor, before: number): Promise<number> {
  const res = await db.deleteFrom('audit_log').where('at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
