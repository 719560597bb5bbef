// Queries of webhook endpoints, their delivery queue and log, and the expiry warnings already queued
// (core/webhooks.ts holds the rules; secrets arrive sealed).

import { sql } from 'kysely';
import type { Executor } from '../db.js';
import type { WebhookDeliveryTable, WebhookEndpointTable } from '../schema.js';

export type WebhookEndpointRow = WebhookEndpointTable;
export type WebhookDeliveryRow = Omit<WebhookDeliveryTable, 'attempts'> & { attempts: number };

export async function insertWebhookEndpoint(db: Executor, row: WebhookEndpointRow): Promise<void> {
  await db.insertInto('webhook_endpoints').values(row).execute();
}

/** Takes the account row's lock for the transaction (a no-op write), serialising two creates' counts. */
export async function lockAccountForWebhooks(trx: Executor, accountId: string): Promise<void> {
  await trx
    .updateTable('accounts')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', accountId)
    .execute();
}

export async function countWebhookEndpoints(db: Executor, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export function accountWebhookEndpoints(db: Executor, accountId: string): Promise<WebhookEndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findWebhookEndpoint(db: Executor, id: string): Promise<WebhookEndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The endpoint and its delivery log. */
export async function deleteWebhookEndpoint(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
}

export interface QueuedEvent {
  accountId: string;
  /** The site the event is about; endpoints of another site are skipped. Undefined: account-wide endpoints only. */
  slug: string | undefined;
  event: string;
  payload: string;
  /** Delivery ids are this prefix followed by the endpoint's id (one statement makes every row). */
  idPrefix: string;
  now: number;
  giveUpAt: number;
}

/**
 * One statement: a pending delivery for every endpoint of the account that wants the event (its site's,
 * or every site's). Returns how many were queued (0 when the account has no such endpoint).
 */
export async function queueWebhookDeliveries(db: Executor, q: QueuedEvent): Promise<number> {
  const text = (v: string) => sql<string>`cast(${v} as text)`;
  const bigint = (v: number) => sql<number>`cast(${v} as bigint)`;
  const res = await db
    .insertInto('webhook_deliveries')
    .columns([
      'id',
      'endpoint_id',
      'event',
      'payload',
      'status',
      'attempts',
      'next_attempt_at',
      'give_up_at',
      'last_status_code',
      'last_error',
      'created_at',
      'delivered_at',
      'updated_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('webhook_endpoints')
        .select([
          sql<string>`${text(q.idPrefix)} || id`.as('id'),
          'id as endpoint_id',
          text(q.event).as('event'),
          text(q.payload).as('payload'),
          sql<string>`'pending'`.as('status'),
          sql<number>`0`.as('attempts'),
          bigint(q.now).as('next_attempt_at'),
          bigint(q.giveUpAt).as('give_up_at'),
          sql<null>`null`.as('last_status_code'),
          sql<null>`null`.as('last_error'),
          bigint(q.now).as('created_at'),
          sql<null>`null`.as('delivered_at'),
          bigint(q.now).as('updated_at'),
        ])
        .where('account_id', '=', q.accountId)
        .where((w) =>
          q.slug === undefined
            ? w('site_slug', 'is', null)
            : w.or([w('site_slug', 'is', null), w('site_slug', '=', q.slug)]),
        )
        // A JSON array of names: the quoted name is in it exactly when the endpoint asked for it.
        .where('events', 'like', `%${JSON.stringify(q.event)}%`),
    )
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n);
}

/** A due delivery with what sending it needs from its endpoint. */
export interface DueDelivery {
  id: string;
  endpoint_id: string;
  account_id: string;
  payload: string;
  attempts: number;
  next_attempt_at: number;
  give_up_at: number;
  url: string;
  key_id: string;
  secret_sealed: string;
}

/**
 * Pending deliveries whose attempt is due, oldest due first, but none to the endpoints or of the accounts
 * in `busy` (those at their share of the sender).
 */
export async function dueWebhookDeliveries(
  db: Executor,
  now: number,
  limit: number,
  busy: { endpoints?: string[]; accounts?: string[] } = {},
): Promise<DueDelivery[]> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select([
      'd.id',
      'd.endpoint_id',
      'e.account_id',
      'd.payload',
      'd.attempts',
      'd.next_attempt_at',
      'd.give_up_at',
      'e.url',
      'e.key_id',
      'e.secret_sealed',
    ])
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now);
  if (busy.endpoints?.length) query = query.where('d.endpoint_id', 'not in', busy.endpoints);
  if (busy.accounts?.length) query = query.where('e.account_id', 'not in', busy.accounts);
  const rows = await query.orderBy('d.next_attempt_at').limit(limit).execute();
  return rows as DueDelivery[];
}

