// Deploy tokens: POST/GET /api/v1/publish/:slug/tokens, DELETE .../tokens/:id (CONTRACT "Deploy tokens";
// owner only, 404 for anyone else). A token never manages tokens: these routes are not marked
// `deployToken`, so the scope rule (src/http/rate-limit.ts) answers it 403 before they run.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/tokens.js';
import { createDeployToken, listDeployTokens, revokeDeployToken, type TokenDeps } from '../core/tokens.js';
import { requireAccount } from './rate-limit.js';

export function tokenRoutes(deps: TokenDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.createToken,
      handler: async (req, reply) =>
        reply.code(201).send(await createDeployToken(deps, requireAccount(req), req.params.slug, req.body)),
    });

    app.route({
      ...api.listTokens,
      handler: async (req) => ({
        tokens: await listDeployTokens(deps, requireAccount(req), req.params.slug),
      }),
    });

    app.route({
      ...api.revokeToken,
      handler: async (req) => revokeDeployToken(deps, requireAccount(req), req.params.slug, req.params.id),
    });
  };
}
