// Operators (ADMIN_EMAILS; CONTRACT "Operators, reports and the audit log"): find accounts and sites, take
// a site down (451 on every host, content kept), suspend an account (its keys, tokens and sessions 401, its
// sites 403), set a plan by hand, delete a site, and the blocklists: sign-in addresses and domains,
// anonymous publishers' addresses and ranges, file hashes refused at finalize.
//
// Each operator action writes in ONE transaction inside ONE function here (takedownSite, restoreSite,
// deleteSiteAsOperator, suspendAccount, unsuspendAccount, setAccountPlan, addBlock, removeBlock), so an
// audit record can join that transaction. The change event that drops the serving caches of every node is
// published after the commit, before the caller answers.

import { BlockList, isIP } from 'node:net';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import type { ChangeBus } from '../shared/events.js';
import type { Db, Executor } from '../store/db/db.js';
import { type AccountRow, findAccountByEmail, findAccountById, setPlan } from '../store/db/tables/account.js';
import {
  accountIdByHandle,
  accountIdsByEmail,
  accountsByIds,
  anySiteRow,
  type BlockKind,
  type BlockRow,
  blockedHashesOfVersion,
  blockedValues,
  deleteBlock,
  domainHolders,
  findBlock,
  hashesServedElsewhere,
  insertBlock,
  listBlocks,
  setAccountSuspension,
  setSiteTakedown,
  sitesBySlugs,
  sitesOfAccounts,
  slugsWithHash,
  versionFileCount,
  versionHashes,
} from '../store/db/tables/block.js';
import { closeReportsOfSite } from '../store/db/tables/report.js';
import { type SiteRow, tombstoneSite } from '../store/db/tables/site.js';
import { operatorActor, recordAudit } from './audit.js';
import { ApiError, invalid, notFound } from './errors.js';
import { hostnameOf, parseHost, resolveHost } from './hosts.js';
import type { FinalizeCheck } from './publish.js';
import { newId } from './secrets.js';
import { isValidSlug } from './slug.js';

export interface OperatorDeps {
  db: Db;
  clock: Clock;
  changes: ChangeBus;
  config: Pick<Config, 'adminEmails' | 'siteHost' | 'siteDomain' | 'scheme' | 'planOverrides'>;
}

export const BLOCK_KINDS = ['email', 'email_domain', 'ip', 'hash'] as const;
export const MAX_REASON_CHARS = 1000;
/** At most this many accounts and sites in one search answer. */
export const SEARCH_LIMIT = 50;

/** An operator: signed in with an address of ADMIN_EMAILS (and, like anyone, not suspended). */
export function isOperator(
  config: Pick<Config, 'adminEmails'>,
  account: AccountRow | null | undefined,
): boolean {
  return account != null && account.suspended_at === null && config.adminEmails.has(account.email);
}

// ---- views ----------------------------------------------------------------------------------------

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export interface OperatorAccount {
  id: string;
  email: string;
  plan: AccountRow['plan'];
  handle: string | null;
  suspended: boolean;
  suspension: { reason: string; at: string } | null;
  operator: boolean;
  siteCount: number;
  createdAt: string;
}

export interface OperatorSite {
  slug: string;
  accountId: string | null;
  status: 'active' | 'pending' | 'expired' | 'deleted';
  takenDown: boolean;
  takedown: { reason: string; at: string } | null;
  createdAt: string;
}

function accountView(config: OperatorDeps['config'], a: AccountRow): OperatorAccount {
  return {
    id: a.id,
    email: a.email,
    plan: a.plan,
    handle: a.handle,
    suspended: a.suspended_at !== null,
    suspension:
      a.suspended_at === null ? null : { reason: a.suspended_reason ?? '', at: iso(a.suspended_at)! },
    operator: config.adminEmails.has(a.email),
    siteCount: Number(a.site_count),
    createdAt: iso(a.created_at)!,
  };
}

