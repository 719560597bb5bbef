// GET /api/v1/account (spec "Account").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/account.js';
import { type AccountDeps, describeAccount } from '../core/account.js';
import { requireAccount } from './rate-limit.js';

export function accountRoutes(deps: AccountDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.getAccount,
      handler: async (req) => describeAccount(deps.db, requireAccount(req), deps.planOverrides),
    });
  };
}
