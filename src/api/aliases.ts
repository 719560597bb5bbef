// Aliases of a site (CONTRACT "Previews and aliases"): PUT/DELETE /api/v1/publish/:slug/aliases/:name and
// GET /api/v1/publish/:slug/aliases. An alias `<name>` is served at `<slug>--<name>.<site domain>`.

import { type Static, Type } from 'typebox';
import { ALIAS_NAME_MAX_CHARS } from '../shared/preview-names.js';
import { ERRORS, errorExample, operation, SECURITY, Slug, SlugParams, Timestamp } from './common.js';
import { at, slug, versionId } from './examples.js';

const AliasName = Type.String({
  maxLength: 100,
  description: `1 to ${ALIAS_NAME_MAX_CHARS} of a-z0-9-, starting with a letter, not ending with "-", no "--"`,
});
const AliasParams = Type.Object({ slug: Slug, name: AliasName });

export const AliasBody = Type.Object({
  versionId: Type.String({ maxLength: 100, description: 'a finalized version of the site' }),
});

export const AliasSet = Type.Object({
  name: Type.String(),
  versionId: Type.String(),
  url: Type.String({ description: 'the alias host: <slug>--<name>.<site domain>' }),
});
export type AliasSet = Static<typeof AliasSet>;

export const Alias = Type.Object({
  name: Type.String(),
  versionId: Type.String(),
  url: Type.String(),
  updatedAt: Timestamp,
});
export type Alias = Static<typeof Alias>;
export const AliasList = Type.Object({ aliases: Type.Array(Alias) });
export type AliasList = Static<typeof AliasList>;

export const AliasDeleted = Type.Object({ name: Type.String(), deleted: Type.Literal(true) });
export type AliasDeleted = Static<typeof AliasDeleted>;

const aliasUrl = (c: { scheme: string; siteDomain: string }, name: string) =>
  `${c.scheme}://${slug}--${name}.${c.siteDomain}/`;

export const putAlias = operation({
  method: 'PUT',
  url: '/api/v1/publish/:slug/aliases/:name',
  schema: {
    tags: ['aliases'],
    summary: 'Point an alias (`<slug>--<name>` host) at a finalized version; creates or moves it',
    description:
      'The alias host serves that version at once on every node, with X-Robots-Tag: noindex and the ' +
      "site's password, expiry and deletion. Owner's key or session, or a deploy token of the site.",
    security: SECURITY,
    params: AliasParams,
    body: AliasBody,
    response: { 200: AliasSet, ...ERRORS },
  },
  config: {
    // A deploy token of the site may set aliases (CONTRACT "Deploy tokens").
    deployToken: true,
    api: {
      examples: (c) => ({
        request: { versionId },
        responses: { 200: { name: 'staging', versionId, url: aliasUrl(c, 'staging') } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'Invalid alias: an alias name has 1 to 30 lowercase letters, digits and hyphens, starts with a letter, does not end with a hyphen and has no "--".',
        ),
      }),
    },
  },
});

export const listAliases = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/aliases',
  schema: {
    tags: ['aliases'],
    summary: "The site's aliases, by name",
    security: SECURITY,
    params: SlugParams,
    response: { 200: AliasList, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          200: { aliases: [{ name: 'staging', versionId, url: aliasUrl(c, 'staging'), updatedAt: at }] },
        },
        error: errorExample('NOT_FOUND', 404, `Site "${slug}" not found`),
      }),
    },
  },
});

export const deleteAlias = operation({
  method: 'DELETE',
  url: '/api/v1/publish/:slug/aliases/:name',
  schema: {
    tags: ['aliases'],
    summary: 'Remove an alias: its host serves nothing from now on',
    security: SECURITY,
    params: AliasParams,
    response: { 200: AliasDeleted, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { name: 'staging', deleted: true } },
        error: errorExample('NOT_FOUND', 404, `Alias "staging" of site "${slug}" not found`),
      }),
    },
  },
});