function siteView(s: SiteRow, now: number): OperatorSite {
  let status: OperatorSite['status'];
  if (s.deleted_at !== null) status = 'deleted';
  else if (s.expires_at !== null && s.expires_at <= now) status = 'expired';
  else status = s.current_version_id === null ? 'pending' : 'active';
  return {
    slug: s.slug,
    accountId: s.owner_id,
    status,
    takenDown: s.takedown_at !== null,
    takedown: takedownOf(s),
    createdAt: iso(s.created_at)!,
  };
}

/** The owner's view of a takedown (GET /api/v1/publish/:slug `takedown`, the dashboard). */
export function takedownOf(
  s: Pick<SiteRow, 'takedown_at' | 'takedown_reason'>,
): { reason: string; at: string } | null {
  return s.takedown_at === null ? null : { reason: s.takedown_reason ?? '', at: iso(s.takedown_at)! };
}

/**
 * The owner may not delete or copy a site that is taken down: its content is kept as the operator left it
 * (a copy under another slug would put it back online). 403 SITE_TAKEN_DOWN.
 */
export function refuseTakenDown(s: Pick<SiteRow, 'takedown_at' | 'takedown_reason'>, what: string): void {
  if (s.takedown_at === null) return;
  throw new ApiError(
    'SITE_TAKEN_DOWN',
    `This site was taken down by the operator of this service and cannot be ${what}.`,
    {
      hint: 'The reason is in the `takedown` field of GET /api/v1/publish/:slug; contact the operator.',
      extra: { takedown: takedownOf(s) },
    },
  );
}

// ---- search ---------------------------------------------------------------------------------------

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Accounts and sites matching `q`: an email (or part of one), an account id, a slug (or a preview label),
 * a handle, a custom domain, a content hash (SHA-256 hex) or a site URL pasted as is. Found sites bring
 * their owners; found accounts bring their sites.
 */
export async function search(
  deps: OperatorDeps,
  rawQ: string,
): Promise<{ accounts: OperatorAccount[]; sites: OperatorSite[] }> {
  const q = rawQ.trim().toLowerCase();
  if (q === '') throw invalid('Give q: an email, slug, handle, domain, content hash or site URL.');
  if (q.length > 2048) throw invalid('q is too long (at most 2048 characters).');
  const db = deps.db.kysely;
  const accountIds = new Set<string>();
  const slugs = new Set<string>();

  // A pasted URL (or a bare host): what the site server would serve there.
  let host: string | null = null;
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(q)) {
    host = URL.canParse(q) ? new URL(q).hostname : null;
  } else if (/^[a-z0-9.-]+\.[a-z0-9-]+(:\d+)?(\/.*)?$/.test(q) && !q.includes('@')) {
    host = hostnameOf(q.split('/')[0]);
  }
  if (host !== null) {
    const route = await resolveHost(deps, host);
    for (const m of route?.mounts ?? []) slugs.add(m.slug);
    const name = parseHost(host, deps.config.siteHost);
    if (name?.kind === 'label') {
      slugs.add(name.label);
      const owner = await accountIdByHandle(db, name.label);
      if (owner) accountIds.add(owner);
    } else if (name?.kind === 'preview') slugs.add(name.slug);
    else if (name?.kind === 'domain') {
      const held = await domainHolders(db, name.domain);
      for (const id of held.accountIds) accountIds.add(id);
      for (const s of held.slugs) slugs.add(s);
    }
  }
  if (q.includes('@')) for (const id of await accountIdsByEmail(db, q, SEARCH_LIMIT)) accountIds.add(id);
  if (/^acct_[A-Za-z0-9_-]{1,64}$/.test(rawQ.trim())) accountIds.add(rawQ.trim());
  if (isValidSlug(q)) {
    slugs.add(q);
    const at = q.indexOf('--');
    if (at > 0) slugs.add(q.slice(0, at));
    const owner = await accountIdByHandle(db, q);
    if (owner) accountIds.add(owner);
  }
  if (SHA256_HEX.test(q)) for (const s of await slugsWithHash(db, q, SEARCH_LIMIT)) slugs.add(s);

  const now = deps.clock.now();
  const sites = await sitesBySlugs(db, [...slugs], SEARCH_LIMIT);
  for (const s of sites) if (s.owner_id !== null) accountIds.add(s.owner_id);
  const accounts = await accountsByIds(db, [...accountIds], SEARCH_LIMIT);
  // Sites of the accounts found by their own terms (email, handle, domain), newest first.
  const seen = new Set(sites.map((s) => s.slug));
  const owned = await sitesOfAccounts(
    db,
    accounts.map((a) => a.id),
    SEARCH_LIMIT,
  );
  for (const s of owned) {
    if (seen.has(s.slug)) continue;
    sites.push(s);
    seen.add(s.slug);
  }
  return {
    accounts: accounts.map((a) => accountView(deps.config, a)),
    sites: sites.slice(0, SEARCH_LIMIT * 2).map((s) => siteView(s, now)),
  };
}

