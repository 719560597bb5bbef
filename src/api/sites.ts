// Sites (spec "Sites", CONTRACT "Versions"): POST/PUT/GET/DELETE /api/v1/publish[/:slug], finalize,
// duplicate, claim, metadata, GET /api/v1/publishes and the versions of a site.

import { type Static, Type } from 'typebox';
import { MAX_MANIFEST_FILES, MAX_PATH_CHARS } from '../core/manifest.js';
import { MAX_LIST_LIMIT } from '../core/sites.js';
import {
  ERRORS,
  type ExampleContext,
  errorExample,
  NullableString,
  operation,
  SECURITY,
  Slug,
  SlugParams,
} from './common.js';
import {
  at,
  claimToken,
  hash,
  later,
  previousVersionId,
  previousVersionLabel,
  siteMissing,
  siteUrl,
  slug,
  unauthorized,
  versionId,
  versionLabel,
} from './examples.js';

export const ManifestEntry = Type.Object({
  path: Type.String({
    description: `relative path, no leading /, no .. segment, at most ${MAX_PATH_CHARS} characters`,
  }),
  size: Type.Number({ description: 'bytes, positive' }),
  contentType: Type.String({ description: 'MIME type' }),
  hash: Type.Optional(
    Type.Union([
      Type.String({ description: 'SHA-256, 64 lowercase hex; enables deduplication' }),
      Type.Null(),
    ]),
  ),
});
export type ManifestEntry = Static<typeof ManifestEntry>;

export const Viewer = Type.Object({
  title: Type.Optional(NullableString),
  description: Type.Optional(NullableString),
  ogImagePath: Type.Optional(NullableString),
});
export type Viewer = Static<typeof Viewer>;

export const PublishBody = Type.Object({
  files: Type.Array(ManifestEntry, { description: `1 to ${MAX_MANIFEST_FILES} file entries` }),
  viewer: Type.Optional(Viewer),
  baseVersionId: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'live version this publish is based on; 409 if it moved',
    }),
  ),
});
export type PublishBody = Static<typeof PublishBody>;

export const UploadEntry = Type.Object({
  path: Type.String(),
  method: Type.Literal('PUT'),
  url: Type.String(),
  headers: Type.Object({ 'Content-Type': Type.String() }),
});
export type UploadEntry = Static<typeof UploadEntry>;

export const UploadPlan = Type.Object({
  versionId: Type.String(),
  uploads: Type.Array(UploadEntry),
  skipped: Type.Array(Type.Object({ path: Type.String(), reason: Type.Literal('hash_match') })),
  finalizeUrl: Type.String(),
  expiresInSeconds: Type.Number(),
});
export type UploadPlan = Static<typeof UploadPlan>;

export const PublishReply = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  upload: UploadPlan,
  claimToken: Type.Optional(Type.String()),
  claimUrl: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String()),
  anonymous: Type.Optional(Type.Literal(true)),
  warning: Type.Optional(Type.String()),
});
export type PublishReply = Static<typeof PublishReply>;

/** An anonymous site's `warning`. */
export const ANONYMOUS_WARNING =
  'Anonymous site: it expires in 24 hours. Store the claimToken now (it is shown once) and claim the site into an account to keep it.';

export const FinalizeBody = Type.Object({
  versionId: Type.String({ maxLength: 100 }),
  live: Type.Optional(
    Type.Boolean({
      description:
        'default true; false finalizes and scans the version without making it live (a preview at previewUrl)',
    }),
  ),
  alias: Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'an alias of the site to point at this version (<slug>--<alias> host); owned sites only',
    }),
  ),
});
export type FinalizeBody = Static<typeof FinalizeBody>;

export const FinalizeReply = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  versionId: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('pending')], {
    description: "the site's: pending after a preview of a site that has never been live",
  }),
  /** Bad lines of `_redirects`/`_headers` (the lines are skipped, the publish goes on). */
  warnings: Type.Array(Type.String()),
  previewUrl: Type.String({ description: "the version's own permanent URL: <slug>--<label>.<site domain>" }),
  live: Type.Boolean({ description: 'whether this version is now the live one' }),
});
export type FinalizeReply = Static<typeof FinalizeReply>;

