// Queries of subscriptions and billing_events (core/billing.ts applies provider events through them).

import type { Insertable, Selectable, Transaction } from 'kysely';
import type { Executor } from '../db.js';
import type { Database, SubscriptionTable } from '../schema.js';

export type SubscriptionRow = Selectable<SubscriptionTable>;

export async function insertSubscription(db: Executor, row: Insertable<SubscriptionTable>): Promise<void> {
  await db.insertInto('subscriptions').values(row).execute();
}

export function findSubscription(db: Executor, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The account's subscriptions, newest first. */
export function accountSubscriptions(db: Executor, accountId: string): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function updateSubscription(
  db: Executor,
  id: string,
  patch: Partial<Pick<SubscriptionRow, 'status' | 'current_end' | 'event_at' | 'updated_at'>>,
): Promise<void> {
  await db.updateTable('subscriptions').set(patch).where('id', '=', id).execute();
}

/** The subscription a test checkout token opens (found by the token's hash), with its account's email. */
export function checkoutByTokenHash(
  db: Executor,
  tokenHash: string,
): Promise<{ id: string; status: string; email: string } | undefined> {
  return db
    .selectFrom('subscriptions')
    .innerJoin('accounts', 'accounts.id', 'subscriptions.account_id')
    .select(['subscriptions.id', 'subscriptions.status', 'accounts.email'])
    .where('subscriptions.checkout_token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Points an open test checkout at another token (a link handed out before stops working). */
export async function replaceCheckoutToken(db: Executor, id: string, tokenHash: string, now: number) {
  await db
    .updateTable('subscriptions')
    .set({ checkout_token_hash: tokenHash, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/**
 * Spends a test checkout token: true when it opens a subscription still in one of `openStatuses`. The
 * token is spent by the payment moving the subscription out of them (in the same transaction); under
 * concurrency the second payment's update waits for the first and then matches nothing.
 */
export async function spendCheckoutToken(
  trx: Transaction<Database>,
  tokenHash: string,
  openStatuses: readonly string[],
  now: number,
): Promise<boolean> {
  const res = await trx
    .updateTable('subscriptions')
    .set({ updated_at: now })
    .where('checkout_token_hash', '=', tokenHash)
    .where('status', 'in', openStatuses)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/**
 * Records the identifiers of one provider event; false when any of them was recorded before (a replay).
 * The new ones are recorded either way: they all name the same event.
 */
export async function recordBillingEvent(db: Executor, ids: string[], now: number): Promise<boolean> {
  const res = await db
    .insertInto('billing_events')
    .values(ids.map((id) => ({ id, received_at: now })))
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === ids.length;
}