/** One account with its sites (the account page of /admin). */
export async function operatorAccount(
  deps: OperatorDeps,
  id: string,
): Promise<{ account: OperatorAccount; sites: OperatorSite[] }> {
  const account = await findAccountById(deps.db.kysely, id);
  if (!account) throw notFound('No account has this id.');
  const sites = await sitesOfAccounts(deps.db.kysely, [id], 500);
  const now = deps.clock.now();
  return { account: accountView(deps.config, account), sites: sites.map((s) => siteView(s, now)) };
}

/** One site (deleted ones included: a tombstone still shows who had it). */
export async function operatorSite(
  deps: OperatorDeps,
  slug: string,
): Promise<OperatorSite & { fileCount: number }> {
  const site = await anySite(deps.db.kysely, slug);
  const fileCount = site.current_version_id
    ? await versionFileCount(deps.db.kysely, site.current_version_id)
    : 0;
  return { ...siteView(site, deps.clock.now()), fileCount };
}

async function anySite(db: Executor, slug: string): Promise<SiteRow> {
  const site = isValidSlug(slug) ? await anySiteRow(db, slug) : undefined;
  if (!site) throw notFound('No site has this slug.');
  return site;
}

// ---- site actions ---------------------------------------------------------------------------------

function reasonOf(raw: unknown, what: string): string {
  const reason = typeof raw === 'string' ? raw.trim() : '';
  if (reason === '') throw invalid(`Give a reason for the ${what}: the owner sees it.`);
  if (reason.length > MAX_REASON_CHARS)
    throw invalid(`The reason is at most ${MAX_REASON_CHARS} characters.`);
  return reason;
}

/**
 * Takes a site down: every host of it (slug, previews, aliases, handle and domain links) answers 451 on
 * every node; its content is kept, so restoreSite undoes it. `blockContent` also blocks the hashes of its
 * live files (a file some other live site that is not taken down also serves is left out: blocking a
 * shared library would refuse innocent sites), so the same files are refused at finalize anywhere.
 */
export async function takedownSite(
  deps: OperatorDeps,
  operator: AccountRow,
  slug: string,
  input: { reason: unknown; blockContent?: boolean | undefined },
): Promise<{ slug: string; takenDown: true; blockedHashes: number }> {
  const reason = reasonOf(input.reason, 'takedown');
  const now = deps.clock.now();
  let blockedHashes = 0;
  await deps.db.transaction(async (trx) => {
    const site = await anySite(trx, slug);
    if (site.deleted_at !== null)
      throw notFound('This site was deleted; there is nothing left to take down.');
    await setSiteTakedown(trx, slug, { reason, at: now });
    if (input.blockContent === true && site.current_version_id !== null) {
      const hashes = await exclusiveHashes(trx, slug, site.current_version_id);
      const already = new Set((await blockedValues(trx, 'hash', hashes)).map((b) => b.value));
      for (const hash of hashes) {
        if (already.has(hash)) continue;
        await insertBlock(trx, {
          id: newId('blk'),
          kind: 'hash',
          value: hash,
          reason: `takedown of ${slug}: ${reason}`.slice(0, MAX_REASON_CHARS),
          created_by: operator.id,
          created_at: now,
        });
        blockedHashes++;
      }
    }
    // The reports about it are dealt with: they leave the operators' open list.
    const reportsClosed = await closeReportsOfSite(trx, slug);
    await recordAudit(trx, {
      accountId: site.owner_id,
      action: 'site.takedown',
      target: slug,
      details: { reason, blockedHashes, reportsClosed },
      at: now,
      actor: operatorActor(operator.id),
    });
  });
  await deps.changes.publish({ kind: 'site', slug });
  return { slug, takenDown: true, blockedHashes };
}

