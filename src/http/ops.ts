// Operational endpoints on the BASE_URL host: liveness, readiness, Prometheus metrics, OpenAPI.

import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import { Type } from 'typebox';
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

export function opsRoutes(deps: OpsDeps): FastifyPluginAsync {
  const { metrics } = deps;
  return async (app) => {
    app.get(
      '/healthz',
      {
        schema: {
          tags: ['ops'],
          summary: 'Liveness: the process answers',
          response: { 200: Type.Object({ ok: Type.Literal(true) }) },
        },
      },
      async () => ({ ok: true as const }),
    );

    const Readiness = Type.Object({
      ok: Type.Boolean(),
      database: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
      storage: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
    });
    app.get(
      '/readyz',
      {
        schema: {
          tags: ['ops'],
          summary: 'Readiness: 200 when the database and the file storage answer, 503 otherwise',
          response: { 200: Readiness, 503: Readiness },
        },
      },
      async (_req, reply) => {
        const checks = await Promise.allSettled([deps.db.ping(), deps.blobs.ping()]);
        const [database, storage] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unreachable'));
        const ready = database === 'ok' && storage === 'ok';
        if (!ready) deps.logger.warn({ database, storage }, 'not ready');
        return reply.code(ready ? 200 : 503).send({ ok: ready, database, storage });
      },
    );

    app.get(
      '/metrics',
      {
        schema: {
          tags: ['ops'],
          summary: 'Prometheus metrics (text exposition format)',
          response: {
            200: {
              description: 'Prometheus text format 0.0.4',
              content: { 'text/plain': { schema: { type: 'string' } } },
            },
          },
        },
      },
      async (_req, reply) => {
        reply.type(metrics.registry.contentType);
        return metrics.registry.metrics();
      },
    );

    app.get(
      '/api/openapi.json',
      { schema: { tags: ['ops'], summary: 'This document (OpenAPI 3.0), rendered at /docs' } },
      async () => app.swagger(),
    );
  };
}
