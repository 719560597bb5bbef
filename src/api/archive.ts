// Archive deploys (CONTRACT "Archive deploys"): POST /api/v1/publish/:slug/archive and POST
// /api/v1/publish/archive, a gzip-compressed tar as the body, the whole publish in one request.

import { type Static, Type } from 'typebox';
import { MAX_MANIFEST_FILES } from '../core/manifest.js';
import { Bytes, ERRORS, errorExample, operation, SECURITY, SlugParams } from './common.js';
import { claimToken, later, siteUrl, slug, versionId, versionLabel } from './examples.js';
import { ANONYMOUS_WARNING, FinalizeReply } from './sites.js';

/** `live` and `alias` as finalize takes them (previews), in the query since the body is the archive. */
export const ArchiveQuery = Type.Object({
  live: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: '`false`: finalize as a preview without changing the live version (default `true`)',
    }),
  ),
  alias: Type.Optional(
    Type.String({
      maxLength: 30,
      pattern: '^[a-z](?:[a-z0-9]|-(?!-))*[a-z0-9]$|^[a-z]$',
      description: 'point this alias (e.g. `pr-42`) at the new version',
    }),
  ),
});
export type ArchiveQuery = Static<typeof ArchiveQuery>;

/** The finalize answer (whatever fields it has) plus the file counts, and an anonymous create's fields. */
export const ArchiveReply = Type.Object({
  ...FinalizeReply.properties,
  uploaded: Type.Number({ description: 'files whose bytes the site did not hold before' }),
  skipped: Type.Number({ description: 'files the site already held (hash_match), not stored again' }),
  claimToken: Type.Optional(Type.String()),
  claimUrl: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Type.String()),
  anonymous: Type.Optional(Type.Literal(true)),
  warning: Type.Optional(Type.String()),
});
export type ArchiveReply = Static<typeof ArchiveReply>;

const rawBody = {
  mediaType: 'application/gzip',
  schema: Bytes(
    `A gzip-compressed tar (ustar/pax) of the site folder, e.g. \`tar -czf - -C dist .\`: regular files and folders only, at most ${MAX_MANIFEST_FILES} non-empty files. Sent with Content-Type: application/gzip.`,
  ),
};

const description =
  'The whole publish in one request: the service streams the archive, stores each file (hashing and scanning it as it passes), applies every manifest rule and plan limit, dedups against the files the site already has, scans for secrets and finalizes. Symbolic and hard links, devices, FIFOs, absolute paths, `..` segments, duplicate paths and a corrupt or truncated archive refuse the whole archive with 400 naming the entry (`entry`); a refused or interrupted archive leaves no new site, no new version and no live change. Entry names may begin with `./`; folders and empty files are left out.';

export const deployArchive = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/archive',
  schema: {
    tags: ['sites'],
    summary: 'Publish a new version of a site from a tar.gz archive, in one request',
    description,
    security: SECURITY,
    params: SlugParams,
    querystring: ArchiveQuery,
    response: { 200: ArchiveReply, ...ERRORS },
  },
  config: {
    // A deploy token of the site may call it (issue 24, deploy tokens).
    deployToken: true,
    api: {
      rawBody,
      examples: (c) => ({
        responses: {
          200: {
            slug,
            siteUrl: siteUrl(c),
            versionId,
            status: 'active',
            warnings: [],
            previewUrl: siteUrl(c, `${slug}--${versionLabel}`),
            live: true,
            uploaded: 3,
            skipped: 41,
          },
        },
        error: {
          ...errorExample(
            'INVALID_REQUEST',
            400,
            'Archive entry "./assets/current" is a symbolic link; an archive deploy takes regular files and folders only, so nothing was published.',
            'Archive the files themselves (GNU tar: --dereference / -h follows links).',
          ),
          entry: './assets/current',
        },
      }),
    },
  },
});

export const createFromArchive = operation({
  method: 'POST',
  url: '/api/v1/publish/archive',
  schema: {
    tags: ['sites'],
    summary: 'Create a site from a tar.gz archive in one request (anonymous without a key)',
    description: `${description} Without a key the site is anonymous (it expires in 24 hours) and the answer carries its claimToken, claimUrl and expiresAt; with a key it is a new site of the account.`,
    querystring: ArchiveQuery,
    response: { 201: ArchiveReply, ...ERRORS },
  },
  config: {
    api: {
      rawBody,
      examples: (c) => ({
        responses: {
          201: {
            slug,
            siteUrl: siteUrl(c),
            versionId,
            status: 'active',
            warnings: [],
            previewUrl: siteUrl(c, `${slug}--${versionLabel}`),
            live: true,
            uploaded: 44,
            skipped: 0,
            claimToken,
            claimUrl: `${c.baseUrl}/claim?slug=${slug}&token=${claimToken}`,
            expiresAt: later,
            anonymous: true,
            warning: ANONYMOUS_WARNING,
          },
        },
        error: errorExample(
          'INVALID_REQUEST',
          415,
          'Send the archive as a gzip-compressed tar with Content-Type: application/gzip.',
        ),
      }),
    },
  },
});