/** The live version's file hashes that no other live, not taken-down site serves. */
async function exclusiveHashes(db: Executor, slug: string, versionId: string): Promise<string[]> {
  const hashes = (await versionHashes(db, versionId)).filter((h) => SHA256_HEX.test(h));
  const shared = await hashesServedElsewhere(db, hashes, slug);
  return hashes.filter((h) => !shared.has(h));
}

/** Undoes a takedown (the hashes it blocked stay blocked until removed from the blocklist). */
export async function restoreSite(
  deps: OperatorDeps,
  operator: AccountRow,
  slug: string,
): Promise<{ slug: string; takenDown: false }> {
  await deps.db.transaction(async (trx) => {
    const site = await anySite(trx, slug);
    if (site.takedown_at === null) throw invalid('This site is not taken down.', { status: 409 });
    await setSiteTakedown(trx, slug, null);
    await recordAudit(trx, {
      accountId: site.owner_id,
      action: 'site.takedown_lift',
      target: slug,
      at: deps.clock.now(),
      actor: operatorActor(operator.id),
    });
  });
  await deps.changes.publish({ kind: 'site', slug });
  return { slug, takenDown: false };
}

/** Deletes a site for good (its versions and files go, as an owner's delete); the slug stays retired. */
export async function deleteSiteAsOperator(
  deps: OperatorDeps,
  operator: AccountRow,
  slug: string,
): Promise<{ slug: string; deleted: true }> {
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    const site = await anySite(trx, slug);
    if (site.deleted_at !== null) throw notFound('This site is already deleted.');
    await tombstoneSite(trx, slug, now);
    await recordAudit(trx, {
      accountId: site.owner_id,
      action: 'site.delete',
      target: slug,
      at: now,
      actor: operatorActor(operator.id),
    });
  });
  await deps.changes.publish({ kind: 'site', slug });
  return { slug, deleted: true };
}

// ---- account actions ------------------------------------------------------------------------------

/**
 * Suspends an account: its API key, deploy tokens and browser sessions answer 401 (they are refused, not
 * deleted, so unsuspendAccount brings them back) and every site it owns answers 403.
 */
export async function suspendAccount(
  deps: OperatorDeps,
  operator: AccountRow,
  id: string,
  input: { reason: unknown },
): Promise<{ id: string; suspended: true }> {
  const reason = reasonOf(input.reason, 'suspension');
  if (id === operator.id) throw invalid('An operator cannot suspend their own account.');
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    const account = await findAccountById(trx, id);
    if (!account) throw notFound('No account has this id.');
    await setAccountSuspension(trx, id, { reason, at: now });
    await recordAudit(trx, {
      accountId: id,
      action: 'account.suspend',
      target: id,
      details: { reason },
      at: now,
      actor: operatorActor(operator.id),
    });
  });
  await publishAccountChange(deps, id);
  return { id, suspended: true };
}

export async function unsuspendAccount(
  deps: OperatorDeps,
  operator: AccountRow,
  id: string,
): Promise<{ id: string; suspended: false }> {
  await deps.db.transaction(async (trx) => {
    const account = await findAccountById(trx, id);
    if (!account) throw notFound('No account has this id.');
    if (account.suspended_at === null) throw invalid('This account is not suspended.', { status: 409 });
    await setAccountSuspension(trx, id, null);
    await recordAudit(trx, {
      accountId: id,
      action: 'account.unsuspend',
      target: id,
      at: deps.clock.now(),
      actor: operatorActor(operator.id),
    });
  });
  await publishAccountChange(deps, id);
  return { id, suspended: false };
}

/**
 * Every site of the account changes how it is served, as do its handle and domains. Suspensions are rare,
 * so every cache of every node is dropped (`all`) rather than one event per site.
 */
async function publishAccountChange(deps: OperatorDeps, _id: string): Promise<void> {
  await deps.changes.publish({ kind: 'all' });
}

