// Links: GET/POST /api/v1/links, DELETE /api/v1/links/:id (CONTRACT "Links").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createLink, deleteLink, type LinkDeps, listLinks } from '../core/links.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, SECURITY } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };
const Link = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  handle: Type.Optional(Type.String()),
  domain: Type.Optional(Type.String()),
  location: Type.String(),
  url: Type.String(),
  createdAt: Type.String(),
});

export function linkRoutes(deps: LinkDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/links',
      {
        schema: {
          tags: ['links'],
          summary: 'Your links (sites mounted on your handle or domains)',
          security: SECURITY,
          response: { 200: Type.Object({ links: Type.Array(Link) }), ...errors },
        },
      },
      async (req) => listLinks(deps, requireAccount(req)),
    );
    app.post(
      '/api/v1/links',
      {
        schema: {
          tags: ['links'],
          summary: 'Mount a site at a location of your handle (default) or of an active domain',
          security: SECURITY,
          body: Type.Unknown({ description: '{slug, domain?, location? = "/"}' }),
          response: { 201: Link, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await createLink(deps, requireAccount(req), req.body)),
    );
    app.delete(
      '/api/v1/links/:id',
      {
        schema: {
          tags: ['links'],
          summary: 'Remove a link',
          security: SECURITY,
          params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
          response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...errors },
        },
      },
      async (req) => deleteLink(deps, requireAccount(req), req.params.id),
    );
  };
}
