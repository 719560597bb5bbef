// GET /api/v1/account (spec "Account") and GET /api/v1/account/audit (issue 26, the owner's audit log).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/account.js';
import { type AccountDeps, describeAccount } from '../core/account.js';
import { listAudit } from '../core/audit.js';
import { requireAccount } from './rate-limit.js';

export function accountRoutes(deps: AccountDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.getAccount,
      handler: async (req) => describeAccount(deps.db, requireAccount(req), deps.planOverrides),
    });

    app.route({
      ...api.getAudit,
      handler: async (req) => listAudit(deps.db, requireAccount(req), req.query),
    });
  };
}