/**
 * Takes a due delivery for one attempt: its due time moves to `lockedUntil` (when another sender may take
 * it over, should this one die mid-attempt). False when someone else took it or it changed meanwhile.
 */
export async function claimWebhookDelivery(
  db: Executor,
  id: string,
  seenDueAt: number,
  lockedUntil: number,
): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: lockedUntil })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', seenDueAt)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** Records one attempt's outcome (only over the claim this sender holds). */
export async function recordWebhookAttempt(
  db: Executor,
  id: string,
  lockedUntil: number,
  outcome: Pick<
    WebhookDeliveryRow,
    'status' | 'next_attempt_at' | 'last_status_code' | 'last_error' | 'delivered_at' | 'updated_at'
  >,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ ...outcome, attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', lockedUntil)
    .execute();
}

/** Hands a claimed delivery back untried, due when it was (a sender stopping mid-attempt). */
export async function releaseWebhookDelivery(
  db: Executor,
  id: string,
  lockedUntil: number,
  dueAt: number,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: dueAt })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '=', lockedUntil)
    .execute();
}

export async function endpointWebhookDeliveries(
  db: Executor,
  endpointId: string,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  return (await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()) as WebhookDeliveryRow[];
}

export async function findWebhookDelivery(
  db: Executor,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRow | undefined> {
  return (await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst()) as WebhookDeliveryRow | undefined;
}

/** Queues a delivery again now, with a new retry window; the attempts so far stay counted. */
export async function requeueWebhookDelivery(
  db: Executor,
  id: string,
  now: number,
  giveUpAt: number,
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, give_up_at: giveUpAt, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Finished deliveries (delivered or failed) last touched before `cutoff` leave the log. */
export async function pruneWebhookDeliveries(db: Executor, cutoff: number): Promise<number> {
  const res = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '!=', 'pending')
    .where('updated_at', '<', cutoff)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

export interface ExpiringSite {
  slug: string;
  owner_id: string;
  expires_at: number;
  created_at: number;
}

/**
 * Live owned sites expiring in `(now, until]` whose owner has a webhook endpoint and whose warning for
 * this expiry time is not queued yet. Driven by the endpoints (few), so it reads no site of other accounts.
 */
export async function expiringSitesToWarn(
  db: Executor,
  now: number,
  until: number,
  limit: number,
): Promise<ExpiringSite[]> {
  const rows = await db
    .selectFrom('sites as s')
    .select(['s.slug', 's.owner_id', 's.expires_at', 's.created_at'])
    .where('s.owner_id', 'in', (eb) => eb.selectFrom('webhook_endpoints').select('account_id').distinct())
    .where('s.deleted_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.expires_at', '<=', until)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_expiry_notices as n')
            .select('n.site_slug')
            .whereRef('n.site_slug', '=', 's.slug')
            .whereRef('n.expires_at', '=', 's.expires_at'),
        ),
      ),
    )
    .limit(limit)
    .execute();
  return rows as ExpiringSite[];
}

/** Notes the warning for this site and expiry time; false when it was noted already (by another sweep). */
export async function noteExpiryWarning(
  db: Executor,
  slug: string,
  expiresAt: number,
  now: number,
): Promise<boolean> {
  const res = await db
    .insertInto('webhook_expiry_notices')
    .values({ site_slug: slug, expires_at: expiresAt, created_at: now })
    .onConflict((oc) => oc.columns(['site_slug', 'expires_at']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) > 0;
}
