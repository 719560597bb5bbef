// Links (CONTRACT "Links"): GET/POST /api/v1/links, DELETE /api/v1/links/:id.

import { type Static, Type } from 'typebox';
import { MAX_LOCATION_CHARS } from '../core/links.js';
import { ERRORS, type ExampleContext, errorExample, operation, SECURITY } from './common.js';
import { at, slug, unauthorized } from './examples.js';

export const LinkBody = Type.Object({
  slug: Type.String({
    minLength: 1,
    description: 'the site to link',
  }),
  domain: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'an active custom domain of yours; omitted: your handle',
    }),
  ),
  location: Type.Optional(
    Type.Union([Type.String({ maxLength: MAX_LOCATION_CHARS }), Type.Null()], {
      description: 'path prefix, default "/"',
    }),
  ),
});
export type LinkBody = Static<typeof LinkBody>;

/** A site mounted at a location of the account's handle (`handle`) or of one of its domains (`domain`). */
export const Link = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  handle: Type.Optional(Type.String()),
  domain: Type.Optional(Type.String()),
  location: Type.String(),
  url: Type.String(),
  createdAt: Type.String(),
});
export type Link = Static<typeof Link>;
export const LinkList = Type.Object({ links: Type.Array(Link) });
export type LinkList = Static<typeof LinkList>;
export const LinkDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export type LinkDeleted = Static<typeof LinkDeleted>;

const link = (c: ExampleContext) => ({
  id: 'lnk_Xr4bq2Lw9sTn',
  slug,
  handle: 'ada',
  location: '/blog',
  url: `${c.scheme}://ada.${c.siteDomain}/blog`,
  createdAt: at,
});

export const listLinks = operation({
  method: 'GET',
  url: '/api/v1/links',
  schema: {
    tags: ['links'],
    summary: 'Your links (sites mounted on your handle or domains)',
    security: SECURITY,
    response: { 200: LinkList, ...ERRORS },
  },
  config: { api: { examples: (c) => ({ responses: { 200: { links: [link(c)] } }, error: unauthorized }) } },
});

export const createLink = operation({
  method: 'POST',
  url: '/api/v1/links',
  schema: {
    tags: ['links'],
    summary: 'Mount a site at a location of your handle (default) or of an active domain',
    description:
      'The site must be published: a site with no live version (its first publish refused or never finalized) is refused with 400 INVALID_REQUEST.',
    security: SECURITY,
    body: LinkBody,
    response: { 201: Link, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        request: { slug, location: '/blog' },
        responses: { 201: link(c) },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'This account has no handle: set one with PUT /api/v1/handle, or give a "domain".',
        ),
      }),
    },
  },
});

export const deleteLink = operation({
  method: 'DELETE',
  url: '/api/v1/links/:id',
  schema: {
    tags: ['links'],
    summary: 'Remove a link',
    security: SECURITY,
    params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
    response: { 200: LinkDeleted, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { id: 'lnk_Xr4bq2Lw9sTn', deleted: true } },
        error: errorExample('NOT_FOUND', 404, 'Link "lnk_Xr4bq2Lw9sTn" not found'),
      }),
    },
  },
});
