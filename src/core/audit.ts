// The audit log (issue 26; CONTRACT "Operators, reports and the audit log"): every change to an account's
// sites, versions, keys, deploy tokens, domains, handle, links, plan, variables (names only), proxy hosts,
// and every operator action, recorded with who, from which address, when and what.
//
// Recording is ONE call inside the change's own transaction, so a change that rolls back leaves no entry:
//
//   await deps.db.transaction(async (trx) => {
//     ...the change...
//     await recordAudit(trx, { accountId, action: 'site.delete', target: slug, details: {}, at: now });
//   });
//
// Who and from where: the HTTP layer resolves the caller once per request (src/http/audit.ts) and runs the
// handler inside `withAuditCaller`, so core functions do not carry it through every signature; an entry
// may name its own `actor`/`ip` instead (an operator action, a sweep). Outside any request the caller is
// the system. Details never hold a secret or a variable's value: `recordAudit` refuses such field names.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Transaction } from 'kysely';
import type { Db } from '../store/db/db.js';
import type { Database } from '../store/db/schema.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  type AuditRow,
  accountAudit,
  allAudit,
  deleteAuditBefore,
  insertAudit,
} from '../store/db/tables/audit.js';
import { invalid } from './errors.js';
import { randomHex, sha256Hex } from './secrets.js';

export const AUDIT_ACTOR_KINDS = ['key', 'session', 'token', 'operator', 'system'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

export interface AuditActor {
  kind: AuditActorKind;
  /** key_/ses_ fingerprint (12 hex of a hash: names the credential, reveals nothing), token or operator id. */
  id?: string;
}

/** Who is asking and from where (the client address as src/core/client-address.ts resolves it). */
export interface AuditCaller {
  actor: AuditActor;
  ip: string | null;
}

export interface AuditEntryInput {
  /** The account whose things changed; null for an operator action on no account. */
  accountId: string | null;
  /** `<thing>.<verb>`, e.g. `site.delete` (docs/audit.md lists them). */
  action: string;
  /** What it acted on: a slug, `slug/name`, a domain, an id. Never a secret. */
  target: string;
  /** Names, ids, counts; never a value of a variable, a key, a token, a code or a password. */
  details?: Record<string, unknown>;
  /** ms; the change's own clock reading (defaults to Date.now()). */
  at?: number;
  /** Defaults to the request's caller (withAuditCaller), else the system. */
  actor?: AuditActor;
  /** Defaults to the request's client address (null outside a request: a sweep). */
  ip?: string | null;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: AuditActor;
  ip: string | null;
  action: string;
  target: string;
  details: Record<string, unknown>;
}

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

const SYSTEM: AuditCaller = { actor: { kind: 'system' }, ip: null };
const callers = new AsyncLocalStorage<AuditCaller>();

/** Runs `fn` with `caller` as the author of every entry it records (the HTTP layer, once per request). */
export function withAuditCaller<T>(caller: AuditCaller, fn: () => T): T {
  return callers.run(caller, fn);
}

/** The author of entries recorded now: the request's caller, else the system. */
export function currentAuditCaller(): AuditCaller {
  return callers.getStore() ?? SYSTEM;
}

export const keyActor = (account: Pick<AccountRow, 'api_key_hash'>): AuditActor =>
  account.api_key_hash ? { kind: 'key', id: `key_${account.api_key_hash.slice(0, 12)}` } : { kind: 'key' };
export const sessionActor = (sessionToken: string): AuditActor => ({
  kind: 'session',
  id: `ses_${sha256Hex(sessionToken).slice(0, 12)}`,
});
export const tokenActor = (tokenId: string): AuditActor => ({ kind: 'token', id: tokenId });
export const operatorActor = (operatorAccountId: string): AuditActor => ({
  kind: 'operator',
  id: operatorAccountId,
});

/** Field names a detail may never carry (a value or a credential): a programming error, refused loudly. */
const FORBIDDEN_DETAIL =
  /^(value|values|password|secret|token|apikey|api_key|key|code|claimtoken|claim_token)$/i;

function checkDetails(details: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(details)) {
    if (FORBIDDEN_DETAIL.test(k)) throw new Error(`audit details may not carry "${k}"`);
    if (v && typeof v === 'object' && !Array.isArray(v)) checkDetails(v as Record<string, unknown>);
  }
}

/**
 * Entries of the same millisecond are ordered by a count of this process's entries of that millisecond
 * (one change's entries share its clock reading; with a random suffix alone an archive deploy listed
 * version.finalize before site.create). The count starts again at each new millisecond, so an id tells
 * nothing of how many entries the instance records (a count across milliseconds would let an owner
 * measure other accounts' activity between two of their own entries); the random part keeps ids of
 * several processes unique.
 */
let lastAuditAt = -1;
let auditCount = 0;

