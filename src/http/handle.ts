// The handle: GET/PUT/DELETE /api/v1/handle (spec "Handle"; Hobby only).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/handle.js';
import { deleteHandle, getHandle, type HandleDeps, putHandle } from '../core/handle.js';
import { requireAccount } from './rate-limit.js';

export function handleRoutes(deps: HandleDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({ ...api.getHandle, handler: async (req) => getHandle(deps, requireAccount(req)) });
    app.route({
      ...api.putHandle,
      handler: async (req) => putHandle(deps, requireAccount(req), req.body.handle),
    });
    app.route({ ...api.deleteHandle, handler: async (req) => deleteHandle(deps, requireAccount(req)) });
  };
}
