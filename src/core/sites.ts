// Managing owned sites (spec "Sites", CONTRACT "Versions"): details, list, delete, duplicate, claim,
// metadata and version restore. Every lookup is by owner: another account's site is a 404.

import type {
  Claimed,
  Duplicated,
  Restored,
  SiteDetails,
  SiteList,
  SiteStatus,
  Version,
} from '../api/sites.js';
import { isUniqueViolation } from '../store/db/db.js';
import { type AccountRow, accountUsage } from '../store/db/tables/account.js';
import { siteAliases } from '../store/db/tables/alias.js';
import { findBlobScans } from '../store/db/tables/blob-scan.js';
import {
  changeSite,
  findLiveSite,
  insertSite,
  listOwnedSites,
  type SiteRow,
  tombstoneSite,
  updateSite as updateSiteRow,
} from '../store/db/tables/site.js';
import {
  finalizedVersions,
  findVersion,
  insertVersion,
  pendingVersionOf,
  type VersionFileRow,
  versionFiles,
} from '../store/db/tables/version.js';
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { isHandle } from './handle.js';
import { validateMetadataPatch } from './metadata.js';
import { refuseTakenDown, takedownOf } from './operators.js';
import { hashPassword } from './password.js';
import {
  checkSiteLimit,
  checkStorage,
  hashClaimToken,
  ownedSite,
  type PublishDeps,
  SLUG_ATTEMPTS,
  siteUrlOf,
  versionPreviewUrl,
} from './publish.js';
import { SCANNER_VERSION } from './scan/scanner.js';
import { newId, safeEqual } from './secrets.js';
import { generateSlug, isValidSlug } from './slug.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** active: live and unexpired; pending: never finalized; expired: past expiresAt. */
export function siteStatus(site: SiteRow, now: number): SiteStatus {
  if (site.expires_at !== null && site.expires_at <= now) return 'expired';
  return site.current_version_id === null ? 'pending' : 'active';
}

/** The version a client sees: the current one, else the pending one (spec: "current or pending"). */
async function shownVersionId(deps: Pick<PublishDeps, 'db'>, site: SiteRow): Promise<string | null> {
  if (site.current_version_id) return site.current_version_id;
  return (await pendingVersionOf(deps.db.kysely, site.slug))?.id ?? null;
}

/**
 * Why an owned site has never gone live, in words for its owner: its pending version's files were all
 * uploaded and the secret scan has findings for some of them (a refused finalize: the scan's results
 * are kept per blob), or the publish was never finalized. Null for a site that has a live version.
 */
export async function notPublishedReason(
  deps: Pick<PublishDeps, 'db'>,
  site: SiteRow,
): Promise<string | null> {
  if (site.current_version_id) return null;
  const pending = await pendingVersionOf(deps.db.kysely, site.slug);
  if (!pending) return 'never finalized';
  const files = await versionFiles(deps.db.kysely, pending.id);
  const missing = files.filter((f) => f.hash === null).length;
  if (missing > 0) return `never finalized (${missing} of ${files.length} files not uploaded)`;
  const scans = await findBlobScans(deps.db.kysely, SCANNER_VERSION, [...new Set(files.map((f) => f.hash!))]);
  const flagged = files.filter((f) => {
    const found = scans.get(f.hash!);
    return found !== undefined && (JSON.parse(found) as unknown[]).length > 0;
  });
  if (flagged.length === 0) return 'never finalized';
  const paths = flagged.slice(0, 3).map((f) => f.path);
  return `the last publish was refused: secrets found in ${paths.join(', ')}${flagged.length > 3 ? ', ...' : ''}`;
}

/** The owned site `slug`'s reason for not being live (see notPublishedReason). */
export async function siteNotPublishedReason(
  deps: Pick<PublishDeps, 'db'>,
  account: AccountRow,
  slug: string,
): Promise<string | null> {
  return notPublishedReason(deps, await ownedSite(deps, account, slug));
}