export const SiteStatus = Type.Union([
  Type.Literal('active'),
  Type.Literal('pending'),
  Type.Literal('expired'),
]);
export type SiteStatus = Static<typeof SiteStatus>;

export const SiteFile = Type.Object({
  path: Type.String(),
  size: Type.Number(),
  contentType: Type.String(),
  hash: NullableString,
});

export const SiteDetails = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  status: SiteStatus,
  versionId: NullableString,
  title: NullableString,
  description: NullableString,
  ogImagePath: NullableString,
  hasPassword: Type.Boolean(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  expiresAt: NullableString,
  takedown: Type.Union(
    [Type.Object({ reason: Type.String(), at: Type.String({ format: 'date-time' }) }), Type.Null()],
    {
      description:
        'set when the operator of this service took the site down: every address of it answers 451 and its ' +
        'files are kept; null otherwise (docs/admin.md)',
    },
  ),
  files: Type.Array(SiteFile),
});
export type SiteDetails = Static<typeof SiteDetails>;

export const SiteSummary = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  status: SiteStatus,
  title: NullableString,
  fileCount: Type.Number(),
  totalSize: Type.Number(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  expiresAt: NullableString,
});
export type SiteSummary = Static<typeof SiteSummary>;

export const SiteList = Type.Object({
  sites: Type.Array(SiteSummary),
  total: Type.Number(),
  nextCursor: NullableString,
});
export type SiteList = Static<typeof SiteList>;

export const Deleted = Type.Object({ slug: Type.String(), deleted: Type.Literal(true) });
export type Deleted = Static<typeof Deleted>;

export const Duplicated = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  versionId: Type.String(),
  copiedFrom: Type.String(),
  status: Type.Literal('active'),
});
export type Duplicated = Static<typeof Duplicated>;

export const ClaimBody = Type.Object({ claimToken: Type.String({ maxLength: 200 }) });
export const Claimed = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  owner: Type.String(),
  message: Type.String(),
});
export type Claimed = Static<typeof Claimed>;

export const MetadataBody = Type.Object({
  title: Type.Optional(NullableString),
  description: Type.Optional(NullableString),
  ogImagePath: Type.Optional(NullableString),
  password: Type.Optional(NullableString),
  ttlSeconds: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  analytics: Type.Optional(
    Type.Boolean({
      description:
        'Count visits of this site (default true; docs/analytics.md). false: answers of the site are no longer counted; counts already stored stay until retention.',
    }),
  ),
});
export type MetadataBody = Static<typeof MetadataBody>;
export const MetadataUpdated = Type.Object({ slug: Type.String(), updated: Type.Literal(true) });

export const Version = Type.Object({
  versionId: Type.String(),
  previewUrl: Type.String({ description: "the version's own permanent URL: <slug>--<label>.<site domain>" }),
  aliases: Type.Array(Type.String(), { description: 'names of the aliases pointing at this version' }),
  createdAt: Type.String(),
  finalizedAt: NullableString,
  fileCount: Type.Number(),
  totalSize: Type.Number(),
  current: Type.Boolean(),
});
export type Version = Static<typeof Version>;
export const Versions = Type.Object({ versions: Type.Array(Version) });

export const Restored = Type.Object({
  slug: Type.String(),
  siteUrl: Type.String(),
  versionId: Type.String(),
  status: SiteStatus,
});
export type Restored = Static<typeof Restored>;

const file = { path: 'index.html', size: 1024, contentType: 'text/html', hash };
const manifest = {
  files: [
    file,
    {
      path: 'logo.png',
      size: 4096,
      contentType: 'image/png',
      hash: '9f2c1a7e0b3d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6',
    },
  ],
};
const uploadPlan = (c: ExampleContext) => ({
  versionId,
  uploads: [
    {
      path: 'index.html',
      method: 'PUT',
      url: `${c.baseUrl}/api/v1/_upload/${versionId}%2Findex.html?token=DpDp6szx0uBw93W02rup-objuODgKh3t1xwsHiUac0s&ct=text%2Fhtml&exp=1795492520&size=1024&hash=${hash}`,
      headers: { 'Content-Type': 'text/html' },
    },
  ],
  skipped: [{ path: 'logo.png', reason: 'hash_match' }],
  finalizeUrl: `${c.baseUrl}/api/v1/publish/${slug}/finalize`,
  expiresInSeconds: 3600,
});

