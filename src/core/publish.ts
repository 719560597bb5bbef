// The publish lifecycle (spec "Sites", CONTRACT "Uploads", "Versions", "Previews and aliases"): a manifest
// creates a pending version with one-time upload addresses; finalize makes it current in one transaction,
// or with `live: false` finalizes it as a preview only (served at its own preview host).

import type { FinalizeReply, UploadEntry, UploadPlan } from '../api/sites.js';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import type { ChangeBus } from '../shared/events.js';
import { versionLabel } from '../shared/preview-names.js';
import {
  checkServeFiles,
  HEADERS_FILE,
  oversizedServeFileWarning,
  REDIRECTS_FILE,
  SERVE_FILE_MAX_BYTES,
} from '../shared/rules/serve-files.js';
import type { BlobStore } from '../store/blob/types.js';
import { type Db, isUniqueViolation } from '../store/db/db.js';
import { type AccountRow, accountUsage } from '../store/db/tables/account.js';
import {
  changeSite,
  findLiveSite,
  insertSite,
  type SiteRow,
  updateSite as updateSiteRow,
} from '../store/db/tables/site.js';
import {
  abandonPendingVersions,
  findVersion,
  insertVersion,
  markVersionFinalized,
  ownerStoredHashes,
  pendingVersionOf,
  type VersionFileRow,
  type VersionRow,
  versionFiles,
} from '../store/db/tables/version.js';
import { aliasHost, checkAliasName, pointAlias } from './aliases.js';
import { recordAudit } from './audit.js';
import { ApiError, invalid, notFound, unauthorized } from './errors.js';
import { formatBytes } from './format.js';
import { isHandle } from './handle.js';
import { labelUrl, previewUrl } from './hosts.js';
import {
  MAX_MANIFEST_FILES,
  MAX_PATH_CHARS,
  type ManifestFile,
  totalSize,
  validateManifest,
} from './manifest.js';
import { type ViewerMetadata, validateViewer } from './metadata.js';
import { type PlanLimits, planLimits } from './plans.js';
import { newId, randomHex, sha256Hex } from './secrets.js';
import { generateSlug } from './slug.js';
import { UPLOAD_URL_TTL_S, uploadUrl } from './upload-token.js';
import type { WebhookEvents } from './webhooks.js';

export const ANONYMOUS_TTL_MS = 24 * 3_600_000;
/** A drawn slug that is taken (a site, a retired slug or a handle) is drawn again, this many times at most. */
export const SLUG_ATTEMPTS = 8;

export interface PublishDeps {
  db: Db;
  blobs: BlobStore;
  clock: Clock;
  config: Pick<Config, 'baseUrl' | 'scheme' | 'siteDomain' | 'siteHost' | 'planOverrides'>;
  uploadKey: Buffer;
  changes: ChangeBus;
  /**
   * Checks that run at finalize after the upload check and before the version goes live (the secret
   * scan plugs in here). Throwing an ApiError refuses the finalize and leaves the site as it was.
   */
  finalizeChecks?: FinalizeCheck[];
  /** Reports site events to the owner's webhooks (never throws, never waits on a receiver). */
  events?: WebhookEvents;
}

export type FinalizeCheck = (input: {
  slug: string;
  versionId: string;
  files: VersionFileRow[];
}) => Promise<void>;

export interface PublishResult {
  slug: string;
  siteUrl: string;
  upload: UploadPlan;
  /** Anonymous creates only (shown once). */
  anonymous?: { claimToken: string; claimUrl: string; expiresAt: string };
}

export const siteUrlOf = (config: PublishDeps['config'], slug: string) => labelUrl(config, slug);

/** The permanent URL of a version: its preview host `<slug>--<label>` (CONTRACT "Previews and aliases"). */
export const versionPreviewUrl = (config: PublishDeps['config'], slug: string, versionId: string) =>
  previewUrl(config, slug, versionLabel(versionId));

