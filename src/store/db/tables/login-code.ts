// Queries of the login_codes table (one live code per email).

import type { Executor } from '../db.js';
import type { LoginCodeTable } from '../schema.js';

/** Stores a new code for the email, replacing any earlier one. */
export async function putLoginCode(db: Executor, row: LoginCodeTable): Promise<void> {
  await db
    .insertInto('login_codes')
    .values(row)
    .onConflict((oc) =>
      oc.column('email').doUpdateSet({
        code_hash: row.code_hash,
        expires_at: row.expires_at,
        attempts: 0,
        created_at: row.created_at,
      }),
    )
    .execute();
}

/**
 * Spends one attempt of the email's live code atomically and returns the code's hash, or undefined
 * when there is no code, it expired or it has no attempts left. Spending before comparing means
 * concurrent guesses can never exceed the limit.
 */
export async function spendLoginAttempt(
  db: Executor,
  email: string,
  now: number,
  maxAttempts: number,
): Promise<string | undefined> {
  const res = await db
    .updateTable('login_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('email', '=', email)
    .where('attempts', '<', maxAttempts)
    .where('expires_at', '>', now)
    .returning('code_hash')
    .executeTakeFirst();
  return res?.code_hash;
}

/** Deletes the code if it still has this hash; true when this caller consumed it (single use). */
export async function consumeLoginCode(db: Executor, email: string, codeHash: string): Promise<boolean> {
  const res = await db
    .deleteFrom('login_codes')
    .where('email', '=', email)
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function deleteExpiredLoginCodes(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('login_codes').where('expires_at', '<=', now).execute();
}
