// Queries of sessions (browser sessions of the web pages, core/sessions.ts): stored by the SHA-256 of the
// cookie's token, never the token.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { SessionTable } from '../schema.js';

export type SessionRow = Selectable<SessionTable>;

export async function insertSession(db: Executor, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

export function findSession(db: Executor, tokenHash: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function deleteSession(db: Executor, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

/** Ends every session of the account, but the one of `keepTokenHash` when given. */
export async function deleteAccountSessions(
  db: Executor,
  accountId: string,
  keepTokenHash?: string,
): Promise<void> {
  let ending = db.deleteFrom('sessions').where('account_id', '=', accountId);
  if (keepTokenHash !== undefined) ending = ending.where('token_hash', '!=', keepTokenHash);
  await ending.execute();
}