/** Sets the plan by hand (no end date: a stopped subscription's end no longer applies). */
export async function setAccountPlan(
  deps: OperatorDeps,
  operator: AccountRow,
  id: string,
  plan: unknown,
): Promise<{ id: string; plan: AccountRow['plan'] }> {
  if (plan !== 'free' && plan !== 'hobby') throw invalid('plan must be "free" or "hobby".');
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    const account = await findAccountById(trx, id);
    if (!account) throw notFound('No account has this id.');
    await setPlan(trx, id, plan, null, now);
    await recordAudit(trx, {
      accountId: id,
      action: 'plan.change',
      target: id,
      details: { from: account.plan, to: plan },
      at: now,
      actor: operatorActor(operator.id),
    });
  });
  await deps.changes.publish({ kind: 'account', accountId: id });
  return { id, plan };
}

// ---- blocklists -----------------------------------------------------------------------------------

export interface BlockView {
  id: string;
  kind: BlockKind;
  value: string;
  reason: string;
  createdBy: string | null;
  createdAt: string;
}

const blockView = (b: BlockRow): BlockView => ({
  id: b.id,
  kind: b.kind,
  value: b.value,
  reason: b.reason,
  createdBy: b.created_by,
  createdAt: iso(b.created_at)!,
});

const DOMAIN_RE = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/;

/** The stored form of a block's value (one row per kind and value), or 400 naming what is wrong. */
export function normalizeBlockValue(kind: BlockKind, raw: string): string {
  const v = raw.trim().toLowerCase();
  switch (kind) {
    case 'email':
      if (!/^[^\s@]+@[^\s@]+$/.test(v) || !DOMAIN_RE.test(v.slice(v.indexOf('@') + 1)))
        throw invalid(`"${raw.slice(0, 100)}" is not an email address.`);
      return v;
    case 'email_domain': {
      const d = v.replace(/^@/, '');
      if (!DOMAIN_RE.test(d)) throw invalid(`"${raw.slice(0, 100)}" is not a domain (e.g. example.com).`);
      return d;
    }
    case 'ip': {
      const [addr, bits, extra] = v.split('/');
      const family = isIP(addr ?? '');
      const max = family === 4 ? 32 : 128;
      if (
        family === 0 ||
        extra !== undefined ||
        (bits !== undefined && !/^\d{1,3}$/.test(bits)) ||
        Number(bits) > max
      )
        throw invalid(
          `"${raw.slice(0, 100)}" is not an IP address or CIDR range (e.g. 203.0.113.7, 198.51.100.0/24).`,
        );
      return bits === undefined ? addr! : `${addr}/${Number(bits)}`;
    }
    case 'hash':
      if (!SHA256_HEX.test(v)) throw invalid('A hash block is a SHA-256: 64 hex digits.');
      return v;
  }
}

export async function addBlock(
  deps: OperatorDeps,
  operator: AccountRow,
  input: { kind: unknown; value: unknown; reason: unknown },
): Promise<BlockView> {
  const kind = input.kind as BlockKind;
  if (!(BLOCK_KINDS as readonly string[]).includes(kind)) {
    throw invalid(`kind must be one of ${BLOCK_KINDS.join(', ')}.`);
  }
  if (typeof input.value !== 'string' || input.value.length > 320) throw invalid('value must be a string.');
  const value = normalizeBlockValue(kind, input.value);
  const reason = reasonOf(input.reason, 'block');
  const row: BlockRow = {
    id: newId('blk'),
    kind,
    value,
    reason,
    created_by: operator.id,
    created_at: deps.clock.now(),
  };
  await deps.db.transaction(async (trx) => {
    if (await findBlock(trx, kind, value)) {
      throw invalid(`This ${kind} is already blocked.`, { status: 409 });
    }
    await insertBlock(trx, row);
    await recordAudit(trx, {
      accountId: null,
      action: 'block.add',
      target: row.id,
      details: { kind, blocked: value, reason },
      at: row.created_at,
      actor: operatorActor(operator.id),
    });
  });
  return blockView(row);
}

