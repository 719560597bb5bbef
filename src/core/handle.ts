// The vanity handle (spec "Handle"): `<handle>.<site domain>` serves the sites its owner links there.
// Hobby only. Handles and slugs share the `*.SITE_DOMAIN` namespace: a handle never equals a live or
// retired slug, and new slugs never equal a handle (publish.ts draws again).

import type { HandleInfo, HandleReleased, HandleSet } from '../api/handle.js';
import type { ChangeBus } from '../shared/events.js';
import type { Db } from '../store/db/db.js';
import { isUniqueViolation } from '../store/db/db.js';
import { type AccountRow, findAccountByHandle, setHandle } from '../store/db/tables/account.js';
import { deleteLinksWhere, HANDLE_TARGET } from '../store/db/tables/link.js';
import { slugState } from '../store/db/tables/site.js';
import { recordAudit } from './audit.js';
import { ApiError, invalid, notFound } from './errors.js';
import { labelHost, labelUrl } from './hosts.js';
import { type PlanOverrides, planLimits } from './plans.js';
import { isValidSlug } from './slug.js';

export const HANDLE_MIN_CHARS = 3;
export const HANDLE_MAX_CHARS = 30;
/** Lowercase letters, digits and hyphens, not at either end (a DNS label's characters, RFC 1035 §2.3.1). */
export const HANDLE_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** Names no one may take: service hosts and words people would mistake for the service's own pages. */
const RESERVED = new Set([
  'www', 'api', 'app', 'admin', 'mail', 'static', 'assets', 'docs', 'status', 'dashboard', 'login',
  'signin', 'signup', 'account', 'billing', 'internal', 'cdn', 'ftp', 'smtp', 'imap', 'pop', 'ns1',
  'ns2', 'mx', 'help', 'support', 'blog', 'root', 'system', 'localhost',
]); // biome-ignore format: a word list

export interface HandleDeps {
  db: Db;
  clock: { now(): number };
  config: {
    scheme: string;
    siteDomain: string;
    siteHost: string;
    baseHost: string;
    planOverrides: PlanOverrides;
  };
  changes: ChangeBus;
}

export const handleUrl = (config: HandleDeps['config'], handle: string) => labelUrl(config, handle);

/** Why `handle` cannot be taken by anyone, or null. */
export function handleProblem(
  handle: unknown,
  config: Pick<HandleDeps['config'], 'baseHost'>,
): string | null {
  if (typeof handle !== 'string' || handle === '') return 'handle is required';
  if (handle.length < HANDLE_MIN_CHARS || handle.length > HANDLE_MAX_CHARS) {
    return `a handle has ${HANDLE_MIN_CHARS} to ${HANDLE_MAX_CHARS} characters`;
  }
  // Handles and slugs share `<label>.SITE_DOMAIN`: one label form for both (core/slug.ts).
  if (!isValidSlug(handle)) {
    return 'a handle has lowercase letters, digits and hyphens only, and does not start or end with a hyphen';
  }
  // `--` marks IDN A-labels (`xn--`, RFC 5891 4.2.3.1: no `--` in a label's 3rd and 4th places) and
  // separates preview hosts `<slug>--<label>` (CONTRACT "Previews and aliases": new handles never have it).
  if (handle.includes('--')) {
    return 'a handle has no "--" (it begins IDN labels such as xn-- and separates preview hosts <slug>--<label>)';
  }
  if (RESERVED.has(handle) || config.baseHost.split('.').includes(handle)) return `"${handle}" is reserved`;
  return null;
}

export async function getHandle(deps: HandleDeps, account: AccountRow): Promise<HandleInfo> {
  return { handle: account.handle, url: account.handle ? handleUrl(deps.config, account.handle) : null };
}

/** PUT /api/v1/handle: claims `handle`, releasing the previous one at once. */
export async function putHandle(deps: HandleDeps, account: AccountRow, handle: unknown): Promise<HandleSet> {
  if (!planLimits(account.plan, deps.config.planOverrides).handles) {
    throw new ApiError('PLAN_LIMIT', 'Handles are part of the Hobby plan.', {
      hint: 'Upgrade with POST /api/billing/checkout.',
    });
  }
  // The account's own handle stays its own, even one taken under older rules (decisions.md, issue 19).
  if (typeof handle === 'string' && handle === account.handle) {
    const url = handleUrl(deps.config, handle);
    return { handle, url, message: `${url} is already yours.` };
  }
  const problem = handleProblem(handle, deps.config);
  if (problem) throw invalid(`Invalid handle: ${problem}.`);
  const name = handle as string;
  const url = handleUrl(deps.config, name);
  const taken = () => invalid(`The handle "${name}" is taken.`, { hint: 'Choose another name.' });
  if ((await slugState(deps.db.kysely, name)) !== undefined) throw taken();
  try {
    await deps.db.transaction(async (trx) => {
      const now = deps.clock.now();
      await setHandle(trx, account.id, name, now);
      await recordAudit(trx, {
        accountId: account.id,
        action: 'handle.set',
        target: name,
        details: { previous: account.handle },
        at: now,
      });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  if (account.handle)
    await deps.changes.publish({ kind: 'host', host: labelHost(deps.config, account.handle) });
  await deps.changes.publish({ kind: 'host', host: labelHost(deps.config, name) });
  return {
    handle: name,
    url,
    message: account.handle
      ? `Your handle is now ${name}; ${account.handle} was released and your links moved with you.`
      : `Your handle is ${name}: link sites to it with POST /api/v1/links.`,
  };
}

/** DELETE /api/v1/handle: releases it and removes its links. */
export async function deleteHandle(deps: HandleDeps, account: AccountRow): Promise<HandleReleased> {
  if (!account.handle) throw notFound('This account has no handle.');
  const old = account.handle;
  await deps.db.transaction(async (trx) => {
    const now = deps.clock.now();
    await setHandle(trx, account.id, null, now);
    const links = await deleteLinksWhere(trx, { accountId: account.id, domain: HANDLE_TARGET });
    await recordAudit(trx, {
      accountId: account.id,
      action: 'handle.delete',
      target: old,
      details: { linksRemoved: links.length },
      at: now,
    });
  });
  await deps.changes.publish({ kind: 'host', host: labelHost(deps.config, old) });
  return { deleted: true as const, message: `The handle ${old} was released and its links removed.` };
}

/** Whether a drawn slug would collide with a handle (new slugs never equal a handle). */
export async function isHandle(db: Db, name: string): Promise<boolean> {
  return (await findAccountByHandle(db.kysely, name)) !== undefined;
}
