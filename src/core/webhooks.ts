// Signed deploy webhooks (issue 24, CONTRACT "Webhooks"): an account registers HTTPS endpoints for events
// of its sites (one site, or all) and domains. An event is queued in the database as one pending delivery
// per endpoint that wants it (enqueueWebhookEvent: one INSERT ... SELECT, after the change committed,
// never failing the change it reports). The sender (startWebhookSender) runs on the node holding the
// `webhooks` lease: it polls due deliveries, POSTs each as Standard Webhooks does (`webhook-id`,
// `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`), to addresses
// the site proxy's filter allows (core/addresses.ts), connecting to the very addresses it checked (the
// lookup is pinned, so DNS cannot rebind between check and connect), following no redirect. A 2xx is
// delivered; anything else is retried with exponential backoff until 24 h after it was queued, then failed.
// Secrets are shown once; they are kept sealed (AES-256-GCM, the site variables' scheme, with a sub-key of
// SECRETS_KEY of their own) because every delivery is signed with them.

import { createHmac, randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { Agent, request, errors as undiciErrors } from 'undici';
import type {
  Webhook,
  WebhookCreated,
  WebhookDeleted,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookList,
} from '../api/webhooks.js';
import { LogThrottle } from '../shared/log-throttle.js';
import type { Db, Executor } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  accountWebhookEndpoints,
  claimWebhookDelivery,
  countWebhookEndpoints,
  type DueDelivery,
  deleteWebhookEndpoint,
  dueWebhookDeliveries,
  endpointWebhookDeliveries,
  expiringSitesToWarn,
  findWebhookDelivery,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  lockAccountForWebhooks,
  noteExpiryWarning,
  pruneWebhookDeliveries,
  queueWebhookDeliveries,
  recordWebhookAttempt,
  releaseWebhookDelivery,
  requeueWebhookDelivery,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from '../store/db/tables/webhook.js';
import type { AddressResolver } from '../store/dns/resolve.js';
import type { Lease } from '../store/lease/types.js';
import { isForbiddenAddress } from './addresses.js';
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { normalizeHostname } from './hosts.js';
import { pinnedLookup } from './proxy.js';
import { ownedSite, type PublishDeps, siteUrlOf } from './publish.js';
import { newId } from './secrets.js';
import { decryptVariable, encryptVariable, keyIdOf } from './variables.js';

/** The events an endpoint may ask for (CONTRACT "Webhooks"). */
export const WEBHOOK_EVENTS = [
  'site.published',
  'site.publish_refused',
  'site.claimed',
  'site.expiring',
  'site.deleted',
  'domain.verified',
  'domain.certificate_active',
] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];
/** Domain events are about the account, not a site: only endpoints for every site receive them. */
const ACCOUNT_EVENTS = new Set<string>(['domain.verified', 'domain.certificate_active']);

export const MAX_WEBHOOKS_PER_ACCOUNT = 20;
export const MAX_WEBHOOK_URL_CHARS = 2048;
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;
/** A delivery is retried until this long after it was queued (or redelivered), then it failed. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;
/** One attempt: connect, send and the answer's head within this. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Attempts under way at once on the sending node. */
export const WEBHOOK_CONCURRENCY = 8;
/** Attempts under way at once to one endpoint (a hanging receiver cannot take every slot). */
export const WEBHOOK_PER_ENDPOINT = 2;
/**
 * Attempts under way at once for one account's endpoints: with at most this many, one account whose
 * endpoints all hang leaves the other half of the slots to everyone else.
 */
