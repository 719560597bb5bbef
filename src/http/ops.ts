// Operational endpoints on the BASE_URL host: liveness, readiness, Prometheus metrics, OpenAPI.

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { Metrics } from './metrics.js';

export function opsRoutes(ctx: AppContext, metrics: Metrics) {
  return async (app: FastifyInstance) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));

    app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
      const checks = await Promise.allSettled([ctx.db.ping(), ctx.blobs.ping()]);
      const [database, storage] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
      const ready = database === 'ok' && storage === 'ok';
      if (!ready) ctx.logger.warn({ database, storage }, 'not ready');
      return reply.code(ready ? 200 : 503).send({ ok: ready, database, storage });
    });

    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    });

    app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
