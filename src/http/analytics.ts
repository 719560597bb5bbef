// Visitor analytics: GET /api/v1/publish/:slug/analytics (CONTRACT "Analytics"; owner only, 404 for anyone
// else; a deploy token is refused by the scope rule in src/http/rate-limit.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/analytics.js';
import { type AnalyticsReadDeps, siteAnalytics } from '../core/analytics.js';
import { requireAccount } from './rate-limit.js';

export function analyticsRoutes(deps: AnalyticsReadDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.getAnalytics,
      handler: async (req) => siteAnalytics(deps, requireAccount(req), req.params.slug, req.query),
    });
  };
}