export const claimUrlOf = (config: PublishDeps['config'], slug: string, token: string) =>
  `${config.baseUrl}/claim?slug=${encodeURIComponent(slug)}&token=${encodeURIComponent(token)}`;

export const hashClaimToken = (token: string) => sha256Hex(token);

export function limitsFor(deps: PublishDeps, account: AccountRow | null): PlanLimits {
  return planLimits(account?.plan ?? 'free', deps.config.planOverrides);
}

function validatedManifest(deps: PublishDeps, account: AccountRow | null, files: unknown): ManifestFile[] {
  const limits = limitsFor(deps, account);
  return validateManifest(files, {
    maxFiles: MAX_MANIFEST_FILES,
    maxPathChars: MAX_PATH_CHARS,
    maxFileSizeBytes: limits.maxFileSizeBytes,
  });
}

export function storageExceeded(limitBytes: number, wouldUse: number): ApiError {
  return new ApiError(
    'STORAGE_EXCEEDED',
    `This publish would use ${formatBytes(wouldUse)} (${wouldUse} bytes) of storage; the plan allows ${formatBytes(limitBytes)} (${limitBytes} bytes).`,
    { hint: 'Delete sites you no longer need or upgrade to Hobby.' },
  );
}

/** Storage after replacing `replacedBytes` (this site's current version, on update) with `addedBytes`. */
export async function checkStorage(
  deps: PublishDeps,
  account: AccountRow | null,
  addedBytes: number,
  replacedBytes: number,
): Promise<void> {
  const limit = limitsFor(deps, account).maxStorageBytes;
  const used = account ? (await accountUsage(deps.db.kysely, account.id)).storageBytes : 0;
  const wouldUse = used - replacedBytes + addedBytes;
  if (wouldUse > limit) throw storageExceeded(limit, wouldUse);
}

export async function checkSiteLimit(deps: PublishDeps, account: AccountRow): Promise<void> {
  const max = limitsFor(deps, account).maxSites;
  if (max === null) return;
  const { sites: used } = await accountUsage(deps.db.kysely, account.id);
  if (used >= max) {
    throw new ApiError('SITE_LIMIT_EXCEEDED', `The plan allows ${max} sites and this account has ${used}.`, {
      hint: 'Delete a site or upgrade to Hobby for unlimited sites.',
    });
  }
}

/** Builds the version rows and the upload plan; `reusable` hashes are skipped (no upload needed). */
function planVersion(
  deps: PublishDeps,
  slug: string,
  versionId: string,
  files: ManifestFile[],
  reusable: Set<string>,
  now: number,
): { rows: VersionFileRow[]; plan: UploadPlan } {
  const expiresAtS = Math.floor(now / 1000) + UPLOAD_URL_TTL_S;
  const rows: VersionFileRow[] = [];
  const uploads: UploadEntry[] = [];
  const skipped: UploadPlan['skipped'] = [];
  for (const f of files) {
    const skip = f.hash !== undefined && reusable.has(f.hash);
    rows.push({
      version_id: versionId,
      path: f.path,
      size: f.size,
      content_type: f.contentType,
      expected_hash: f.hash ?? null,
      hash: skip ? (f.hash ?? null) : null,
    });
    if (skip) skipped.push({ path: f.path, reason: 'hash_match' });
    else {
      const target = {
        versionId,
        path: f.path,
        contentType: f.contentType,
        expiresAtS,
        ...(f.hash !== undefined && { expected: { size: f.size, hash: f.hash } }),
      };
      uploads.push({
        path: f.path,
        method: 'PUT',
        url: uploadUrl(deps.config.baseUrl, deps.uploadKey, target),
        headers: { 'Content-Type': f.contentType },
      });
    }
  }
  return {
    rows,
    plan: {
      versionId,
      uploads,
      skipped,
      finalizeUrl: `${deps.config.baseUrl}/api/v1/publish/${slug}/finalize`,
      expiresInSeconds: UPLOAD_URL_TTL_S,
    },
  };
}

