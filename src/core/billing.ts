// Billing (spec "Billing", "Plan", "Events"; CONTRACT "Billing"): checkout and portal for the Hobby plan,
// and the one function every subscription change goes through, `applyBillingEvent`, whether it comes
// from the provider's signed callback, the test checkout's Pay button or the portal's cancel action.
//
// Plan rule (decisions.md): an account is `hobby` while one of its subscriptions is active, or until the
// end of the paid period (`currentEnd`) of one that stopped renewing (pending, halted, cancelled,
// completed); then `free`. The stored plan is kept in step by every event; `effectivePlan` applies the
// end date at read time, so a period running out needs no job to take effect.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Checkout, Portal } from '../api/billing.js';
import type { Clock } from '../shared/clock.js';
import type { ChangeBus } from '../shared/events.js';
import type { Db } from '../store/db/db.js';
import type { Database } from '../store/db/schema.js';
import { type AccountRow, findAccountById, setPlan } from '../store/db/tables/account.js';
import {
  accountSubscriptions,
  checkoutByTokenHash,
  findSubscription,
  insertSubscription,
  recordBillingEvent,
  replaceCheckoutToken,
  type SubscriptionRow,
  spendCheckoutToken,
  updateSubscription,
} from '../store/db/tables/subscription.js';
import { type PaymentProvider, PaymentProviderError } from '../store/payments/types.js';
import { recordAudit } from './audit.js';
import { ApiError, invalid } from './errors.js';
import { effectivePlan } from './plans.js';
import { hmacBase64Url, safeEqual, sha256Hex } from './secrets.js';

export interface BillingDeps {
  db: Db;
  clock: Clock;
  config: { baseUrl: string };
  payments: PaymentProvider;
  changes: ChangeBus;
  logger: Logger;
  /** Signs portal links. */
  portalKey: Buffer;
}

/** A test payment buys this much Hobby (one monthly period). */
export const TEST_PERIOD_MS = 30 * 24 * 3_600_000;
/** How long a portal link works. */
export const PORTAL_LINK_TTL_MS = 3_600_000;

/** Subscription statuses that still wait for a first payment: a new checkout reuses them. */
const OPEN_STATUSES = ['created', 'authenticated'] as const;
const OPEN = new Set<string>(OPEN_STATUSES);
/** Statuses that keep Hobby until `current_end` (the subscription stopped renewing). */
const WINDING_DOWN = new Set(['pending', 'halted', 'cancelled', 'completed']);

/** Stored plan and end date derived from every subscription of the account. */
function derivePlan(subscriptions: SubscriptionRow[]): { plan: 'free' | 'hobby'; until: number | null } {
  if (subscriptions.some((s) => s.status === 'active')) return { plan: 'hobby', until: null };
  const ends = subscriptions.flatMap((s) =>
    WINDING_DOWN.has(s.status) && s.current_end !== null ? [s.current_end] : [],
  );
  return ends.length > 0 ? { plan: 'hobby', until: Math.max(...ends) } : { plan: 'free', until: null };
}

const providerFailure = (err: unknown) =>
  new ApiError(
    'INTERNAL_ERROR',
    err instanceof PaymentProviderError
      ? err.message
      : 'The payment provider call failed; try again shortly.',
    { cause: err },
  );

/** POST /api/billing/checkout. */
export async function checkout(deps: BillingDeps, account: AccountRow): Promise<Checkout> {
  const now = deps.clock.now();
  if (effectivePlan(account, now) === 'hobby') {
    throw invalid('This account is already on the Hobby plan.', {
      hint: 'POST /api/billing/portal manages it.',
    });
  }
  const result = (id: string, shortUrl: string): Checkout => ({
    subscriptionId: id,
    paymentKeyId: deps.payments.keyId,
    shortUrl,
    checkoutUrl: shortUrl,
  });
  // A checkout still waiting for its payment is the one to pay: no second subscription.
  const open = (await accountSubscriptions(deps.db.kysely, account.id)).find(
    (s) => OPEN.has(s.status) && s.provider === deps.payments.name,
  );
  if (open) {
    if (!deps.payments.checkoutLink) return result(open.id, open.short_url);
    // The test provider's link is derived again (never stored). A stored hash of another token (a row
    // from before migration 008, or SECRETS_KEY changed since) gives way to the link handed out now.
    const link = deps.payments.checkoutLink(open.id);
    const tokenHash = sha256Hex(link.checkoutToken);
    if (open.checkout_token_hash !== tokenHash)
      await replaceCheckoutToken(deps.db.kysely, open.id, tokenHash, now);
    return result(open.id, link.shortUrl);
  }

  let created: Awaited<ReturnType<PaymentProvider['createSubscription']>>;
  try {
    created = await deps.payments.createSubscription({ accountId: account.id, email: account.email });
  } catch (err) {
    throw providerFailure(err);
  }
  await insertSubscription(deps.db.kysely, {
    id: created.id,
    account_id: account.id,
    provider: deps.payments.name,
    status: created.status,
    // A link that pays by itself (its token) is handed to the caller, never stored.
    short_url: created.checkoutToken ? '' : created.shortUrl,
    current_end: created.currentEnd,
    event_at: 0,
    checkout_token_hash: created.checkoutToken ? sha256Hex(created.checkoutToken) : null,
    created_at: now,
    updated_at: now,
  });
  return result(created.id, created.shortUrl);
}

