// Site variables: GET/PUT /api/v1/publish/:slug/variables, DELETE .../variables/:name (spec "Site
// variables"; owner only, 404 for anyone else). Values go in, never out.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/variables.js';
import { deleteVariable, listVariables, putVariables, type VariableDeps } from '../core/variables.js';
import { requireAccount } from './rate-limit.js';

export function variableRoutes(deps: VariableDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.listVariables,
      handler: async (req) => ({
        variables: await listVariables(deps, requireAccount(req), req.params.slug),
      }),
    });

    app.route({
      ...api.putVariables,
      handler: async (req) => putVariables(deps, requireAccount(req), req.params.slug, req.body),
    });

    app.route({
      ...api.deleteVariable,
      handler: async (req) => deleteVariable(deps, requireAccount(req), req.params.slug, req.params.name),
    });
  };
}