export interface PublishBody {
  files: unknown;
  viewer?: unknown;
  baseVersionId?: string | null;
}

/** POST /api/v1/publish: a new site with a pending version. `account` null = anonymous. */
export async function createSite(
  deps: PublishDeps,
  account: AccountRow | null,
  body: PublishBody,
): Promise<PublishResult> {
  const files = validatedManifest(deps, account, body.files);
  const viewer: ViewerMetadata = validateViewer(body.viewer, files);
  if (account) await checkSiteLimit(deps, account);
  await checkStorage(deps, account, totalSize(files), 0);

  const now = deps.clock.now();
  const versionId = newId('ver');
  const claimToken = account ? undefined : `clm_${randomHex(24)}`;
  const expiresAt = account ? null : now + ANONYMOUS_TTL_MS;

  for (let attempt = 1; ; attempt++) {
    const slug = generateSlug();
    // Slugs and handles share the host namespace (core/handle.ts).
    if (attempt < SLUG_ATTEMPTS && (await isHandle(deps.db, slug))) continue;
    // Spec: skipped is empty on create; every file gets an upload address.
    const { rows, plan } = planVersion(deps, slug, versionId, files, new Set(), now);
    const site: SiteRow = {
      slug,
      owner_id: account?.id ?? null,
      current_version_id: null,
      title: viewer.title ?? null,
      description: viewer.description ?? null,
      og_image_path: viewer.ogImagePath ?? null,
      password_hash: null,
      expires_at: expiresAt,
      claim_token_hash: claimToken ? hashClaimToken(claimToken) : null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      takedown_at: null,
      takedown_reason: null,
      analytics_off: 0,
    };
    try {
      await deps.db.transaction(async (trx) => {
        await insertSite(trx, site, 0);
        await insertVersion(trx, versionRow(versionId, slug, files, now), rows);
        // An anonymous site belongs to no account yet: its claim is recorded (site.claim).
        if (account) {
          await recordAudit(trx, {
            accountId: account.id,
            action: 'site.create',
            target: slug,
            details: { versionId, files: files.length },
            at: now,
          });
        }
      });
    } catch (err) {
      // A slug collision (a live or retired slug) draws again.
      if (isUniqueViolation(err) && attempt < SLUG_ATTEMPTS) continue;
      throw err;
    }
    const result: PublishResult = { slug, siteUrl: siteUrlOf(deps.config, slug), upload: plan };
    if (claimToken && expiresAt !== null) {
      result.anonymous = {
        claimToken,
        claimUrl: claimUrlOf(deps.config, slug, claimToken),
        expiresAt: new Date(expiresAt).toISOString(),
      };
    }
    return result;
  }
}

function versionRow(id: string, slug: string, files: ManifestFile[], now: number) {
  return {
    id,
    site_slug: slug,
    status: 'pending' as const,
    created_at: now,
    finalized_at: null,
    upload_expires_at: now + UPLOAD_URL_TTL_S * 1000,
    file_count: files.length,
    total_size: totalSize(files),
  };
}

/** The caller's live site, or 404 as if it did not exist (CONTRACT "Identity, ownership"). */
export async function ownedSite(
  deps: Pick<PublishDeps, 'db'>,
  account: AccountRow,
  slug: string,
): Promise<SiteRow> {
  const site = await findLiveSite(deps.db.kysely, slug);
  if (!site || site.owner_id !== account.id) throw notFound(`Site "${slug}" not found`);
  return site;
}