/** The subscription a portal shows: the newest that was ever paid for (not a checkout left open). */
async function portalSubscription(
  deps: BillingDeps,
  accountId: string,
): Promise<SubscriptionRow | undefined> {
  const subs = await accountSubscriptions(deps.db.kysely, accountId);
  return subs.find((s) => s.status === 'active') ?? subs.find((s) => WINDING_DOWN.has(s.status));
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** POST /api/billing/portal. */
export async function portal(deps: BillingDeps, account: AccountRow): Promise<Portal> {
  const sub = await portalSubscription(deps, account.id);
  if (!sub) {
    throw invalid('This account has no subscription to manage.', {
      hint: 'POST /api/billing/checkout starts one.',
    });
  }
  return {
    portalUrl: `${deps.config.baseUrl}/billing/portal?token=${portalToken(deps, account.id)}`,
    status: sub.status,
    currentEnd: iso(sub.current_end),
  };
}

/** `<accountId>.<expiry ms>.<HMAC>`: opens the portal page of one account for an hour. */
function portalToken(deps: BillingDeps, accountId: string): string {
  const payload = `${accountId}.${deps.clock.now() + PORTAL_LINK_TTL_MS}`;
  return `${payload}.${hmacBase64Url(deps.portalKey, `portal:${payload}`)}`;
}

/** The account a portal token opens, or undefined (forged, malformed or expired). */
export async function portalAccount(deps: BillingDeps, token: unknown): Promise<AccountRow | undefined> {
  if (typeof token !== 'string' || token.length > 300) return undefined;
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  const [accountId, expiry, mac] = parts as [string, string, string];
  if (!safeEqual(mac, hmacBase64Url(deps.portalKey, `portal:${accountId}.${expiry}`))) return undefined;
  if (!(Number(expiry) > deps.clock.now())) return undefined;
  return findAccountById(deps.db.kysely, accountId);
}

export interface PortalView {
  email: string;
  plan: 'free' | 'hobby';
  subscriptionId: string;
  status: string;
  currentEnd: string | null;
  cancellable: boolean;
}

export async function portalView(deps: BillingDeps, account: AccountRow): Promise<PortalView | undefined> {
  const sub = await portalSubscription(deps, account.id);
  if (!sub) return undefined;
  return {
    email: account.email,
    plan: effectivePlan(account, deps.clock.now()),
    subscriptionId: sub.id,
    status: sub.status,
    currentEnd: iso(sub.current_end),
    cancellable: sub.status === 'active' || sub.status === 'pending' || sub.status === 'halted',
  };
}

/** The portal's cancel action: the provider cancels, and the result is applied like its callback. */
export async function cancelFromPortal(deps: BillingDeps, account: AccountRow): Promise<void> {
  const sub = await portalSubscription(deps, account.id);
  if (!sub || !(sub.status === 'active' || sub.status === 'pending' || sub.status === 'halted')) return;
  let remote: Awaited<ReturnType<PaymentProvider['cancelSubscription']>>;
  try {
    remote = await deps.payments.cancelSubscription(sub.id);
  } catch (err) {
    throw providerFailure(err);
  }
  const now = deps.clock.now();
  await applyBillingEvent(deps, {
    ids: [`portal_cancel_${sub.id}_${now}`],
    type: 'subscription.cancelled',
    createdAt: now,
    subscription: {
      id: sub.id,
      currentEnd: remote?.currentEnd ?? sub.current_end,
    },
  });
}

/** A subscription event, whatever brought it (provider callback, test checkout, portal). */
export interface BillingEvent {
  /**
   * The event's identifiers, each unique to it; if any one was recorded before, the event is a replay and
   * changes nothing. A callback's come from what its signature covers (never from an unsigned header).
   */
  ids: string[];
  /** e.g. `subscription.activated`. */
  type: string;
  /** When the provider created the event (ms): an older event never undoes a newer state. */
  createdAt: number;
  subscription: { id: string; currentEnd: number | null };
}

export type EventOutcome = 'applied' | 'replay' | 'stale' | 'ignored' | 'unknown-subscription' | 'refused';

/** The status an event type leaves a subscription in (the entity's own status when it has one). */
const EVENT_STATUS: Record<string, string> = {
  'subscription.authenticated': 'authenticated',
  'subscription.activated': 'active',
  'subscription.charged': 'active',
  'subscription.resumed': 'active',
  'subscription.pending': 'pending',
  'subscription.halted': 'halted',
  'subscription.cancelled': 'cancelled',
  'subscription.completed': 'completed',
};

/**
 * Where a status stands in a subscription's life (Razorpay: created -> authenticated -> active ->
 * pending -> halted; cancelled and completed end it). Of two events created in the same second, the
 * one leading further along wins, whatever order they arrive in: a cancel is never undone by an
 * activation of the same second.
 */
const LIFECYCLE_RANK: Record<string, number> = {
  created: 0,
  authenticated: 1,
  active: 2,
  pending: 3,
  halted: 4,
  cancelled: 5,
  completed: 5,
};

/**
 * Whether `event` (leaving the subscription in `status`) comes after the last event applied to `sub`:
 * by the event's own time; on a tie, by LIFECYCLE_RANK; on a tie of both, only for a later end of the
 * paid period (an activation and its first charge of one second). An equal event is not newer.
 */
function isNewer(event: BillingEvent, status: string, sub: SubscriptionRow): boolean {
  if (event.createdAt !== sub.event_at) return event.createdAt > sub.event_at;
  const rank = (LIFECYCLE_RANK[status] ?? 0) - (LIFECYCLE_RANK[sub.status] ?? 0);
  if (rank !== 0) return rank > 0;
  const end = (ms: number | null) => ms ?? -1;
  return end(event.subscription.currentEnd) > end(sub.current_end);
}

/**
 * Applies one event: subscription status and period, then the account's plan (change bus on a change).
 * `precondition` runs first in the same transaction; false applies nothing ('refused').
 */
export async function applyBillingEvent(
  deps: BillingDeps,
  event: BillingEvent,
  precondition?: (trx: Transaction<Database>) => Promise<boolean>,
): Promise<EventOutcome> {
  const status = EVENT_STATUS[event.type];
  const now = deps.clock.now();
  if (status === undefined) {
    deps.logger.info(
      { event: event.type, eventId: event.ids[0] },
      'billing event ignored (not a subscription change)',
    );
    return 'ignored';
  }
  let accountId: string | undefined;
  let planChanged = false;
  const outcome = await deps.db.transaction(async (trx): Promise<EventOutcome> => {
    if (precondition && !(await precondition(trx))) return 'refused';
    if (!(await recordBillingEvent(trx, event.ids, now))) return 'replay';
    const sub = await findSubscription(trx, event.subscription.id);
    if (!sub) return 'unknown-subscription';
    accountId = sub.account_id;
    if (!isNewer(event, status, sub)) return 'stale';
    await updateSubscription(trx, sub.id, {
      // The event type decides (an entity's status field can lag behind the event it comes with).
      status,
      current_end: event.subscription.currentEnd ?? sub.current_end,
      event_at: event.createdAt,
      updated_at: now,
    });
    const account = await findAccountById(trx, sub.account_id);
    if (!account) return 'applied';
    const derived = derivePlan(await accountSubscriptions(trx, sub.account_id));
    // Any change of plan or end date: cached host routes carry the end date (core/hosts.ts).
    if (derived.plan !== account.plan || derived.until !== account.plan_until) {
      await setPlan(trx, account.id, derived.plan, derived.until, now);
      await recordAudit(trx, {
        accountId: account.id,
        action: 'plan.change',
        target: account.id,
        details: {
          plan: derived.plan,
          previous: account.plan,
          until: derived.until === null ? null : new Date(derived.until).toISOString(),
          event: event.type,
          subscriptionId: sub.id,
        },
        at: now,
      });
      planChanged = true;
    }
    return 'applied';
  });
  if (outcome === 'unknown-subscription') {
    deps.logger.warn(
      { event: event.type, eventId: event.ids[0], subscriptionId: event.subscription.id },
      'billing event for an unknown subscription acknowledged',
    );
  } else {
    deps.logger.info({ event: event.type, eventId: event.ids[0], outcome, accountId }, 'billing event');
  }
  if (planChanged && accountId) await deps.changes.publish({ kind: 'account', accountId });
  return outcome;
}

/** Razorpay's signature: HMAC-SHA256 hex of the raw body bytes, compared in constant time. */
export function verifyWebhookSignature(
  secret: string,
  rawBody: Buffer,
  signature: string | undefined,
): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature)) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/**
 * POST /api/billing/webhook: a provider callback. Throws 400 on a bad signature or body (nothing changes);
 * anything else is acknowledged, including events it ignores. Only what the signature covers identifies
 * and orders the event: the body's hash (a redelivery or a replay is byte for byte the same), the
 * payload's own event, entity and payment ids with its `created_at`. `X-Razorpay-Event-Id` is not
 * signed (anyone replaying a captured body can change it), so it is not read.
 */
