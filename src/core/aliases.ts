// Named aliases of a site (CONTRACT "Previews and aliases"): `<slug>--<name>.<site domain>` serves the
// finalized version the alias points at and moves, on every node at once, when it is pointed elsewhere.
// Only the site's owner manages them (their key or session; a deploy token of the site may set one:
// http/aliases.ts). Anonymous sites have none until claimed.

import type { AliasDeleted, AliasList, AliasSet } from '../api/aliases.js';
import type { ChangeBus } from '../shared/events.js';
import { ALIAS_NAME_MAX_CHARS, isAliasName } from '../shared/preview-names.js';
import type { Db, Executor } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { findAccountByHandle } from '../store/db/tables/account.js';
import { countAliases, deleteAlias, findAlias, siteAliases, upsertAlias } from '../store/db/tables/alias.js';
import { findLiveSite, type SiteRow } from '../store/db/tables/site.js';
import { findVersion } from '../store/db/tables/version.js';
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { labelHost, previewLabel, previewUrl } from './hosts.js';

/** Aliases one site may have (each is a host the site server and the TLS ask answer for). */
export const MAX_ALIASES_PER_SITE = 100;
/** RFC 1035 §2.3.4: `<slug>--<name>` is one DNS label. */
const MAX_LABEL_CHARS = 63;

export interface AliasDeps {
  db: Db;
  clock: { now(): number };
  config: { scheme: string; siteDomain: string; siteHost: string };
  changes: ChangeBus;
}

/** Why `name` cannot be an alias of site `slug`, or null. */
export function aliasNameProblem(slug: string, name: unknown): string | null {
  if (typeof name !== 'string' || name === '') return 'an alias name is required';
  if (name.length > ALIAS_NAME_MAX_CHARS || !isAliasName(name)) {
    return `an alias name has 1 to ${ALIAS_NAME_MAX_CHARS} lowercase letters, digits and hyphens, starts with a letter, does not end with a hyphen and has no "--"`;
  }
  if (previewLabel(slug, name).length > MAX_LABEL_CHARS) {
    return `"${slug}--${name}" would be longer than ${MAX_LABEL_CHARS} characters, the most a DNS label has`;
  }
  return null;
}

/** Refuses a bad alias name with a 400 (finalize's `alias` and PUT .../aliases/:name). */
export function checkAliasName(slug: string, name: unknown): asserts name is string {
  const problem = aliasNameProblem(slug, name);
  if (problem !== null) throw invalid(`Invalid alias: ${problem}.`);
}

/** The host an alias or version label is served at (named by change events). */
export const aliasHost = (config: AliasDeps['config'], slug: string, name: string): string =>
  labelHost(config, previewLabel(slug, name));

/**
 * Points alias `name` of `slug` at `versionId` (a finalized version of the site, checked by the caller),
 * in the caller's transaction. Refuses a new alias beyond MAX_ALIASES_PER_SITE, and a name whose host is
 * an older handle's (that handle keeps its host: decisions.md, issue 24).
 */
export async function pointAlias(
  db: Executor,
  slug: string,
  name: string,
  versionId: string,
  now: number,
): Promise<void> {
  if ((await findAlias(db, slug, name)) === undefined) {
    if ((await countAliases(db, slug)) >= MAX_ALIASES_PER_SITE) {
      throw invalid(`A site has at most ${MAX_ALIASES_PER_SITE} aliases.`, {
        hint: `Delete one with DELETE /api/v1/publish/${slug}/aliases/<name>, or move an existing one.`,
      });
    }
    if ((await findAccountByHandle(db, previewLabel(slug, name))) !== undefined) {
      throw invalid(`The host ${previewLabel(slug, name)} belongs to a handle; choose another alias name.`);
    }
  }
  await upsertAlias(db, slug, name, versionId, now);
}

/** The caller's live site, or 404 as if it did not exist (CONTRACT "Identity, ownership"). */
async function ownedSite(deps: AliasDeps, account: AccountRow, slug: string): Promise<SiteRow> {
  const site = await findLiveSite(deps.db.kysely, slug);
  if (!site || site.owner_id !== account.id) throw notFound(`Site "${slug}" not found`);
  return site;
}

/** PUT /api/v1/publish/:slug/aliases/:name: creates the alias or moves it to `versionId`. */
export async function putAlias(
  deps: AliasDeps,
  account: AccountRow,
  slug: string,
  name: string,
  versionId: unknown,
): Promise<AliasSet> {
  await ownedSite(deps, account, slug);
  checkAliasName(slug, name);
  if (typeof versionId !== 'string' || versionId === '') throw invalid('versionId is required.');
  const version = await findVersion(deps.db.kysely, versionId);
  if (version === undefined || version.site_slug !== slug || version.status !== 'finalized') {
    throw invalid(`versionId ${versionId} is not a finalized version of site "${slug}".`, {
      hint: `GET /api/v1/publish/${slug}/versions lists them.`,
    });
  }
  await deps.db.transaction(async (trx) => {
    const now = deps.clock.now();
    await pointAlias(trx, slug, name, versionId, now);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'alias.set',
      target: slug,
      details: { name, versionId },
      at: now,
    });
  });
  await deps.changes.publish({ kind: 'host', host: aliasHost(deps.config, slug, name) });
  return { name, versionId, url: previewUrl(deps.config, slug, name) };
}

/** GET /api/v1/publish/:slug/aliases, by name. */
export async function listAliases(deps: AliasDeps, account: AccountRow, slug: string): Promise<AliasList> {
  await ownedSite(deps, account, slug);
  const rows = await siteAliases(deps.db.kysely, slug);
  return {
    aliases: rows.map((a) => ({
      name: a.name,
      versionId: a.version_id,
      url: previewUrl(deps.config, slug, a.name),
      updatedAt: new Date(a.updated_at).toISOString(),
    })),
  };
}

/** DELETE /api/v1/publish/:slug/aliases/:name: its host serves nothing from now on, on every node. */
export async function removeAlias(
  deps: AliasDeps,
  account: AccountRow,
  slug: string,
  name: string,
): Promise<AliasDeleted> {
  await ownedSite(deps, account, slug);
  await deps.db.transaction(async (trx) => {
    if (!(await deleteAlias(trx, slug, name))) {
      throw notFound(`Alias "${name}" of site "${slug}" not found`);
    }
    await recordAudit(trx, {
      accountId: account.id,
      action: 'alias.delete',
      target: slug,
      details: { name },
      at: deps.clock.now(),
    });
  });
  await deps.changes.publish({ kind: 'host', host: aliasHost(deps.config, slug, name) });
  return { name, deleted: true };
}