/** PUT /api/v1/publish/:slug: a new pending version of an owned site, skipping known bytes. */
export async function updateSite(
  deps: PublishDeps,
  account: AccountRow,
  slug: string,
  body: PublishBody,
): Promise<PublishResult> {
  const site = await ownedSite(deps, account, slug);
  const files = validatedManifest(deps, account, body.files);
  const viewer = body.viewer === undefined ? undefined : validateViewer(body.viewer, files);
  if (body.baseVersionId !== undefined && body.baseVersionId !== site.current_version_id) {
    throw new ApiError(
      'VERSION_CONFLICT',
      `The live version is ${site.current_version_id ?? 'none'}, not ${body.baseVersionId}; someone published in between.`,
      {
        extra: { currentVersionId: site.current_version_id },
        hint: 'Fetch the site, rebase your change and retry.',
      },
    );
  }

  const current = site.current_version_id
    ? await findVersion(deps.db.kysely, site.current_version_id)
    : undefined;
  await checkStorage(deps, account, totalSize(files), current?.total_size ?? 0);

  // Dedup: a hash equal to the previous version's hash for that path (the spec's hash_match), and
  // beyond the spec any hash whose bytes another version of the same account already holds.
  const previous = current ? await versionFiles(deps.db.kysely, current.id) : [];
  const previousHash = new Map(previous.map((f) => [f.path, f.hash]));
  const hashes = [...new Set(files.flatMap((f) => (f.hash ? [f.hash] : [])))];
  const now = deps.clock.now();
  const versionId = newId('ver');

  return deps.db.transaction(async (trx) => {
    // The site row first, as every transaction that changes a site and its versions does (finalize,
    // delete, the sweeper): one lock order, so two of them never deadlock on PostgreSQL.
    await updateSiteRow(trx, slug, {
      updated_at: now,
      ...(viewer
        ? {
            title: viewer.title ?? site.title,
            description: viewer.description ?? site.description,
            og_image_path: viewer.ogImagePath ?? site.og_image_path,
          }
        : {}),
    });
    // A hash the live version has at the same path is referenced by that version's rows, which stay as
    // long as the site does; only the others are looked up among the owner's blobs (a one-file republish
    // of 1000 files asks about one hash, not 1000 that every earlier version of the site also holds).
    const reusable = new Set<string>();
    for (const f of files) if (f.hash && previousHash.get(f.path) === f.hash) reusable.add(f.hash);
    const others = hashes.filter((h) => !reusable.has(h));
    // Inside the transaction so the garbage collector cannot drop a blob between check and reference.
    for (const h of await ownerStoredHashes(trx, account.id, others)) reusable.add(h);
    const { rows, plan } = planVersion(deps, slug, versionId, files, reusable, now);
    await abandonPendingVersions(trx, slug);
    await insertVersion(trx, versionRow(versionId, slug, files, now), rows);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'version.create',
      target: slug,
      details: { versionId, files: files.length },
      at: now,
    });
    return { slug, siteUrl: siteUrlOf(deps.config, slug), upload: plan };
  });
}

/** What a finalize does beyond making the version current (CONTRACT "Previews and aliases"). */
export interface FinalizeOptions {
  /**
   * false: finalize and scan the version without changing the live one (a preview, served at its own
   * host; a site whose first version is finalized so stays `pending` at its slug host). Default true.
   */
  live?: boolean;
  /** An alias of the site to point at the version (created, or moved from another version). */
  alias?: string;
}

/** POST /api/v1/publish/:slug/finalize. */
/** Why an anonymous site gets no alias (finalize, and an anonymous archive deploy before it is read). */
export const ANONYMOUS_ALIAS = 'Aliases belong to owned sites: claim this site first, then set the alias.';