export const createSite = operation({
  method: 'POST',
  url: '/api/v1/publish',
  schema: {
    tags: ['sites'],
    summary: 'Create a site (anonymous without a key): returns upload addresses',
    body: PublishBody,
    response: { 201: PublishReply, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        request: { files: [file] },
        responses: {
          201: {
            slug,
            siteUrl: siteUrl(c),
            upload: { ...uploadPlan(c), skipped: [] },
            claimToken,
            claimUrl: `${c.baseUrl}/claim?slug=${slug}&token=${claimToken}`,
            expiresAt: later,
            anonymous: true,
            warning: ANONYMOUS_WARNING,
          },
        },
        error: errorExample(
          'INVALID_PATH',
          400,
          'files[0] ("../secret.txt"): path must not contain a ".." segment',
        ),
      }),
    },
  },
});

export const updateSite = operation({
  method: 'PUT',
  url: '/api/v1/publish/:slug',
  schema: {
    tags: ['sites'],
    summary: 'Update a site with a complete new manifest; unchanged hashes are skipped',
    security: SECURITY,
    params: SlugParams,
    body: PublishBody,
    response: { 200: PublishReply, ...ERRORS },
  },
  config: {
    deployToken: true,
    api: {
      examples: (c) => ({
        request: { ...manifest, baseVersionId: previousVersionId },
        responses: { 200: { slug, siteUrl: siteUrl(c), upload: uploadPlan(c) } },
        error: siteMissing,
      }),
    },
  },
});

export const finalizeSite = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/finalize',
  schema: {
    tags: ['sites'],
    summary:
      'Make the pending version live, or with live: false a preview only (owner key needed for owned sites)',
    params: SlugParams,
    body: FinalizeBody,
    response: { 200: FinalizeReply, ...ERRORS },
  },
  config: {
    deployToken: true,
    api: {
      examples: (c) => ({
        request: { versionId },
        responses: {
          200: {
            slug,
            siteUrl: siteUrl(c),
            versionId,
            status: 'active',
            warnings: [],
            previewUrl: siteUrl(c, `${slug}--${versionLabel}`),
            live: true,
          },
        },
        error: {
          ...errorExample(
            'SECRET_DETECTED',
            400,
            'Publishing stopped: 1 exposed secret found in 1 file (stripe_secret_key in app.js line 1). The site did not go live.',
            'Move the secrets into site variables and call their APIs through the site proxy (see remediation.steps).',
          ),
          detectedSecrets: [
            {
              path: 'app.js',
              type: 'stripe_secret_key',
              line: 1,
              suggestedVariableName: 'STRIPE_SECRET_KEY',
              suggestedProxyHosts: ['api.stripe.com'],
            },
          ],
          remediation: {
            suggestedVariableNames: ['STRIPE_SECRET_KEY'],
            suggestedProxyHosts: ['api.stripe.com'],
            steps: [
              'Ask the site owner for permission before changing anything; if they refuse, do not publish the site.',
              '…',
            ],
            proxyEnabled: true,
          },
        },
      }),
    },
  },
});

export const getSite = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug',
  schema: {
    tags: ['sites'],
    summary: 'Site details with files',
    security: SECURITY,
    params: SlugParams,
    response: { 200: SiteDetails, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          200: {
            slug,
            siteUrl: siteUrl(c),
            status: 'active',
            versionId,
            title: 'My portfolio',
            description: null,
            ogImagePath: null,
            hasPassword: false,
            createdAt: at,
            updatedAt: at,
            expiresAt: null,
            takedown: null,
            files: [file],
          },
        },
        error: siteMissing,
      }),
    },
  },
});

