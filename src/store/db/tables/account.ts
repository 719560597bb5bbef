// Queries of the accounts table.

import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { AccountTable } from '../schema.js';

export type AccountRow = Selectable<AccountTable>;

export function findAccountByEmail(db: Executor, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findAccountById(db: Executor, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account holding `handle` (at most one: a unique index). */
export function findAccountByHandle(db: Executor, handle: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('handle', '=', handle).executeTakeFirst();
}

export function findAccountByKeyHash(db: Executor, keyHash: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('api_key_hash', '=', keyHash).executeTakeFirst();
}

export async function insertAccount(db: Executor, row: Insertable<AccountTable>): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function setApiKeyHash(db: Executor, id: string, keyHash: string, now: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ api_key_hash: keyHash, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Sets or releases (null) the account's handle; a handle another account holds is a unique violation. */
export async function setHandle(db: Executor, id: string, handle: string | null, now: number): Promise<void> {
  await db.updateTable('accounts').set({ handle, updated_at: now }).where('id', '=', id).execute();
}

/** Sets the stored plan and how long a stopped Hobby plan still runs (core/billing.ts derives both). */
export async function setPlan(
  db: Executor,
  id: string,
  plan: AccountRow['plan'],
  planUntil: number | null,
  now: number,
): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ plan, plan_until: planUntil, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Moves an account's usage counters (inside the transaction of the change that moves them). */
export async function addUsage(db: Executor, id: string, sites: number, bytes: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set((eb) => ({
      site_count: eb('site_count', '+', sites),
      stored_bytes: eb('stored_bytes', '+', bytes),
    }))
    .where('id', '=', id)
    .execute();
}

/** The account's usage counters (CONTRACT "Account": live sites, bytes of their current versions). */
export async function accountUsage(
  db: Executor,
  id: string,
): Promise<{ sites: number; storageBytes: number }> {
  const row = await db
    .selectFrom('accounts')
    .select(['site_count', 'stored_bytes'])
    .where('id', '=', id)
    .executeTakeFirst();
  return { sites: row?.site_count ?? 0, storageBytes: row?.stored_bytes ?? 0 };
}