export async function siteDetails(
  deps: PublishDeps,
  account: AccountRow,
  slug: string,
): Promise<SiteDetails> {
  const site = await ownedSite(deps, account, slug);
  const versionId = await shownVersionId(deps, site);
  const files = versionId ? await versionFiles(deps.db.kysely, versionId) : [];
  return {
    slug,
    siteUrl: siteUrlOf(deps.config, slug),
    status: siteStatus(site, deps.clock.now()),
    versionId,
    title: site.title,
    description: site.description,
    ogImagePath: site.og_image_path,
    hasPassword: site.password_hash !== null,
    createdAt: iso(site.created_at)!,
    updatedAt: iso(site.updated_at)!,
    expiresAt: iso(site.expires_at),
    takedown: takedownOf(site),
    files: files.map((f) => ({
      path: f.path,
      size: f.size,
      contentType: f.content_type,
      hash: f.hash ?? f.expected_hash,
    })),
  };
}

export const MAX_LIST_LIMIT = 500;

function decodeCursor(cursor: string): { createdAt: number; slug: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,15}):(.*)$/.exec(text);
  if (!match || !isValidSlug(match[2])) throw invalid('cursor is not one this API returned');
  return { createdAt: Number(match[1]), slug: match[2]! };
}

/** GET /api/v1/publishes: newest first; `limit` (default all up to 500) and `cursor` beyond the spec. */
export async function listSites(
  deps: PublishDeps,
  account: AccountRow,
  options: { limit?: number; cursor?: string },
): Promise<SiteList> {
  const limit = options.limit ?? MAX_LIST_LIMIT;
  const after = options.cursor ? decodeCursor(options.cursor) : undefined;
  const rows = await listOwnedSites(deps.db.kysely, account.id, limit + 1, after);
  const page = rows.slice(0, limit);
  const now = deps.clock.now();
  const { sites: total } = await accountUsage(deps.db.kysely, account.id);
  const last = page.at(-1);
  return {
    sites: page.map((s) => ({
      slug: s.slug,
      siteUrl: siteUrlOf(deps.config, s.slug),
      status: siteStatus(s, now),
      title: s.title,
      fileCount: s.file_count ?? 0,
      totalSize: s.total_size ?? 0,
      createdAt: iso(s.created_at)!,
      updatedAt: iso(s.updated_at)!,
      expiresAt: iso(s.expires_at),
    })),
    total,
    nextCursor:
      rows.length > limit && last
        ? Buffer.from(`${last.created_at}:${last.slug}`).toString('base64url')
        : null,
  };
}

/** DELETE: every version and file list goes; the row stays as a tombstone so the slug is retired. */
export async function deleteSite(deps: PublishDeps, account: AccountRow, slug: string): Promise<void> {
  refuseTakenDown(await ownedSite(deps, account, slug), 'deleted');
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    await tombstoneSite(trx, slug, now);
    await recordAudit(trx, { accountId: account.id, action: 'site.delete', target: slug, at: now });
  });
  await deps.changes.publish({ kind: 'site', slug });
  await deps.events?.emit(account.id, { type: 'site.deleted', slug, data: { slug } });
}

