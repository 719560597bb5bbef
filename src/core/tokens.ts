// Deploy tokens (issue 24, CONTRACT "Deploy tokens"): a secret that may publish one site of its owner and
// nothing else, for CI. Created, listed and revoked by the owner (key or session, never a token); shown
// once, stored as its SHA-256 (like API keys and sessions); expires after 1 to 365 days (default 90).
// A token authenticates as the site's owner (its calls count in the owner's window); which routes it may
// call is decided by the HTTP layer (route config `deployToken: true`, src/http/rate-limit.ts).

import type { CreatedDeployToken, DeployTokenInfo } from '../api/tokens.js';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  type DeployTokenRow,
  deleteDeployToken,
  deleteExpiredDeployTokens,
  findDeployTokenCaller,
  insertDeployToken,
  siteDeployTokens,
  touchDeployToken,
} from '../store/db/tables/deploy-token.js';
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { withEffectivePlan } from './plans.js';
import { ownedSite } from './publish.js';
import { newId, randomHex, sha256Hex } from './secrets.js';

export const DEPLOY_TOKEN_PREFIX = 'svc_site_';
const DEPLOY_TOKEN_RE = /^svc_site_[0-9a-f]{32}$/;
export const DEFAULT_TOKEN_DAYS = 90;
export const MAX_TOKEN_DAYS = 365;
export const MAX_TOKEN_NAME_CHARS = 64;
/** Letters, digits, space and `. _ : / # ( ) @ + -`, starting with a letter or digit, not ending in space. */
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9 ._:/#()@+-]*[A-Za-z0-9._:/#()@+-])?$/;
/** Unexpired tokens one site may have at once. */
export const MAX_TOKENS_PER_SITE = 25;
/** `lastUsedAt` is written at most once per this interval per token (a use within it changes nothing). */
export const LAST_USED_GRANULARITY_MS = 60_000;
/** Expired tokens stay listed this long (so the owner sees why CI stopped), then go at the next create. */
const EXPIRED_KEPT_MS = 30 * 86_400_000;
const DAY_MS = 86_400_000;

export interface TokenDeps {
  db: Db;
  clock: Clock;
}

/** The token a request authenticated with (req.deployToken). */
export interface DeployTokenCaller {
  id: string;
  slug: string;
  name: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

const info = (row: DeployTokenRow): DeployTokenInfo => ({
  id: row.id,
  name: row.name,
  expiresAt: iso(row.expires_at),
  createdAt: iso(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : iso(row.last_used_at),
});

/** Why a token name is refused, or null. */
export function tokenNameProblem(name: string): string | null {
  if (name.length === 0) return 'name is empty';
  if ([...name].length > MAX_TOKEN_NAME_CHARS)
    return `name is longer than ${MAX_TOKEN_NAME_CHARS} characters`;
  if (!TOKEN_NAME_PATTERN.test(name)) {
    return 'name may hold letters, digits, spaces and . _ : / # ( ) @ + -, and must start with a letter or digit';
  }
  return null;
}

/** POST .../tokens: a new token of the owned site; the secret is in this answer only. */
export async function createDeployToken(
  deps: TokenDeps,
  account: AccountRow,
  slug: string,
  body: { name: string; expiresInDays?: number },
): Promise<CreatedDeployToken> {
  await ownedSite(deps, account, slug);
  const problem = tokenNameProblem(body.name);
  if (problem) throw invalid(`Invalid request: ${problem}.`);
  const days = body.expiresInDays ?? DEFAULT_TOKEN_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_TOKEN_DAYS) {
    throw invalid(`Invalid request: expiresInDays must be a whole number from 1 to ${MAX_TOKEN_DAYS}.`);
  }
  const now = deps.clock.now();
  await deleteExpiredDeployTokens(deps.db.kysely, slug, now - EXPIRED_KEPT_MS);
  const live = (await siteDeployTokens(deps.db.kysely, slug)).filter((t) => t.expires_at > now);
  if (live.length >= MAX_TOKENS_PER_SITE) {
    throw invalid(`Site "${slug}" already has ${MAX_TOKENS_PER_SITE} deploy tokens; revoke one first.`);
  }
  const token = `${DEPLOY_TOKEN_PREFIX}${randomHex(16)}`;
  const row: DeployTokenRow = {
    id: newId('dtk'),
    site_slug: slug,
    account_id: account.id,
    name: body.name,
    token_hash: sha256Hex(token),
    created_at: now,
    expires_at: now + days * DAY_MS,
    last_used_at: null,
  };
  await deps.db.transaction(async (trx) => {
    await insertDeployToken(trx, row);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'token.create',
      target: slug,
      details: { id: row.id, name: row.name, expiresAt: iso(row.expires_at) },
      at: now,
    });
  });
  return { id: row.id, name: row.name, token, expiresAt: iso(row.expires_at), createdAt: iso(now) };
}

/** GET .../tokens: every token of the owned site (expired ones too, for a while), never the secret. */
export async function listDeployTokens(
  deps: TokenDeps,
  account: AccountRow,
  slug: string,
): Promise<DeployTokenInfo[]> {
  await ownedSite(deps, account, slug);
  return (await siteDeployTokens(deps.db.kysely, slug)).map(info);
}

/** DELETE .../tokens/:id: the token stops working at once (on every node: nothing caches it). */
export async function revokeDeployToken(
  deps: TokenDeps,
  account: AccountRow,
  slug: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  await ownedSite(deps, account, slug);
  await deps.db.transaction(async (trx) => {
    if (!(await deleteDeployToken(trx, slug, id))) {
      throw notFound(`Site "${slug}" has no deploy token ${JSON.stringify(id.slice(0, 64))}`);
    }
    await recordAudit(trx, {
      accountId: account.id,
      action: 'token.revoke',
      target: slug,
      details: { id },
      at: deps.clock.now(),
    });
  });
  return { id, deleted: true };
}

/** Whether an `Authorization` value carries a deploy token (well formed or not). */
export const isDeployTokenAuthorization = (header: string | undefined): boolean =>
  header !== undefined && /^Bearer\s+svc_site_/i.test(header);

/**
 * The owner's account and the token of an `Authorization: Bearer svc_site_...` value, or undefined for a
 * malformed, unknown, revoked or expired token, or one whose site was deleted or changed hands (each then
 * answers as an unknown key does). Records the use, at most once per LAST_USED_GRANULARITY_MS.
 */
export async function deployTokenCaller(
  db: Db,
  header: string | undefined,
  now: number,
): Promise<{ account: AccountRow; token: DeployTokenCaller } | undefined> {
  const value = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  if (value === undefined || !DEPLOY_TOKEN_RE.test(value)) return undefined;
  const found = await findDeployTokenCaller(db.kysely, sha256Hex(value));
  if (!found || found.token.expires_at <= now) return undefined;
  const { token, account } = found;
  if (token.last_used_at === null || token.last_used_at <= now - LAST_USED_GRANULARITY_MS) {
    await touchDeployToken(db.kysely, token.id, now, now - LAST_USED_GRANULARITY_MS);
  }
  return {
    account: withEffectivePlan(account, now),
    token: { id: token.id, slug: token.site_slug, name: token.name },
  };
}
