// Operational endpoints on the BASE_URL host: liveness, readiness, Prometheus metrics, OpenAPI.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import * as api from '../api/ops.js';
import type { Metrics } from './metrics.js';

/** What readiness checks: the database and the blob store answer. */
export interface HealthDeps {
  db: { ping(): Promise<unknown> };
  blobs: { ping(): Promise<unknown> };
  logger: Logger;
}

/** What the ops routes read: the health checks and the metrics registry. */
export interface OpsDeps extends HealthDeps {
  metrics: Metrics;
}

const answered = (check: PromiseSettledResult<unknown>) =>
  check.status === 'fulfilled' ? ('ok' as const) : ('unreachable' as const);

export function opsRoutes(deps: OpsDeps): FastifyPluginAsyncTypebox {
  const { metrics } = deps;
  return async (app) => {
    app.route({ ...api.healthz, handler: async () => ({ ok: true as const }) });

    app.route({
      ...api.readyz,
      handler: async (_req, reply) => {
        const [db, blobs] = await Promise.allSettled([deps.db.ping(), deps.blobs.ping()]);
        const database = answered(db);
        const storage = answered(blobs);
        const ready = database === 'ok' && storage === 'ok';
        if (!ready) deps.logger.warn({ database, storage }, 'not ready');
        return reply.code(ready ? 200 : 503).send({ ok: ready, database, storage });
      },
    });

    app.route({
      ...api.metrics,
      handler: async (_req, reply) => {
        reply.type(metrics.registry.contentType);
        return metrics.scrape();
      },
    });

    app.route({ ...api.openApiDocument, handler: async () => app.swagger() });
  };
}