/** POST .../duplicate: a new active site sharing the source's current files (no bytes copied). */
export async function duplicateSite(
  deps: PublishDeps,
  account: AccountRow,
  sourceSlug: string,
): Promise<Duplicated> {
  const source = await ownedSite(deps, account, sourceSlug);
  refuseTakenDown(source, 'duplicated');
  if (!source.current_version_id)
    throw invalid(`Site "${sourceSlug}" has no published version to duplicate yet`);
  const version = await findVersion(deps.db.kysely, source.current_version_id);
  if (!version) throw notFound(`Site "${sourceSlug}" not found`);
  await checkSiteLimit(deps, account);
  await checkStorage(deps, account, version.total_size, 0);
  const files = await versionFiles(deps.db.kysely, version.id);
  const now = deps.clock.now();
  const versionId = newId('ver');
  for (let attempt = 1; ; attempt++) {
    const slug = generateSlug();
    // Slugs and handles share the host namespace (core/handle.ts).
    if (attempt < SLUG_ATTEMPTS && (await isHandle(deps.db, slug))) continue;
    try {
      await deps.db.transaction(async (trx) => {
        await insertSite(
          trx,
          {
            slug,
            owner_id: account.id,
            current_version_id: versionId,
            title: source.title,
            description: source.description,
            og_image_path: source.og_image_path,
            // A protected site's copy stays protected (same password).
            password_hash: source.password_hash,
            expires_at: null,
            claim_token_hash: null,
            created_at: now,
            updated_at: now,
            deleted_at: null,
            takedown_at: null,
            takedown_reason: null,
            // The copy keeps the source's choice about counting visitors.
            analytics_off: source.analytics_off,
          },
          version.total_size,
        );
        await insertVersion(
          trx,
          {
            ...version,
            id: versionId,
            site_slug: slug,
            status: 'finalized',
            created_at: now,
            finalized_at: now,
          },
          files.map((f): VersionFileRow => ({ ...f, version_id: versionId })),
        );
        await recordAudit(trx, {
          accountId: account.id,
          action: 'site.duplicate',
          target: slug,
          details: { from: sourceSlug, versionId },
          at: now,
        });
      });
    } catch (err) {
      if (isUniqueViolation(err) && attempt < SLUG_ATTEMPTS) continue;
      throw err;
    }
    return {
      slug,
      siteUrl: siteUrlOf(deps.config, slug),
      versionId,
      copiedFrom: sourceSlug,
      status: 'active',
    };
  }
}

/**
 * The anonymous site a claim token opens, or the refusal a claim would get: unknown site, already
 * claimed, wrong token, expired. The claim page asks this before it offers its button.
 */
export async function claimableSite(
  deps: Pick<PublishDeps, 'db' | 'clock'>,
  slug: string,
  claimToken: string,
): Promise<SiteRow> {
  const site = await findLiveSite(deps.db.kysely, slug);
  if (!site) throw notFound(`Site "${slug}" not found`);
  if (site.owner_id !== null || site.claim_token_hash === null)
    throw invalid('This site has already been claimed');
  if (!safeEqual(hashClaimToken(claimToken), site.claim_token_hash))
    throw invalid('The claim token is not valid for this site');
  if (site.expires_at !== null && site.expires_at <= deps.clock.now())
    throw invalid('This site has expired and can no longer be claimed');
  return site;
}

/** POST .../claim: an unexpired anonymous site with the right token becomes the caller's. */
export async function claimSite(
  deps: PublishDeps,
  account: AccountRow,
  slug: string,
  claimToken: string,
): Promise<Claimed> {
  const site = await claimableSite(deps, slug, claimToken);
  const now = deps.clock.now();
  await checkSiteLimit(deps, account);
  // The claimed site's live bytes join the account's storage like a publish would.
  const live = site.current_version_id
    ? await findVersion(deps.db.kysely, site.current_version_id)
    : undefined;
  await checkStorage(deps, account, live?.total_size ?? 0, 0);
  const claimed = await deps.db.transaction(async (trx) => {
    const won = await changeSite(
      trx,
      slug,
      { owner_id: account.id, expires_at: null, claim_token_hash: null, updated_at: now },
      // Another claim may have won between the checks above and this transaction.
      (row) =>
        row.owner_id === null && row.deleted_at === null && row.claim_token_hash === site.claim_token_hash,
    );
    if (won) await recordAudit(trx, { accountId: account.id, action: 'site.claim', target: slug, at: now });
    return won;
  });
  if (!claimed) throw invalid('This site has already been claimed');
  await deps.changes.publish({ kind: 'site', slug });
  await deps.events?.emit(account.id, {
    type: 'site.claimed',
    slug,
    data: { slug, siteUrl: siteUrlOf(deps.config, slug) },
  });
  return {
    slug,
    siteUrl: siteUrlOf(deps.config, slug),
    owner: account.email,
    message: 'The site is yours: it no longer expires and appears in your site list.',
  };
}