export const WEBHOOK_PER_ACCOUNT = 4;
/** How often the sender looks for due deliveries. */
export const WEBHOOK_POLL_MS = 1_000;
/** The first retry waits this long; each next one twice as long, up to WEBHOOK_BACKOFF_MAX_MS. */
export const WEBHOOK_BACKOFF_BASE_MS = 30_000;
export const WEBHOOK_BACKOFF_MAX_MS = 4 * 3_600_000;
/** Finished deliveries stay in the log this long. */
export const WEBHOOK_LOG_KEEP_MS = 30 * 24 * 3_600_000;
/** The delivery log answers the newest this many. */
export const WEBHOOK_LOG_PAGE = 100;
/** `site.expiring` goes this long before a site expires ... */
export const EXPIRY_WARNING_MS = 24 * 3_600_000;
/** ... or this long before, for a site whose whole life is a day or less (it would be warned at birth). */
export const SHORT_EXPIRY_WARNING_MS = 3_600_000;
/** Ports an endpoint may name: https's own, or an unprivileged one (never SSH, SMTP and the like). */
export const MIN_WEBHOOK_PORT = 1024;

export interface WebhookDeps {
  db: Db;
  clock: { now(): number };
  config: PublishDeps['config'];
  /** AES-256-GCM key sealing endpoint secrets (ServerKeys.webhooks). */
  webhookKey: Buffer;
  /** Addresses the filter lets through although they are not public (tests only; never configuration). */
  allowAddresses?: ReadonlySet<string>;
}

// ---- endpoints ------------------------------------------------------------------------------------

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Seals a secret for one endpoint (its id is bound as associated data, so a copied row does not open). */
const sealSecret = (key: Buffer, id: string, secret: string) => encryptVariable(key, 'webhook', id, secret);
const openSecret = (key: Buffer, id: string, sealed: string) => decryptVariable(key, 'webhook', id, sealed);

function view(row: WebhookEndpointRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    slug: row.site_slug,
    createdAt: iso(row.created_at)!,
  };
}

/** The hostname forms that always mean this machine or its network, refused by name before any lookup. */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/;

/** Checks an endpoint URL; returns it as it will be called. */
export function checkWebhookUrl(input: unknown, allow: ReadonlySet<string> = new Set()): string {
  if (typeof input !== 'string' || input.trim() === '') {
    throw invalid('url is required: the https:// address that receives the events.');
  }
  if (input.length > MAX_WEBHOOK_URL_CHARS) {
    throw invalid(`url is longer than ${MAX_WEBHOOK_URL_CHARS} characters.`);
  }
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw invalid('url is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:')
    throw invalid('url must be an https:// address; deliveries are never sent in clear.');
  if (url.username !== '' || url.password !== '') {
    throw invalid(
      'url must not carry credentials (user:password@); check the signature of each delivery instead.',
    );
  }
  // An empty fragment (`.../x#`) has no hash but stays in the URL as stored: refused as well.
  if (url.hash !== '' || url.href.includes('#')) throw invalid('url must not have a #fragment.');
  if (url.port !== '' && Number(url.port) < MIN_WEBHOOK_PORT) {
    throw invalid(`url names port ${url.port}: use 443 (the default) or a port from ${MIN_WEBHOOK_PORT} up.`);
  }
  // The limit holds for the URL as stored and shown back: percent-encoding and punycode can make it grow.
  if (url.href.length > MAX_WEBHOOK_URL_CHARS) {
    throw invalid(
      `url is longer than ${MAX_WEBHOOK_URL_CHARS} characters once encoded (${url.href.length}).`,
    );
  }
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0) {
    if (isForbiddenAddress(literal) && !allow.has(literal)) {
      throw invalid(
        `url points at ${literal}, a loopback, private, link-local or otherwise internal address; webhooks go to public addresses only.`,
      );
    }
    return url.toString();
  }
  const host = normalizeHostname(url.hostname);
  if ('problem' in host) throw invalid(`url's hostname is not valid: ${host.problem}.`);
  if (!host.hostname.includes('.') || LOCAL_NAME.test(host.hostname)) {
    throw invalid(`url's hostname ${host.hostname} is not a public DNS name.`);
  }
  return url.toString();
}

