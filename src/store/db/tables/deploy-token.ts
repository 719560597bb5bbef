// Queries of deploy_tokens (core/tokens.ts): stored by the SHA-256 of the token, never the token.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { DeployTokenTable } from '../schema.js';
import type { AccountRow } from './account.js';

export type DeployTokenRow = Selectable<DeployTokenTable>;

export async function insertDeployToken(db: Executor, row: DeployTokenRow): Promise<void> {
  await db.insertInto('deploy_tokens').values(row).execute();
}

/** The site's tokens, oldest first. */
export function siteDeployTokens(db: Executor, slug: string): Promise<DeployTokenRow[]> {
  return db
    .selectFrom('deploy_tokens')
    .selectAll()
    .where('site_slug', '=', slug)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** True when the site had that token. */
export async function deleteDeployToken(db: Executor, slug: string, id: string): Promise<boolean> {
  const res = await db
    .deleteFrom('deploy_tokens')
    .where('site_slug', '=', slug)
    .where('id', '=', id)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** Every token of the site (the site is deleted). */
export async function deleteSiteDeployTokens(db: Executor, slug: string): Promise<void> {
  await db.deleteFrom('deploy_tokens').where('site_slug', '=', slug).execute();
}

/** The site's tokens that ran out before `before` (kept a while so the owner sees they expired). */
export async function deleteExpiredDeployTokens(db: Executor, slug: string, before: number): Promise<void> {
  await db
    .deleteFrom('deploy_tokens')
    .where('site_slug', '=', slug)
    .where('expires_at', '<=', before)
    .execute();
}

/**
 * The token of `tokenHash` with its owner's account, only while that account still owns the site and the
 * site is not deleted (one indexed read: token, site, account).
 */
export async function findDeployTokenCaller(
  db: Executor,
  tokenHash: string,
): Promise<{ token: DeployTokenRow; account: AccountRow } | undefined> {
  const row = await db
    .selectFrom('deploy_tokens as t')
    .innerJoin('sites as s', (j) =>
      j.onRef('s.slug', '=', 't.site_slug').onRef('s.owner_id', '=', 't.account_id'),
    )
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .where('t.token_hash', '=', tokenHash)
    .where('s.deleted_at', 'is', null)
    // A suspended owner's tokens are refused (401) while the suspension lasts.
    .where('a.suspended_at', 'is', null)
    .select([
      't.id as t_id',
      't.site_slug as t_site_slug',
      't.account_id as t_account_id',
      't.name as t_name',
      't.token_hash as t_token_hash',
      't.created_at as t_created_at',
      't.expires_at as t_expires_at',
      't.last_used_at as t_last_used_at',
    ])
    .selectAll('a')
    .executeTakeFirst();
  if (!row) return undefined;
  const {
    t_id,
    t_site_slug,
    t_account_id,
    t_name,
    t_token_hash,
    t_created_at,
    t_expires_at,
    t_last_used_at,
    ...account
  } = row;
  return {
    token: {
      id: t_id,
      site_slug: t_site_slug,
      account_id: t_account_id,
      name: t_name,
      token_hash: t_token_hash,
      created_at: t_created_at,
      expires_at: t_expires_at,
      last_used_at: t_last_used_at,
    },
    account: account as AccountRow,
  };
}

/** Records a use at `now` unless one was recorded since `since` (so at most one write per interval). */
export async function touchDeployToken(db: Executor, id: string, now: number, since: number): Promise<void> {
  await db
    .updateTable('deploy_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', since)]))
    .execute();
}
