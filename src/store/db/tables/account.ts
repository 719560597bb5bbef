// Queries of the accounts table.

import type { Executor } from '../db.js';
import type { AccountTable } from '../schema.js';

export type AccountRow = AccountTable;

export function findAccountByEmail(db: Executor, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findAccountById(db: Executor, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findAccountByKeyHash(db: Executor, keyHash: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('api_key_hash', '=', keyHash).executeTakeFirst();
}

export async function insertAccount(db: Executor, row: AccountRow): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function setApiKeyHash(db: Executor, id: string, keyHash: string, now: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ api_key_hash: keyHash, updated_at: now })
    .where('id', '=', id)
    .execute();
}