function checkEvents(input: unknown): WebhookEventName[] {
  if (!Array.isArray(input) || input.length === 0) {
    throw invalid(`events must be a non-empty array of event names: ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  const known = new Set<string>(WEBHOOK_EVENTS);
  const events: WebhookEventName[] = [];
  for (const e of input) {
    if (typeof e !== 'string' || !known.has(e)) {
      throw invalid(
        `Unknown event ${JSON.stringify(typeof e === 'string' ? e.slice(0, 60) : e)}; events are ${WEBHOOK_EVENTS.join(', ')}.`,
      );
    }
    if (!events.includes(e as WebhookEventName)) events.push(e as WebhookEventName);
  }
  return events;
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks' form). */
export const newWebhookSecret = (): string =>
  `${WEBHOOK_SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

export interface CreateWebhookBody {
  url?: unknown;
  events?: unknown;
  slug?: unknown;
}

/** POST /api/v1/webhooks: 201 with the secret, shown this once. */
export async function createWebhook(
  deps: WebhookDeps,
  account: AccountRow,
  body: CreateWebhookBody,
): Promise<WebhookCreated> {
  const url = checkWebhookUrl(body.url, deps.allowAddresses);
  const events = checkEvents(body.events);
  let slug: string | null = null;
  if (body.slug !== undefined && body.slug !== null) {
    if (typeof body.slug !== 'string' || body.slug === '')
      throw invalid('slug must be the slug of one of your sites.');
    slug = (await ownedSite(deps, account, body.slug)).slug;
  }
  const now = deps.clock.now();
  const id = newId('whk');
  const secret = newWebhookSecret();
  const row: WebhookEndpointRow = {
    id,
    account_id: account.id,
    site_slug: slug,
    url,
    events: JSON.stringify(events),
    key_id: keyIdOf(deps.webhookKey),
    secret_sealed: sealSecret(deps.webhookKey, id, secret),
    created_at: now,
  };
  await deps.db.transaction(async (trx) => {
    // The account row's lock serialises two creates, so the count below holds.
    await lockAccountForWebhooks(trx, account.id);
    const count = await countWebhookEndpoints(trx, account.id);
    if (count >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw invalid(
        `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhook endpoints; delete one first.`,
      );
    }
    await insertWebhookEndpoint(trx, row);
    // The host only: a webhook URL's path or query may itself carry a secret (a chat service's).
    await recordAudit(trx, {
      accountId: account.id,
      action: 'webhook.create',
      target: id,
      details: { host: new URL(url).host, events, slug },
      at: now,
    });
  });
  return { ...view(row), secret };
}

export async function listWebhooks(deps: Pick<WebhookDeps, 'db'>, account: AccountRow): Promise<WebhookList> {
  return { webhooks: (await accountWebhookEndpoints(deps.db.kysely, account.id)).map(view) };
}

async function ownedEndpoint(deps: Pick<WebhookDeps, 'db'>, account: AccountRow, id: string) {
  const row = await findWebhookEndpoint(deps.db.kysely, id);
  if (!row || row.account_id !== account.id) throw notFound(`Webhook ${id} not found`);
  return row;
}

export async function deleteWebhook(
  deps: Pick<WebhookDeps, 'db' | 'clock'>,
  account: AccountRow,
  id: string,
): Promise<WebhookDeleted> {
  await ownedEndpoint(deps, account, id);
  await deps.db.transaction(async (trx) => {
    await deleteWebhookEndpoint(trx, id);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'webhook.delete',
      target: id,
      at: deps.clock.now(),
    });
  });
  return { id, deleted: true };
}

function deliveryView(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    createdAt: iso(row.created_at)!,
    deliveredAt: iso(row.delivered_at),
  };
}

/** GET /api/v1/webhooks/:id/deliveries: the newest WEBHOOK_LOG_PAGE. */
export async function listDeliveries(
  deps: Pick<WebhookDeps, 'db'>,
  account: AccountRow,
  id: string,
): Promise<WebhookDeliveryList> {
  await ownedEndpoint(deps, account, id);
  const rows = await endpointWebhookDeliveries(deps.db.kysely, id, WEBHOOK_LOG_PAGE);
  return { deliveries: rows.map(deliveryView) };
}

/** POST .../deliveries/:deliveryId/redeliver: queued again now (same webhook-id), with a new 24 h window. */
export async function redeliver(
  deps: Pick<WebhookDeps, 'db' | 'clock'>,
  account: AccountRow,
  id: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  await ownedEndpoint(deps, account, id);
  const row = await findWebhookDelivery(deps.db.kysely, id, deliveryId);
  if (!row) throw notFound(`Delivery ${deliveryId} of webhook ${id} not found`);
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    await requeueWebhookDelivery(trx, deliveryId, now, now + WEBHOOK_RETRY_WINDOW_MS);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'webhook.redeliver',
      target: id,
      details: { deliveryId },
      at: now,
    });
  });
  return deliveryView({ ...row, status: 'pending', next_attempt_at: now, updated_at: now });
}