export async function finalizeSite(
  deps: PublishDeps,
  account: AccountRow | null,
  slug: string,
  versionId: unknown,
  options: FinalizeOptions = {},
): Promise<FinalizeReply> {
  const site = await findLiveSite(deps.db.kysely, slug);
  if (!site) throw notFound(`Site "${slug}" not found`);
  if (site.owner_id !== null && site.owner_id !== account?.id) {
    throw unauthorized('Finalizing this site needs its owner\u2019s API key.');
  }
  if (typeof versionId !== 'string' || versionId === '') {
    throw invalid('versionId is required (the upload.versionId of the publish response).');
  }
  const live = options.live ?? true;
  if (typeof live !== 'boolean') throw invalid('live must be true or false.');
  const { alias } = options;
  if (alias !== undefined) {
    checkAliasName(slug, alias);
    // Aliases are managed by the owner (core/aliases.ts): an anonymous site gets them once claimed.
    if (site.owner_id === null) {
      throw invalid(ANONYMOUS_ALIAS);
    }
  }
  const now = deps.clock.now();
  const result = (warnings: string[], isLive: boolean): FinalizeReply => ({
    slug,
    siteUrl: siteUrlOf(deps.config, slug),
    versionId,
    // The site's status: a preview of a site that has never been live leaves it pending.
    status: isLive || site.current_version_id !== null ? 'active' : 'pending',
    warnings,
    previewUrl: versionPreviewUrl(deps.config, slug, versionId),
    live: isLive,
  });
  // Finalizing the live version again is harmless (and points the alias, if one is given).
  if (versionId === site.current_version_id) {
    await setAlias(deps, site.owner_id, slug, alias, versionId, now);
    return result([], true);
  }
  if (site.expires_at !== null && site.expires_at <= now) {
    // An owned site comes back when its expiry is extended or removed (decisions.md, issue 21); an
    // anonymous one cannot be updated at all.
    if (site.owner_id === null) {
      throw invalid(`The site ${slug} has expired and can no longer be published; publish a new site.`);
    }
    throw invalid(
      `The site ${slug} has expired: extend or remove its expiry, then publish again (nothing was published).`,
      {
        hint: `PATCH /api/v1/publish/${slug}/metadata with {"ttlSeconds": N} or {"ttlSeconds": null}, then finalize again.`,
      },
    );
  }

  const pending = await pendingVersionOf(deps.db.kysely, slug);
  if (!pending || pending.id !== versionId) {
    // A preview finalized before (a retried request) is finalized already: harmless too.
    if (!live && (await isFinalizedVersionOf(deps, slug, versionId))) {
      await setAlias(deps, site.owner_id, slug, alias, versionId, now);
      return result([], false);
    }
    throw invalid(`versionId ${versionId} is not the pending version of this site.`, {
      hint: pending
        ? 'Use the versionId of the latest publish or update response.'
        : 'Publish or update first.',
    });
  }
  // One read of the version's files serves the upload check, the finalize checks and the warnings.
  const files = await versionFiles(deps.db.kysely, versionId);
  const missing = files.filter((f) => f.hash === null).map((f) => f.path);
  if (missing.length > 0) {
    const shown = missing.slice(0, 20).join(', ');
    throw invalid(
      `${missing.length} file(s) not uploaded yet: ${shown}${missing.length > 20 ? ', ...' : ''}`,
      { extra: { missing } },
    );
  }
  // Pending versions do not count as storage, so the plan's limit is checked again when this one goes
  // live (several publishes that each fit at create must not all go live past the limit). A preview
  // counts like history (CONTRACT "Account"): checked when it is promoted (restore).
  if (live && account && site.owner_id === account.id) {
    const current = site.current_version_id
      ? await findVersion(deps.db.kysely, site.current_version_id)
      : undefined;
    await checkStorage(deps, account, pending.total_size, current?.total_size ?? 0);
  }
  try {
    for (const check of deps.finalizeChecks ?? []) await check({ slug, versionId, files });
  } catch (err) {
    if (err instanceof ApiError && err.code === 'SECRET_DETECTED') {
      // The rule and the place of each finding, never the value (the refusal itself carries no value either).
      const detected = (err.extra?.detectedSecrets ?? []) as Array<{
        path: string;
        type: string;
        line: number;
      }>;
      await deps.events?.emit(site.owner_id, {
        type: 'site.publish_refused',
        slug,
        data: {
          slug,
          versionId,
          detectedSecrets: detected.map((d) => ({ path: d.path, type: d.type, line: d.line })),
        },
      });
    }
    throw err;
  }
  const warnings = await serveConfigWarnings(deps.blobs, files);

  await deps.db.transaction(async (trx) => {
    // The site row first (one lock order with update, delete and the sweeper; see updateSite above).
    if (live) {
      // An og:image that the new version no longer has would point at a 404: clear it.
      const ogImageGone = site.og_image_path !== null && !files.some((f) => f.path === site.og_image_path);
      await changeSite(trx, slug, {
        current_version_id: versionId,
        updated_at: now,
        ...(ogImageGone ? { og_image_path: null } : {}),
      });
    } else {
      await updateSiteRow(trx, slug, { updated_at: now });
    }
    // Throwing rolls the site change back too.
    if (!(await markVersionFinalized(trx, versionId, now)))
      throw invalid(`versionId ${versionId} is no longer pending.`);
    if (alias !== undefined) await pointAlias(trx, slug, alias, versionId, now);
    if (site.owner_id !== null) {
      await recordAudit(trx, {
        accountId: site.owner_id,
        action: 'version.finalize',
        target: slug,
        details: { versionId, live, ...(alias !== undefined ? { alias } : {}) },
        at: now,
      });
    }
  });
  // A preview leaves the live host as it was: only its own host (which a node may have cached as unknown)
  // and the alias host change.
  if (live) await deps.changes.publish({ kind: 'site', slug });
  else
    await deps.changes.publish({ kind: 'host', host: aliasHost(deps.config, slug, versionLabel(versionId)) });
  if (alias !== undefined)
    await deps.changes.publish({ kind: 'host', host: aliasHost(deps.config, slug, alias) });
  await deps.events?.emit(site.owner_id, {
    type: 'site.published',
    slug,
    data: {
      slug,
      versionId,
      live,
      siteUrl: siteUrlOf(deps.config, slug),
      previewUrl: versionPreviewUrl(deps.config, slug, versionId),
    },
  });
  return result(warnings, live);
}

