// Browser sessions of the web pages (issue 14): a random token in an HttpOnly cookie, stored only as a
// hash, ended by sign-out (or expiry); and the CSRF token of the forms, bound to the session by an HMAC.

import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/db/db.js';
import { type AccountRow, findAccountById } from '../store/db/tables/account.js';
import { deleteSession, findSession, insertSession } from '../store/db/tables/session.js';
import { withEffectivePlan } from './plans.js';
import { hmacBase64Url, safeEqual, sha256Hex } from './secrets.js';

export const SESSION_COOKIE = 'slipway_session';

/** What the web pages' sessions use: the sessions table, the clock, the CSRF key and the hosts they show. */
export interface SessionDeps {
  db: Db;
  clock: Clock;
  /** Keys the CSRF tokens of the forms and the signed notices. */
  csrfKey: Buffer;
  config: Pick<
    Config,
    'scheme' | 'baseUrl' | 'siteDomain' | 'cnameTarget' | 'planOverrides' | 'auditRetentionDays'
  >;
}
export const SESSION_TTL_MS = 30 * 24 * 3_600_000;

export async function startSession(db: Db, accountId: string, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await insertSession(db.kysely, {
    token_hash: sha256Hex(token),
    account_id: accountId,
    created_at: now,
    expires_at: now + SESSION_TTL_MS,
  });
  return token;
}

/** The signed-in account of a session token, or undefined (unknown, ended or expired). */
export async function sessionAccount(
  db: Db,
  token: string | undefined,
  now: number,
): Promise<AccountRow | undefined> {
  if (!token || token.length > 100) return undefined;
  const row = await findSession(db.kysely, sha256Hex(token));
  if (!row || row.expires_at <= now) return undefined;
  const account = await findAccountById(db.kysely, row.account_id);
  return account && withEffectivePlan(account, now);
}

export async function endSession(db: Db, token: string | undefined): Promise<void> {
  if (!token) return;
  await deleteSession(db.kysely, sha256Hex(token));
}

/** The CSRF token of a form: bound to the session (or, before sign-in, to the pre-session cookie). */
export const csrfTokenFor = (key: Buffer, sessionOrNonce: string) =>
  hmacBase64Url(key, `csrf:${sessionOrNonce}`);

export function csrfTokenValid(key: Buffer, sessionOrNonce: string | undefined, given: unknown): boolean {
  return (
    typeof sessionOrNonce === 'string' &&
    sessionOrNonce !== '' &&
    typeof given === 'string' &&
    safeEqual(given, csrfTokenFor(key, sessionOrNonce))
  );
}

/**
 * A one-line notice shown after a dashboard action (`?done=<text>&n=<mac>`): shown only with a MAC bound
 * to the viewer's session, so a link from elsewhere cannot put its own words on the service's pages.
 */
export const noticeMac = (key: Buffer, session: string, text: string) =>
  hmacBase64Url(key, `notice:${session}:${text}`);

/** The notice of a page's query when its MAC fits the session, else undefined. */
export function verifiedNotice(key: Buffer, session: string, query: unknown): string | undefined {
  const { done, n } = (query ?? {}) as Record<string, unknown>;
  if (typeof done !== 'string' || typeof n !== 'string' || done.length > 2000) return undefined;
  return safeEqual(n, noticeMac(key, session, done)) ? done : undefined;
}