// ---- events -----------------------------------------------------------------------------------------

export interface DetectedSecretName {
  path: string;
  type: string;
  line: number;
}

/** Each event's `data` (CONTRACT "Webhooks"). */
export type WebhookEvent =
  | {
      type: 'site.published';
      slug: string;
      data: { slug: string; versionId: string; live: boolean; siteUrl: string; previewUrl: string | null };
    }
  | {
      type: 'site.publish_refused';
      slug: string;
      data: { slug: string; versionId: string; detectedSecrets: DetectedSecretName[] };
    }
  | { type: 'site.claimed'; slug: string; data: { slug: string; siteUrl: string } }
  | { type: 'site.expiring'; slug: string; data: { slug: string; siteUrl: string; expiresAt: string } }
  | { type: 'site.deleted'; slug: string; data: { slug: string } }
  | { type: 'domain.verified'; slug?: undefined; data: { domain: string } }
  | { type: 'domain.certificate_active'; slug?: undefined; data: { domain: string } };

/**
 * Queues `event` for every endpoint of the account that wants it: one statement, rows only for those
 * endpoints. Returns how many deliveries were queued. Throws on a database error (see webhookEvents).
 */
export async function enqueueWebhookEvent(
  deps: { db: Db; clock: { now(): number } },
  accountId: string,
  event: WebhookEvent,
): Promise<number> {
  return queueEvent(deps.db.kysely, deps.clock.now(), accountId, event);
}

function queueEvent(db: Executor, now: number, accountId: string, event: WebhookEvent): Promise<number> {
  const payload = JSON.stringify({
    type: event.type,
    timestamp: new Date(now).toISOString(),
    data: event.data,
  });
  return queueWebhookDeliveries(db, {
    accountId,
    slug: ACCOUNT_EVENTS.has(event.type) ? undefined : event.slug,
    event: event.type,
    payload,
    idPrefix: `msg_${randomBytes(12).toString('base64url')}.`,
    now,
    giveUpAt: now + WEBHOOK_RETRY_WINDOW_MS,
  });
}

/** How the rest of core reports events: never throws, never waits on a receiver. */
export interface WebhookEvents {
  /** `accountId` null (an anonymous site) queues nothing. */
  emit(accountId: string | null, event: WebhookEvent): Promise<void>;
}

export function webhookEvents(deps: { db: Db; clock: { now(): number }; logger: Logger }): WebhookEvents {
  return {
    async emit(accountId, event) {
      if (accountId === null) return;
      try {
        await enqueueWebhookEvent(deps, accountId, event);
      } catch (err) {
        // The change it reports happened: a lost notification is logged, never turned into a failure.
        deps.logger.error({ err, event: event.type }, 'queueing a webhook event failed');
      }
    },
  };
}

