// Sites: POST/PUT/GET/DELETE /api/v1/publish[/:slug], finalize, duplicate, claim, metadata,
// GET /api/v1/publishes and versions (spec "Sites", CONTRACT "Versions").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { unauthorized } from '../core/errors.js';
import {
  createSite,
  finalizeSite,
  type PublishDeps,
  type PublishResult,
  updateSite,
} from '../core/publish.js';
import {
  claimSite,
  deleteSite,
  duplicateSite,
  listSites,
  listVersions,
  MAX_LIST_LIMIT,
  restoreVersion,
  siteDetails,
  updateMetadata,
} from '../core/sites.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, NullableString, SECURITY } from './schemas.js';

const SlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) });

const ManifestEntry = Type.Object({
  path: Type.String({ description: 'relative path, no leading /, no .. segment, at most 500 characters' }),
  size: Type.Number({ description: 'bytes, positive' }),
  contentType: Type.String({ description: 'MIME type' }),
  hash: Type.Optional(
    Type.Union([
      Type.String({ description: 'SHA-256, 64 lowercase hex; enables deduplication' }),
      Type.Null(),
    ]),
  ),
});

const PublishBody = Type.Object({
  files: Type.Array(ManifestEntry, { description: '1 to 1000 file entries' }),
  viewer: Type.Optional(
    Type.Object({
      title: Type.Optional(NullableString),
      description: Type.Optional(NullableString),
      ogImagePath: Type.Optional(NullableString),
    }),
  ),
  baseVersionId: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'live version this publish is based on; 409 if it moved',
    }),
  ),
});

const UploadPlan = Type.Object({
  versionId: Type.String(),
  uploads: Type.Array(
    Type.Object({
      path: Type.String(),
      method: Type.Literal('PUT'),
      url: Type.String(),
      headers: Type.Object({ 'Content-Type': Type.String() }),
    }),
  ),
  skipped: Type.Array(Type.Object({ path: Type.String(), reason: Type.Literal('hash_match') })),
  finalizeUrl: Type.String(),
  expiresInSeconds: Type.Number(),
});

const PublishReply = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  upload: UploadPlan,
  claimToken: Type.Optional(Type.String()),
  claimUrl: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String()),
  anonymous: Type.Optional(Type.Literal(true)),
  warning: Type.Optional(Type.String()),
});

const FileEntry = Type.Object({
  path: Type.String(),
  size: Type.Number(),
  contentType: Type.String(),
  hash: NullableString,
});

const Status = Type.Union([Type.Literal('active'), Type.Literal('pending'), Type.Literal('expired')]);

const SiteDetailsReply = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  status: Status,
  versionId: NullableString,
  title: NullableString,
  description: NullableString,
  ogImagePath: NullableString,
  hasPassword: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  expiresAt: NullableString,
  files: Type.Array(FileEntry),
});

const SiteListReply = Type.Object({
  sites: Type.Array(
    Type.Object({
      slug: Type.String(),
      siteUrl: Type.String(),
      status: Status,
      title: NullableString,
      fileCount: Type.Number(),
      totalSize: Type.Number(),
      createdAt: Type.String(),
      updatedAt: Type.String(),
      expiresAt: NullableString,
    }),
  ),
  total: Type.Number(),
  nextCursor: NullableString,
});

const VersionsReply = Type.Object({
  versions: Type.Array(
    Type.Object({
      versionId: Type.String(),
      createdAt: Type.String(),
      finalizedAt: NullableString,
      fileCount: Type.Number(),
      totalSize: Type.Number(),
      current: Type.Boolean(),
    }),
  ),
});

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };

/** Spec response shape: the anonymous fields sit at the top level. */
function publishReply(r: PublishResult) {
  if (!r.anonymous) return { slug: r.slug, siteUrl: r.siteUrl, upload: r.upload };
  return {
    slug: r.slug,
    siteUrl: r.siteUrl,
    upload: r.upload,
    claimToken: r.anonymous.claimToken,
    claimUrl: r.anonymous.claimUrl,
    expiresAt: r.anonymous.expiresAt,
    anonymous: true as const,
    warning:
      'Anonymous site: it expires in 24 hours. Store the claimToken now (it is shown once) and claim the site into an account to keep it.',
  };
}

/** A sent but invalid key is an error, not an anonymous request. */
function optionalAccount(req: FastifyRequest): AccountRow | null {
  if (req.headers.authorization !== undefined && !req.account) throw unauthorized();
  return req.account;
}

