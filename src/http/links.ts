// Links: GET/POST /api/v1/links, DELETE /api/v1/links/:id (CONTRACT "Links").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/links.js';
import { createLink, deleteLink, type LinkDeps, listLinks } from '../core/links.js';
import { requireAccount } from './rate-limit.js';

export function linkRoutes(deps: LinkDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({ ...api.listLinks, handler: async (req) => listLinks(deps, requireAccount(req)) });
    app.route({
      ...api.createLink,
      handler: async (req, reply) =>
        reply.code(201).send(await createLink(deps, requireAccount(req), req.body)),
    });
    app.route({
      ...api.deleteLink,
      handler: async (req) => deleteLink(deps, requireAccount(req), req.params.id),
    });
  };
}
