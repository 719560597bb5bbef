// Aliases: PUT/DELETE /api/v1/publish/:slug/aliases/:name, GET /api/v1/publish/:slug/aliases (CONTRACT
// "Previews and aliases"; owner only, 404 for anyone else).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/aliases.js';
import { type AliasDeps, listAliases, putAlias, removeAlias } from '../core/aliases.js';
import { requireAccount } from './rate-limit.js';

export function aliasRoutes(deps: AliasDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.putAlias,
      handler: async (req) =>
        putAlias(deps, requireAccount(req), req.params.slug, req.params.name, req.body.versionId),
    });

    app.route({
      ...api.listAliases,
      handler: async (req) => listAliases(deps, requireAccount(req), req.params.slug),
    });

    app.route({
      ...api.deleteAlias,
      handler: async (req) => removeAlias(deps, requireAccount(req), req.params.slug, req.params.name),
    });
  };
}