export function siteRoutes(deps: PublishDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/v1/publish',
      {
        schema: {
          tags: ['sites'],
          summary: 'Create a site (anonymous without a key): returns upload addresses',
          body: PublishBody,
          response: { 201: PublishReply, ...errors },
        },
      },
      async (req, reply) => {
        const r = await createSite(deps, optionalAccount(req), req.body);
        return reply.code(201).send(publishReply(r));
      },
    );

    app.put(
      '/api/v1/publish/:slug',
      {
        schema: {
          tags: ['sites'],
          summary: 'Update a site with a complete new manifest; unchanged hashes are skipped',
          security: SECURITY,
          params: SlugParams,
          body: PublishBody,
          response: { 200: PublishReply, ...errors },
        },
      },
      async (req) => publishReply(await updateSite(deps, requireAccount(req), req.params.slug, req.body)),
    );

    app.post(
      '/api/v1/publish/:slug/finalize',
      {
        schema: {
          tags: ['sites'],
          summary: 'Make the pending version live (owner key needed for owned sites)',
          params: SlugParams,
          body: Type.Object({ versionId: Type.String({ maxLength: 100 }) }),
          response: {
            200: Type.Object({
              slug: Type.String(),
              siteUrl: Type.String(),
              versionId: Type.String(),
              status: Type.Literal('active'),
              warnings: Type.Array(Type.String()),
            }),
            ...errors,
          },
        },
      },
      async (req) => finalizeSite(deps, optionalAccount(req), req.params.slug, req.body.versionId),
    );

    app.get(
      '/api/v1/publish/:slug',
      {
        schema: {
          tags: ['sites'],
          summary: 'Site details with files',
          security: SECURITY,
          params: SlugParams,
          response: { 200: SiteDetailsReply, ...errors },
        },
      },
      async (req) => siteDetails(deps, requireAccount(req), req.params.slug),
    );

    app.get(
      '/api/v1/publishes',
      {
        schema: {
          tags: ['sites'],
          summary: 'Your sites, newest first (optional ?limit=&cursor= paging)',
          security: SECURITY,
          querystring: Type.Object({
            limit: Type.Optional(
              Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: `1 to ${MAX_LIST_LIMIT}` }),
            ),
            cursor: Type.Optional(Type.String({ maxLength: 200 })),
          }),
          response: { 200: SiteListReply, ...errors },
        },
      },
      async (req) => {
        const account = requireAccount(req);
        const limit =
          req.query.limit === undefined ? undefined : Math.min(Number(req.query.limit), MAX_LIST_LIMIT);
        return listSites(deps, account, { limit, cursor: req.query.cursor });
      },
    );

    app.delete(
      '/api/v1/publish/:slug',
      {
        schema: {
          tags: ['sites'],
          summary: 'Delete a site permanently (its slug is retired)',
          security: SECURITY,
          params: SlugParams,
          response: { 200: Type.Object({ slug: Type.String(), deleted: Type.Literal(true) }), ...errors },
        },
      },
      async (req) => {
        await deleteSite(deps, requireAccount(req), req.params.slug);
        return { slug: req.params.slug, deleted: true as const };
      },
    );

    app.post(
      '/api/v1/publish/:slug/duplicate',
      {
        schema: {
          tags: ['sites'],
          summary: 'Copy a site server-side (files are shared, not re-uploaded)',
          security: SECURITY,
          params: SlugParams,
          response: {
            201: Type.Object({
              slug: Type.String(),
              siteUrl: Type.String(),
              versionId: Type.String(),
              copiedFrom: Type.String(),
              status: Type.Literal('active'),
            }),
            ...errors,
          },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await duplicateSite(deps, requireAccount(req), req.params.slug)),
    );

    app.post(
      '/api/v1/publish/:slug/claim',
      {
        schema: {
          tags: ['sites'],
          summary: 'Claim an anonymous site into your account',
          security: SECURITY,
          params: SlugParams,
          body: Type.Object({ claimToken: Type.String({ maxLength: 200 }) }),
          response: {
            200: Type.Object({
              slug: Type.String(),
              siteUrl: Type.String(),
              owner: Type.String(),
              message: Type.String(),
            }),
            ...errors,
          },
        },
      },
      async (req) => claimSite(deps, requireAccount(req), req.params.slug, req.body.claimToken),
    );

    app.patch(
      '/api/v1/publish/:slug/metadata',
      {
        schema: {
          tags: ['sites'],
          summary: 'Change title, description, ogImagePath, password or ttlSeconds (null clears)',
          security: SECURITY,
          params: SlugParams,
          body: Type.Object({
            title: Type.Optional(NullableString),
            description: Type.Optional(NullableString),
            ogImagePath: Type.Optional(NullableString),
            password: Type.Optional(NullableString),
            ttlSeconds: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
          }),
          response: { 200: Type.Object({ slug: Type.String(), updated: Type.Literal(true) }), ...errors },
        },
      },
      async (req) => {
        await updateMetadata(deps, requireAccount(req), req.params.slug, req.body);
        return { slug: req.params.slug, updated: true as const };
      },
    );

    app.get(
      '/api/v1/publish/:slug/versions',
      {
        schema: {
          tags: ['sites'],
          summary: 'Finalized versions, newest first',
          security: SECURITY,
          params: SlugParams,
          response: { 200: VersionsReply, ...errors },
        },
      },
      async (req) => ({ versions: await listVersions(deps, requireAccount(req), req.params.slug) }),
    );

    app.post(
      '/api/v1/publish/:slug/versions/:versionId/restore',
      {
        schema: {
          tags: ['sites'],
          summary: 'Make an earlier finalized version current',
          security: SECURITY,
          params: Type.Object({
            slug: Type.String({ maxLength: 63 }),
            versionId: Type.String({ maxLength: 100 }),
          }),
          response: {
            200: Type.Object({
              slug: Type.String(),
              siteUrl: Type.String(),
              versionId: Type.String(),
              status: Status,
            }),
            ...errors,
          },
        },
      },
      async (req) => restoreVersion(deps, requireAccount(req), req.params.slug, req.params.versionId),
    );
  };
}
