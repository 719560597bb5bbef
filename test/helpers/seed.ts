// Test helper: puts sites, versions and blobs in place exactly as a finalize would (rows, blob bytes,
// blob index, change event), so serving tests do not depend on the publish API.

import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { lookup } from 'mime-types';
import type { Stores } from '../../src/compose.js';
import { hashPassword } from '../../src/core/password.js';

export type SeedFile = string | Buffer | { body: string | Buffer; contentType: string };

export interface SeedSiteOptions {
  /** Default: a random valid slug. */
  slug?: string;
  files: Record<string, SeedFile>;
  title?: string | null;
  description?: string | null;
  ogImagePath?: string | null;
  password?: string | null;
  /** Epoch ms; past it the site answers 410. */
  expiresAt?: number | null;
  /** The only version stays pending: the site has no live version. */
  pending?: boolean;
}

export interface SeededSite {
  slug: string;
  versionId: string;
}

export const randomSlug = (): string => `site-${randomBytes(6).toString('hex')}`;

/** The Host header of a site of the test app. */
export const siteHost = (slug: string, port: number): string => `${slug}.localhost:${port}`;

function fileBody(file: SeedFile): { bytes: Buffer; contentType: string | null } {
  if (typeof file === 'string') return { bytes: Buffer.from(file), contentType: null };
  if (Buffer.isBuffer(file)) return { bytes: file, contentType: null };
  return { bytes: Buffer.from(file.body), contentType: file.contentType };
}

/** Inserts a site with one version (finalized unless `pending`) and publishes `{kind:'site'}`. */
export async function seedSite(ctx: Stores, options: SeedSiteOptions): Promise<SeededSite> {
  const slug = options.slug ?? randomSlug();
  const now = ctx.clock.now();
  await ctx.db.kysely
    .insertInto('sites')
    .values({
      slug,
      owner_id: null,
      current_version_id: null,
      title: options.title ?? null,
      description: options.description ?? null,
      og_image_path: options.ogImagePath ?? null,
      password_hash: options.password ? await hashPassword(options.password) : null,
      expires_at: options.expiresAt ?? null,
      claim_token_hash: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      analytics_off: 0,
    })
    .execute();
  const versionId = await seedVersion(ctx, slug, options.files, { pending: options.pending ?? false });
  return { slug, versionId };
}

/**
 * Adds a version to a site. Finalized (the default): it becomes current and the change event is
 * published. Pending: rows and blobs exist, nothing is live, no event (as after an upload).
 */
export async function seedVersion(
  ctx: Stores,
  slug: string,
  files: Record<string, SeedFile>,
  options: { pending?: boolean } = {},
): Promise<string> {
  const now = ctx.clock.now();
  const versionId = `ver_${randomBytes(12).toString('base64url')}`;
  const rows = [];
  let totalSize = 0;
  for (const [path, file] of Object.entries(files)) {
    const { bytes, contentType } = fileBody(file);
    const put = await ctx.blobs.put(Readable.from([bytes]), { expectedSize: bytes.length });
    await ctx.db.kysely
      .insertInto('blobs')
      .values({ hash: put.hash, size: bytes.length, created_at: now })
      .onConflict((oc) => oc.column('hash').doNothing())
      .execute();
    rows.push({
      version_id: versionId,
      path,
      size: bytes.length,
      content_type: contentType ?? (lookup(path) || 'application/octet-stream'),
      expected_hash: put.hash,
      hash: put.hash,
    });
    totalSize += bytes.length;
  }
  const pending = options.pending ?? false;
  await ctx.db.kysely
    .insertInto('versions')
    .values({
      id: versionId,
      site_slug: slug,
      status: pending ? 'pending' : 'finalized',
      created_at: now,
      finalized_at: pending ? null : now,
      upload_expires_at: now + 3_600_000,
      file_count: rows.length,
      total_size: totalSize,
    })
    .execute();
  for (let i = 0; i < rows.length; i += 100) {
    await ctx.db.kysely
      .insertInto('version_files')
      .values(rows.slice(i, i + 100))
      .execute();
  }
  if (!pending) await makeCurrent(ctx, slug, versionId);
  return versionId;
}

/** Adds a pending version (an update in progress): the live version keeps being served. */
export const addPendingVersion = (ctx: Stores, slug: string, files: Record<string, SeedFile>) =>
  seedVersion(ctx, slug, files, { pending: true });

/** Finalizes a pending version: it becomes current, and the change event is published. */
export async function finalizeVersion(ctx: Stores, slug: string, versionId: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('versions')
    .set({ status: 'finalized', finalized_at: ctx.clock.now() })
    .where('id', '=', versionId)
    .execute();
  await makeCurrent(ctx, slug, versionId);
}

async function makeCurrent(ctx: Stores, slug: string, versionId: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('sites')
    .set({ current_version_id: versionId, updated_at: ctx.clock.now() })
    .where('slug', '=', slug)
    .execute();
  ctx.changes.publish({ kind: 'site', slug });
}

/** Tombstones a site (as DELETE does) and publishes the change. */
export async function deleteSite(ctx: Stores, slug: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('sites')
    .set({ deleted_at: ctx.clock.now(), current_version_id: null })
    .where('slug', '=', slug)
    .execute();
  ctx.changes.publish({ kind: 'site', slug });
}

/** Sets (or with null removes) the site password and publishes the change. */
export async function setPassword(ctx: Stores, slug: string, password: string | null): Promise<void> {
  await ctx.db.kysely
    .updateTable('sites')
    .set({ password_hash: password === null ? null : await hashPassword(password) })
    .where('slug', '=', slug)
    .execute();
  ctx.changes.publish({ kind: 'site', slug });
}

/** Changes metadata columns (PATCH .../metadata) and publishes the change. */
export async function setMetadata(
  ctx: Stores,
  slug: string,
  fields: {
    title?: string | null;
    description?: string | null;
    ogImagePath?: string | null;
    expiresAt?: number | null;
  },
): Promise<void> {
  await ctx.db.kysely
    .updateTable('sites')
    .set({
      ...(fields.title !== undefined ? { title: fields.title } : {}),
      ...(fields.description !== undefined ? { description: fields.description } : {}),
      ...(fields.ogImagePath !== undefined ? { og_image_path: fields.ogImagePath } : {}),
      ...(fields.expiresAt !== undefined ? { expires_at: fields.expiresAt } : {}),
      updated_at: ctx.clock.now(),
    })
    .where('slug', '=', slug)
    .execute();
  ctx.changes.publish({ kind: 'site', slug });
}