async function isFinalizedVersionOf(deps: PublishDeps, slug: string, versionId: string): Promise<boolean> {
  const version: VersionRow | undefined = await findVersion(deps.db.kysely, versionId);
  return version !== undefined && version.site_slug === slug && version.status === 'finalized';
}

/** Points `alias` (if given) at an already finalized version, outside a finalize's transaction. */
async function setAlias(
  deps: PublishDeps,
  ownerId: string | null,
  slug: string,
  alias: string | undefined,
  versionId: string,
  now: number,
): Promise<void> {
  if (alias === undefined) return;
  await deps.db.transaction(async (trx) => {
    await pointAlias(trx, slug, alias, versionId, now);
    if (ownerId !== null) {
      await recordAudit(trx, {
        accountId: ownerId,
        action: 'alias.set',
        target: slug,
        details: { name: alias, versionId },
        at: now,
      });
    }
  });
  await deps.changes.publish({ kind: 'host', host: aliasHost(deps.config, slug, alias) });
}

/** Warnings for bad lines of the version's root `_redirects` and `_headers` (the rules the site server applies). */
async function serveConfigWarnings(blobs: BlobStore, files: VersionFileRow[]): Promise<string[]> {
  const warnings: string[] = [];
  const texts: Array<{ path: string; text: string }> = [];
  for (const f of files) {
    if ((f.path !== REDIRECTS_FILE && f.path !== HEADERS_FILE) || f.hash === null) continue;
    // An oversized file is reported without reading it.
    if (f.size > SERVE_FILE_MAX_BYTES) warnings.push(oversizedServeFileWarning(f.path));
    else texts.push({ path: f.path, text: (await blobs.read(f.hash)).toString('utf8') });
  }
  return [...warnings, ...checkServeFiles(texts)];
}
