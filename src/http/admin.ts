// The operators' API under /api/admin/ (docs/admin.md). One onRequest hook answers 404 NOT_FOUND to anyone
// but an operator's API key before anything else about the request is looked at (the key-needed 401, the
// body), so the routes do not exist for them: anonymous, another account's key, a deploy token (the scope
// rule leaves /api/admin/ to this hook), a cookie session.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as api from '../api/admin.js';
import { listAllAudit } from '../core/audit.js';
import { notFound } from '../core/errors.js';
import {
  addBlock,
  blocks,
  deleteSiteAsOperator,
  isOperator,
  type OperatorDeps,
  operatorAccount,
  operatorSite,
  removeBlock,
  restoreSite,
  search,
  setAccountPlan,
  suspendAccount,
  takedownSite,
  unsuspendAccount,
} from '../core/operators.js';
import type { AccountRow } from '../store/db/tables/account.js';

export const ADMIN_API_PREFIX = '/api/admin/';

/** The operator calling, or 404 (never 401/403: the admin API is not there for anyone else). */
function operatorOf(deps: OperatorDeps, req: FastifyRequest): AccountRow {
  if (req.deployToken || !isOperator(deps.config, req.account)) throw notFound();
  return req.account!;
}

export function adminRoutes(deps: OperatorDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('onRequest', async (req) => {
      operatorOf(deps, req);
    });

    app.route({ ...api.search, handler: async (req) => search(deps, req.query.q) });

    app.route({ ...api.getAccount, handler: async (req) => operatorAccount(deps, req.params.id) });

    app.route({
      ...api.suspend,
      handler: async (req) => suspendAccount(deps, operatorOf(deps, req), req.params.id, req.body),
    });

    app.route({
      ...api.unsuspend,
      handler: async (req) => unsuspendAccount(deps, operatorOf(deps, req), req.params.id),
    });

    app.route({
      ...api.setPlan,
      handler: async (req) => setAccountPlan(deps, operatorOf(deps, req), req.params.id, req.body.plan),
    });

    app.route({ ...api.getSite, handler: async (req) => operatorSite(deps, req.params.slug) });

    app.route({
      ...api.takedown,
      handler: async (req) => takedownSite(deps, operatorOf(deps, req), req.params.slug, req.body),
    });

    app.route({
      ...api.restore,
      handler: async (req) => restoreSite(deps, operatorOf(deps, req), req.params.slug),
    });

    app.route({
      ...api.deleteSite,
      handler: async (req) => deleteSiteAsOperator(deps, operatorOf(deps, req), req.params.slug),
    });

    app.route({
      ...api.addBlock,
      handler: async (req, reply) =>
        reply.code(201).send(await addBlock(deps, operatorOf(deps, req), req.body)),
    });

    app.route({
      ...api.listBlocks,
      handler: async (req) => ({ blocks: await blocks(deps, req.query.kind) }),
    });

    app.route({ ...api.listAudit, handler: async (req) => listAllAudit(deps.db, req.query) });

    app.route({
      ...api.removeBlock,
      handler: async (req) => removeBlock(deps, operatorOf(deps, req), req.params.id),
    });
  };
}