/** Reports an event when `events` is wired (tests and tools build core deps without it). */
export const emitEvent = (
  events: WebhookEvents | undefined,
  accountId: string | null,
  event: WebhookEvent,
) => (events === undefined ? Promise.resolve() : events.emit(accountId, event));

/**
 * The sweeper's part: `site.expiring` for owned sites (of accounts with an endpoint) about to expire, once
 * per site and expiry time; and finished deliveries older than WEBHOOK_LOG_KEEP_MS leave the log.
 */
export async function sweepWebhooks(deps: {
  db: Db;
  clock: { now(): number };
  config: WebhookDeps['config'];
}): Promise<{ expiring: number; pruned: number }> {
  const now = deps.clock.now();
  let expiring = 0;
  for (const site of await expiringSitesToWarn(deps.db.kysely, now, now + EXPIRY_WARNING_MS, 500)) {
    const lead =
      site.expires_at - site.created_at <= EXPIRY_WARNING_MS ? SHORT_EXPIRY_WARNING_MS : EXPIRY_WARNING_MS;
    if (site.expires_at - now > lead) continue;
    await deps.db.transaction(async (trx) => {
      if (!(await noteExpiryWarning(trx, site.slug, site.expires_at, now))) return;
      await queueEvent(trx, now, site.owner_id, {
        type: 'site.expiring',
        slug: site.slug,
        data: {
          slug: site.slug,
          siteUrl: siteUrlOf(deps.config, site.slug),
          expiresAt: iso(site.expires_at)!,
        },
      });
      expiring++;
    });
  }
  const pruned = await pruneWebhookDeliveries(deps.db.kysely, now - WEBHOOK_LOG_KEEP_MS);
  return { expiring, pruned };
}

// ---- delivery ---------------------------------------------------------------------------------------

/** The signature header's value: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` (Standard Webhooks). */
export function signWebhook(secret: string, id: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampS}.${body}`).digest('base64')}`;
}

/** The next attempt's delay after `attempts` failed ones: base * 2^(attempts-1), at most max. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

export const WEBHOOK_SENDER_DEFAULTS: WebhookSenderOptions = {
  timeoutMs: WEBHOOK_TIMEOUT_MS,
  concurrency: WEBHOOK_CONCURRENCY,
  pollMs: WEBHOOK_POLL_MS,
  backoffBaseMs: WEBHOOK_BACKOFF_BASE_MS,
  backoffMaxMs: WEBHOOK_BACKOFF_MAX_MS,
};

export interface WebhookSenderDeps {
  db: Db;
  clock: { now(): number };
  logger: Logger;
  /** Only the holder of the `webhooks` lease sends (several nodes, or WORKERS, share one database). */
  lease: Lease;
  webhookKey: Buffer;
  /** Hostname -> addresses (DNS_SERVERS, else the system resolver). */
  resolve: AddressResolver;
  options: WebhookSenderOptions;
  /** Addresses let through although not public (tests only). */
  allowAddresses?: ReadonlySet<string>;
  /** Extra CA certificates to trust (tests' receiver); default Node's store (+ NODE_EXTRA_CA_CERTS). */
  ca?: string | Buffer;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

const failure = (error: string, statusCode: number | null = null): AttemptOutcome => ({
  ok: false,
  statusCode,
  error,
});