/** PATCH .../metadata: fields present change, `null` clears. */
export async function updateMetadata(
  deps: PublishDeps,
  account: AccountRow,
  slug: string,
  body: unknown,
): Promise<void> {
  const site = await ownedSite(deps, account, slug);
  const versionId = await shownVersionId(deps, site);
  const files = versionId ? await versionFiles(deps.db.kysely, versionId) : [];
  const patch = validateMetadataPatch(
    body,
    files.map((f) => ({ path: f.path, contentType: f.content_type })),
  );
  const now = deps.clock.now();
  const row: Partial<SiteRow> = { updated_at: now };
  if (patch.title !== undefined) row.title = patch.title;
  if (patch.description !== undefined) row.description = patch.description;
  if (patch.ogImagePath !== undefined) row.og_image_path = patch.ogImagePath;
  if (patch.password !== undefined)
    row.password_hash = patch.password === null ? null : await hashPassword(patch.password);
  if (patch.ttlSeconds !== undefined)
    row.expires_at = patch.ttlSeconds === null ? null : now + patch.ttlSeconds * 1000;
  if (patch.analytics !== undefined) row.analytics_off = patch.analytics ? 0 : 1;
  await deps.db.transaction(async (trx) => {
    await updateSiteRow(trx, slug, row);
    // Which fields changed, never their values (a password above all).
    const fields = Object.entries(patch)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => (v === null ? `${k}:cleared` : k));
    await recordAudit(trx, {
      accountId: account.id,
      action: 'site.update',
      target: slug,
      details: { fields },
      at: now,
    });
  });
  await deps.changes.publish({ kind: 'site', slug });
}

/** GET .../versions: finalized versions, newest first. */
export async function listVersions(deps: PublishDeps, account: AccountRow, slug: string): Promise<Version[]> {
  const site = await ownedSite(deps, account, slug);
  const versions = await finalizedVersions(deps.db.kysely, slug);
  const aliasesOf = new Map<string, string[]>();
  for (const alias of await siteAliases(deps.db.kysely, slug)) {
    const names = aliasesOf.get(alias.version_id);
    if (names === undefined) aliasesOf.set(alias.version_id, [alias.name]);
    else names.push(alias.name);
  }
  return versions.map((v) => ({
    versionId: v.id,
    previewUrl: versionPreviewUrl(deps.config, slug, v.id),
    aliases: aliasesOf.get(v.id) ?? [],
    createdAt: iso(v.created_at)!,
    finalizedAt: iso(v.finalized_at),
    fileCount: v.file_count,
    totalSize: v.total_size,
    current: v.id === site.current_version_id,
  }));
}

/**
 * POST .../versions/:versionId/restore: an earlier finalized version becomes current. Also how a preview
 * (finalized with `live: false`) is promoted, even one of a site that was never live.
 */
export async function restoreVersion(
  deps: PublishDeps,
  account: AccountRow,
  slug: string,
  versionId: string,
): Promise<Restored> {
  const site = await ownedSite(deps, account, slug);
  const version = await findVersion(deps.db.kysely, versionId);
  if (!version || version.site_slug !== slug || version.status !== 'finalized') {
    throw notFound(`Version ${versionId} of site "${slug}" not found`);
  }
  const now = deps.clock.now();
  if (site.current_version_id !== versionId) {
    const current = site.current_version_id
      ? await findVersion(deps.db.kysely, site.current_version_id)
      : undefined;
    await checkStorage(deps, account, version.total_size, current?.total_size ?? 0);
    await deps.db.transaction(async (trx) => {
      await changeSite(trx, slug, { current_version_id: versionId, updated_at: now });
      await recordAudit(trx, {
        accountId: account.id,
        action: 'version.restore',
        target: slug,
        details: { versionId, previous: site.current_version_id },
        at: now,
      });
    });
    await deps.changes.publish({ kind: 'site', slug });
  }
  return {
    slug,
    siteUrl: siteUrlOf(deps.config, slug),
    versionId,
    status: siteStatus({ ...site, current_version_id: versionId }, now),
  };
}