export async function blocks(deps: OperatorDeps, kind?: BlockKind): Promise<BlockView[]> {
  return (await listBlocks(deps.db.kysely, kind)).map(blockView);
}

export async function removeBlock(
  deps: OperatorDeps,
  operator: AccountRow,
  id: string,
): Promise<{ id: string; deleted: true }> {
  await deps.db.transaction(async (trx) => {
    if (!(await deleteBlock(trx, id))) throw notFound('No block has this id.');
    await recordAudit(trx, {
      accountId: null,
      action: 'block.remove',
      target: id,
      at: deps.clock.now(),
      actor: operatorActor(operator.id),
    });
  });
  return { id, deleted: true };
}

// ---- enforcement ----------------------------------------------------------------------------------

/** Sign-in (code request and check, API and web): 403 SIGNIN_BLOCKED for a blocked address or domain. */
export async function refuseBlockedEmail(db: Db, email: string): Promise<void> {
  const domain = email.slice(email.lastIndexOf('@') + 1);
  // The domain and each parent (mail.example.com is under a block of example.com).
  const domains: string[] = [];
  for (let d = domain; d.includes('.'); d = d.slice(d.indexOf('.') + 1)) domains.push(d);
  const found =
    (await findBlock(db.kysely, 'email', email)) ??
    (await blockedValues(db.kysely, 'email_domain', domains))[0];
  if (found) {
    throw new ApiError(
      'SIGNIN_BLOCKED',
      'Sign-in with this email address is blocked by the operator of this service.',
      {
        hint: 'If you think this is a mistake, contact the operator of this service.',
      },
    );
  }
}

/** Sign-in of a suspended account: 403 ACCOUNT_SUSPENDED (its key would answer 401 anyway). */
export async function refuseSuspendedEmail(db: Db, email: string): Promise<void> {
  const account = await findAccountByEmail(db.kysely, email);
  if (account?.suspended_at != null) throw suspended();
}

export const suspended = () =>
  new ApiError('ACCOUNT_SUSPENDED', 'This account is suspended by the operator of this service.', {
    hint: 'Its key, deploy tokens and sessions do not work while it is suspended; contact the operator.',
  });

/**
 * An anonymous publish from a blocked address or range: 403 PUBLISH_BLOCKED. Anonymous publishes are
 * limited to a few per hour per client, so the list is read per publish (no cache to keep in step).
 */
export async function refuseBlockedPublisher(db: Db, clientAddress: string): Promise<void> {
  const rows = await listBlocks(db.kysely, 'ip');
  if (rows.length === 0) return;
  const list = new BlockList();
  for (const { value } of rows) {
    const [addr, bits] = value.split('/');
    const type = isIP(addr!) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr!, type);
    else list.addSubnet(addr!, Number(bits), type);
  }
  const addr =
    clientAddress.startsWith('::ffff:') && isIP(clientAddress.slice(7)) === 4
      ? clientAddress.slice(7)
      : clientAddress;
  const family = isIP(addr);
  if (family === 0) return;
  if (list.check(addr, family === 6 ? 'ipv6' : 'ipv4')) {
    throw new ApiError(
      'PUBLISH_BLOCKED',
      'Anonymous publishing from your network is blocked by the operator of this service.',
      {
        hint: 'Sign in and publish with an API key, or contact the operator of this service.',
      },
    );
  }
}

/** The finalize check (core/publish.ts finalizeChecks): a file whose hash is blocked refuses the version. */
export function blockedContentCheck(db: Db): FinalizeCheck {
  return async ({ versionId, files }) => {
    const found = await blockedHashesOfVersion(db.kysely, versionId);
    if (found.length === 0) return;
    const blocked = new Set(found);
    const paths = files.filter((f) => blocked.has((f.hash ?? f.expected_hash)!)).map((f) => f.path);
    throw new ApiError(
      'CONTENT_BLOCKED',
      `This publish contains ${paths.length === 1 ? 'a file' : `${paths.length} files`} that the operator of this service has blocked: ${paths.slice(0, 10).join(', ')}.`,
      {
        hint: 'Remove these files and publish again; nothing was made live.',
        extra: { blockedPaths: paths.slice(0, 100) },
      },
    );
  };
}