/** One POST of one delivery. Never throws: every failure is an outcome. */
async function attempt(
  deps: WebhookSenderDeps,
  d: DueDelivery,
  now: number,
  stopping: AbortSignal,
): Promise<AttemptOutcome> {
  let url: URL;
  try {
    url = new URL(d.url);
  } catch {
    return failure('the endpoint URL is not valid');
  }
  const allow = deps.allowAddresses ?? new Set<string>();
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: LookupAddress[];
  if (isIP(literal) !== 0) addresses = [{ address: literal, family: isIP(literal) }];
  else {
    try {
      addresses = await deps.resolve(url.hostname);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return failure(`could not resolve ${url.hostname}`);
  }
  const refused = addresses.find((a) => isForbiddenAddress(a.address) && !allow.has(a.address));
  if (refused !== undefined) {
    return failure(
      `address refused: ${url.hostname} resolves to ${refused.address}, a loopback, private, link-local or otherwise internal address`,
    );
  }
  let secret: string;
  try {
    if (d.key_id !== keyIdOf(deps.webhookKey)) throw new Error('another key');
    secret = openSecret(deps.webhookKey, d.endpoint_id, d.secret_sealed);
  } catch {
    return failure(
      'the endpoint secret was sealed with another SECRETS_KEY; delete and add the endpoint again',
    );
  }
  const timestampS = Math.floor(now / 1000);
  const agent = new Agent({
    connect: {
      lookup: pinnedLookup(addresses),
      timeout: deps.options.timeoutMs,
      ...(deps.ca ? { ca: deps.ca } : {}),
    } as never,
    headersTimeout: deps.options.timeoutMs,
    bodyTimeout: deps.options.timeoutMs,
    pipelining: 0,
  });
  const timeout = AbortSignal.timeout(deps.options.timeoutMs);
  const signal = AbortSignal.any([timeout, stopping]);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Slipway-Webhooks/1',
        'webhook-id': d.id,
        'webhook-timestamp': String(timestampS),
        'webhook-signature': signWebhook(secret, d.id, timestampS, d.payload),
      },
      body: d.payload,
      dispatcher: agent,
      signal,
      maxRedirections: 0,
    });
    // The answer's body is not kept: read a little (so the connection ends cleanly), then drop it.
    await res.body.dump({ limit: 1024 }).catch(() => {});
    if (res.statusCode >= 200 && res.statusCode < 300)
      return { ok: true, statusCode: res.statusCode, error: null };
    return failure(
      res.statusCode >= 300 && res.statusCode < 400
        ? `answered ${res.statusCode} (redirects are not followed)`
        : `answered ${res.statusCode}`,
      res.statusCode,
    );
  } catch (err) {
    if (
      timeout.aborted ||
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.ConnectTimeoutError
    ) {
      return failure(`no answer within ${deps.options.timeoutMs / 1000} s`);
    }
    const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
    return failure(`could not deliver${code ? ` (${code})` : ''}`);
  } finally {
    void agent.destroy().catch(() => {});
  }
}

/** Sends one claimed delivery and records the outcome (a shutdown mid-attempt hands it back untried). */
async function sendOne(
  deps: WebhookSenderDeps,
  d: DueDelivery,
  lockedUntil: number,
  stopping: AbortSignal,
): Promise<void> {
  const outcome = await attempt(deps, d, deps.clock.now(), stopping);
  const now = deps.clock.now();
  if (stopping.aborted && !outcome.ok) {
    await releaseWebhookDelivery(deps.db.kysely, d.id, lockedUntil, d.next_attempt_at);
    return;
  }
  const attempts = d.attempts + 1;
  const retryAt = now + backoffMs(attempts, deps.options.backoffBaseMs, deps.options.backoffMaxMs);
  const gaveUp = !outcome.ok && retryAt > d.give_up_at;
  await recordWebhookAttempt(deps.db.kysely, d.id, lockedUntil, {
    status: outcome.ok ? 'delivered' : gaveUp ? 'failed' : 'pending',
    next_attempt_at: outcome.ok || gaveUp ? null : retryAt,
    last_status_code: outcome.statusCode,
    last_error: outcome.error,
    delivered_at: outcome.ok ? now : null,
    updated_at: now,
  });
  if (!outcome.ok) {
    deps.logger.info(
      { delivery: d.id, endpoint: d.endpoint_id, attempts, error: outcome.error, gaveUp },
      'webhook delivery attempt failed',
    );
  }
}