/**
 * `aud_` + 15-digit ms + 8 hex of that count + 8 random hex: ordered by time, then by recording within a
 * process, so the id is the page cursor.
 */
function auditId(at: number): string {
  const ms = Math.max(0, Math.floor(at));
  auditCount = ms === lastAuditAt ? auditCount + 1 : 0;
  lastAuditAt = ms;
  return `aud_${String(ms).padStart(15, '0')}${auditCount.toString(16).padStart(8, '0')}${randomHex(4)}`;
}

/**
 * Records one entry in `trx`, the transaction of the change it describes (a rolled-back change leaves
 * none). The one call every audited change makes.
 */
export async function recordAudit(trx: Transaction<Database>, entry: AuditEntryInput): Promise<void> {
  if (!trx.isTransaction) throw new Error('recordAudit needs the change\u2019s transaction');
  const details = entry.details ?? {};
  checkDetails(details);
  const caller = currentAuditCaller();
  const actor = entry.actor ?? caller.actor;
  const at = entry.at ?? Date.now();
  await insertAudit(trx, {
    id: auditId(at),
    account_id: entry.accountId,
    at,
    actor_kind: actor.kind,
    actor_id: actor.id ?? null,
    ip: entry.ip !== undefined ? entry.ip : caller.ip,
    action: entry.action,
    target: entry.target,
    details: JSON.stringify(details),
  });
}

export function auditEntry(row: AuditRow): AuditEntry {
  const actor: AuditActor = { kind: row.actor_kind };
  if (row.actor_id !== null) actor.id = row.actor_id;
  let details: Record<string, unknown> = {};
  try {
    details = JSON.parse(row.details) as Record<string, unknown>;
  } catch {
    // Written by recordAudit only; an unreadable row shows empty details rather than failing the page.
  }
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    actor,
    ip: row.ip,
    action: row.action,
    target: row.target,
    details,
  };
}

const badQuery = (message: string) => invalid(message);

/** The page an owner asked for: `limit` 1..AUDIT_PAGE_MAX; `before` an entry id or a time (ms or ISO). */
export function auditPage(query: { limit?: unknown; before?: unknown }): {
  limit: number;
  beforeId?: string;
  beforeAt?: number;
} {
  let limit = AUDIT_PAGE_DEFAULT;
  if (query.limit !== undefined && query.limit !== '') {
    const n = Number(query.limit);
    if (!Number.isInteger(n) || n < 1 || n > AUDIT_PAGE_MAX)
      throw badQuery(`limit must be a whole number from 1 to ${AUDIT_PAGE_MAX}.`);
    limit = n;
  }
  const before = query.before;
  if (before === undefined || before === '') return { limit };
  if (typeof before !== 'string' || before.length > 100)
    throw badQuery('before must be an entry id or a time.');
  if (/^aud_\d{15}[0-9a-f]*$/.test(before)) return { limit, beforeId: before };
  if (/^\d{1,15}$/.test(before)) return { limit, beforeAt: Number(before) };
  const t = Date.parse(before);
  if (Number.isNaN(t)) throw badQuery('before must be an entry id (from a previous page) or a time.');
  return { limit, beforeAt: t };
}

/** The owner's entries, newest first (GET /api/v1/account/audit and the dashboard). */
export async function listAudit(
  db: Db,
  account: AccountRow,
  query: { limit?: unknown; before?: unknown },
): Promise<{ entries: AuditEntry[] }> {
  const rows = await accountAudit(db.kysely, account.id, auditPage(query));
  return { entries: rows.map(auditEntry) };
}

/** An entry as operators read it: the account's shape plus whose log it is in (null: a block, no account). */
export interface OperatorAuditEntry extends AuditEntry {
  accountId: string | null;
}

/**
 * Every account's entries, newest first (GET /api/admin/audit, the /admin audit page, `slipway admin
 * audit`): operators only, the caller checks. `account` narrows it to one account's log.
 */
export async function listAllAudit(
  db: Db,
  query: { limit?: unknown; before?: unknown; account?: unknown },
): Promise<{ entries: OperatorAuditEntry[] }> {
  const page = auditPage(query);
  const account = query.account;
  if (account !== undefined && account !== '' && (typeof account !== 'string' || account.length > 100))
    throw badQuery('account must be an account id.');
  const rows = await allAudit(db.kysely, {
    ...page,
    ...(typeof account === 'string' && account !== '' ? { accountId: account } : {}),
  });
  return { entries: rows.map((r) => ({ ...auditEntry(r), accountId: r.account_id })) };
}

/** Removes entries older than `retentionDays` (the sweeper); the number removed. */
export function pruneAudit(db: Db, now: number, retentionDays: number): Promise<number> {
  return deleteAuditBefore(db.kysely, now - retentionDays * 86_400_000);
}