export async function receiveWebhook(
  deps: BillingDeps,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<EventOutcome> {
  const secret = deps.payments.webhookSecret;
  if (secret === undefined) {
    throw invalid('Provider callbacks are not configured on this deployment (RAZORPAY_WEBHOOK_SECRET).');
  }
  if (!verifyWebhookSignature(secret, rawBody, signature)) {
    throw invalid('Bad or missing X-Razorpay-Signature; nothing was changed.');
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw invalid('The callback body is not JSON.');
  }
  const type = typeof body?.event === 'string' ? body.event : '';
  const createdAtS = typeof body?.created_at === 'number' ? body.created_at : undefined;
  const payload = body?.payload as
    | { subscription?: { entity?: Record<string, unknown> }; payment?: { entity?: Record<string, unknown> } }
    | undefined;
  const entity = payload?.subscription?.entity;
  const paymentId = payload?.payment?.entity?.id;
  const bodyId = `body:${sha256Hex(rawBody)}`;
  // Without its own time an event cannot be ordered against the others (Razorpay always sends one).
  if (
    !type.startsWith('subscription.') ||
    !entity ||
    typeof entity.id !== 'string' ||
    createdAtS === undefined
  ) {
    deps.logger.info({ event: type, eventId: bodyId }, 'billing event ignored (not a subscription change)');
    return 'ignored';
  }
  const payloadId = [
    'razorpay',
    type,
    entity.id,
    typeof paymentId === 'string' ? paymentId : '',
    String(createdAtS),
  ].join(':');
  return applyBillingEvent(deps, {
    ids: [payloadId, bodyId],
    type,
    createdAt: createdAtS * 1000,
    subscription: {
      id: entity.id,
      currentEnd: typeof entity.current_end === 'number' ? entity.current_end * 1000 : null,
    },
  });
}

export type TestCheckoutState =
  | { kind: 'open'; subscriptionId: string; email: string }
  | { kind: 'used' }
  | { kind: 'unknown' };

/** What the test checkout page shows for a token: found by its hash; used once the payment moved it on. */
export async function testCheckoutState(deps: BillingDeps, token: string): Promise<TestCheckoutState> {
  const row = await checkoutByTokenHash(deps.db.kysely, sha256Hex(token));
  if (!row) return { kind: 'unknown' };
  return OPEN.has(row.status) ? { kind: 'open', subscriptionId: row.id, email: row.email } : { kind: 'used' };
}

/**
 * The test checkout's Pay button: spends the token (once) and activates the subscription through the
 * same path as the provider's `subscription.activated` callback. False when the token is unknown or used.
 */
export async function completeTestCheckout(deps: BillingDeps, token: string): Promise<boolean> {
  if (deps.payments.name !== 'test') return false;
  const tokenHash = sha256Hex(token);
  const sub = await checkoutByTokenHash(deps.db.kysely, tokenHash);
  if (!sub) return false;
  const now = deps.clock.now();
  // Spending the token and activating happen in one transaction: a payment is never half made.
  const outcome = await applyBillingEvent(
    deps,
    {
      ids: [`test_payment_${sub.id}`],
      type: 'subscription.activated',
      createdAt: now,
      subscription: { id: sub.id, currentEnd: now + TEST_PERIOD_MS },
    },
    (trx) => spendCheckoutToken(trx, tokenHash, OPEN_STATUSES, now),
  );
  return outcome === 'applied';
}