export interface WebhookSender {
  /** One look for due deliveries now (they are sent in the background, bounded by `concurrency`). */
  poll(): Promise<void>;
  /** Resolves when no attempt is under way. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

const LEASE_NAME = 'webhooks';

/**
 * The sender: every `pollMs`, on the node holding the `webhooks` lease, takes due deliveries up to the free
 * attempt slots and sends them in the background. A claim moves a delivery's due time past the attempt's
 * timeout first, so no two senders send it at once and one that died mid-attempt is retried.
 */
export function startWebhookSender(deps: WebhookSenderDeps): WebhookSender {
  const inFlight = new Set<Promise<void>>();
  const stopping = new AbortController();
  let stopped = false;
  let polling: Promise<void> = Promise.resolve();
  const { options } = deps;
  const lockMs = options.timeoutMs + 30_000;

  /** Attempts under way per endpoint: a slow one may hold at most WEBHOOK_PER_ENDPOINT of the slots. */
  const perEndpoint = new Map<string, number>();
  /** ... and per account: one account's hanging endpoints may hold at most WEBHOOK_PER_ACCOUNT. */
  const perAccount = new Map<string, number>();
  const full = (counts: Map<string, number>, cap: number) =>
    [...counts].filter(([, n]) => n >= cap).map(([id]) => id);
  const done = (counts: Map<string, number>, id: string) => {
    const left = (counts.get(id) ?? 1) - 1;
    if (left > 0) counts.set(id, left);
    else counts.delete(id);
  };
  const pollOnce = async () => {
    if (stopped) return;
    if (!(await deps.lease.tryAcquire(LEASE_NAME, Math.max(3 * options.pollMs, 3_000)))) return;
    let free = options.concurrency - inFlight.size;
    if (free <= 0) return;
    const now = deps.clock.now();
    // Endpoints and accounts at their share are left out of the look-up, so their backlog cannot hide
    // the others.
    const due = await dueWebhookDeliveries(deps.db.kysely, now, free, {
      endpoints: full(perEndpoint, WEBHOOK_PER_ENDPOINT),
      accounts: full(perAccount, WEBHOOK_PER_ACCOUNT),
    });
    for (const d of due) {
      if (stopped || free <= 0) return;
      const busy = perEndpoint.get(d.endpoint_id) ?? 0;
      const accountBusy = perAccount.get(d.account_id) ?? 0;
      if (busy >= WEBHOOK_PER_ENDPOINT || accountBusy >= WEBHOOK_PER_ACCOUNT) continue;
      const lockedUntil = now + lockMs;
      if (!(await claimWebhookDelivery(deps.db.kysely, d.id, d.next_attempt_at, lockedUntil))) continue;
      free--;
      perEndpoint.set(d.endpoint_id, busy + 1);
      perAccount.set(d.account_id, accountBusy + 1);
      const running = sendOne(deps, d, lockedUntil, stopping.signal)
        .catch((err) => deps.logger.error({ err, delivery: d.id }, 'webhook delivery failed'))
        .finally(() => {
          inFlight.delete(running);
          done(perEndpoint, d.endpoint_id);
          done(perAccount, d.account_id);
        });
      inFlight.add(running);
    }
  };
  // A database or Redis outage fails every poll: one line per minute says so.
  const pollErrors = new LogThrottle(60_000);
  const poll = () => {
    polling = polling
      .then(pollOnce)
      .catch((err) =>
        pollErrors.run((suppressed) => deps.logger.error({ err, suppressed }, 'webhook poll failed')),
      );
    return polling;
  };
  void poll();
  const timer = setInterval(poll, options.pollMs);
  timer.unref();
  return {
    poll,
    async idle() {
      await polling;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await polling;
      // Attempts under way are cut short and handed back as they were (the next holder sends them).
      stopping.abort();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await deps.lease.release(LEASE_NAME).catch(() => {});
    },
  };
}