export const listSites = operation({
  method: 'GET',
  url: '/api/v1/publishes',
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
    response: { 200: SiteList, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          200: {
            sites: [
              {
                slug,
                siteUrl: siteUrl(c),
                status: 'active',
                title: 'My portfolio',
                fileCount: 2,
                totalSize: 5120,
                createdAt: at,
                updatedAt: at,
                expiresAt: null,
              },
            ],
            total: 1,
            nextCursor: null,
          },
        },
        error: unauthorized,
      }),
    },
  },
});

export const deleteSite = operation({
  method: 'DELETE',
  url: '/api/v1/publish/:slug',
  schema: {
    tags: ['sites'],
    summary: 'Delete a site permanently (its slug is retired)',
    security: SECURITY,
    params: SlugParams,
    response: { 200: Deleted, ...ERRORS },
  },
  config: { api: { examples: () => ({ responses: { 200: { slug, deleted: true } }, error: siteMissing }) } },
});

export const duplicateSite = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/duplicate',
  schema: {
    tags: ['sites'],
    summary: 'Copy a site server-side (files are shared, not re-uploaded)',
    security: SECURITY,
    params: SlugParams,
    response: { 201: Duplicated, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          201: {
            slug: 'quiet-river-8d2kqa',
            siteUrl: siteUrl(c, 'quiet-river-8d2kqa'),
            versionId: 'ver_Zt0mQ1uE4pHk7yBn2LcVxw',
            copiedFrom: slug,
            status: 'active',
          },
        },
        error: siteMissing,
      }),
    },
  },
});

export const claimSite = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/claim',
  schema: {
    tags: ['sites'],
    summary: 'Claim an anonymous site into your account',
    security: SECURITY,
    params: SlugParams,
    body: ClaimBody,
    response: { 200: Claimed, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        request: { claimToken },
        responses: {
          200: {
            slug,
            siteUrl: siteUrl(c),
            owner: 'ada@example.com',
            message: 'The site is yours: it no longer expires and appears in your site list.',
          },
        },
        error: errorExample('INVALID_REQUEST', 400, 'The claim token is not valid for this site'),
      }),
    },
  },
});

export const updateMetadata = operation({
  method: 'PATCH',
  url: '/api/v1/publish/:slug/metadata',
  schema: {
    tags: ['sites'],
    summary: 'Change title, description, ogImagePath, password or ttlSeconds (null clears)',
    security: SECURITY,
    params: SlugParams,
    body: MetadataBody,
    response: { 200: MetadataUpdated, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { title: 'My portfolio', password: 'correct horse battery', ttlSeconds: 604800 },
        responses: { 200: { slug, updated: true } },
        error: siteMissing,
      }),
    },
  },
});

export const listVersions = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/versions',
  schema: {
    tags: ['sites'],
    summary: 'Finalized versions, newest first',
    security: SECURITY,
    params: SlugParams,
    response: { 200: Versions, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          200: {
            versions: [
              {
                versionId,
                previewUrl: siteUrl(c, `${slug}--${versionLabel}`),
                aliases: ['staging'],
                createdAt: later,
                finalizedAt: later,
                fileCount: 2,
                totalSize: 5120,
                current: true,
              },
              {
                versionId: previousVersionId,
                previewUrl: siteUrl(c, `${slug}--${previousVersionLabel}`),
                aliases: [],
                createdAt: at,
                finalizedAt: at,
                fileCount: 1,
                totalSize: 1024,
                current: false,
              },
            ],
          },
        },
        error: siteMissing,
      }),
    },
  },
});

export const restoreVersion = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/versions/:versionId/restore',
  schema: {
    tags: ['sites'],
    summary: 'Make an earlier finalized version current',
    security: SECURITY,
    params: Type.Object({ slug: Slug, versionId: Type.String({ maxLength: 100 }) }),
    response: { 200: Restored, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: { 200: { slug, siteUrl: siteUrl(c), versionId: previousVersionId, status: 'active' } },
        error: errorExample('NOT_FOUND', 404, `Version ${previousVersionId} of site "${slug}" not found`),
      }),
    },
  },
});
