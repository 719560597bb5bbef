// Operational endpoints on the BASE_URL host: liveness, readiness, Prometheus metrics, this document.

import { Type } from 'typebox';
import { operation } from './common.js';

const Check = Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]);
export const Readiness = Type.Object({ ok: Type.Boolean(), database: Check, storage: Check });

export const healthz = operation({
  method: 'GET',
  url: '/healthz',
  schema: {
    tags: ['ops'],
    summary: 'Liveness: the process answers',
    response: { 200: Type.Object({ ok: Type.Literal(true) }) },
  },
  config: { api: { examples: () => ({ responses: { 200: { ok: true } } }) } },
});

export const readyz = operation({
  method: 'GET',
  url: '/readyz',
  schema: {
    tags: ['ops'],
    summary: 'Readiness: 200 when the database and the file storage answer, 503 otherwise',
    response: { 200: Readiness, 503: Readiness },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: { ok: true, database: 'ok', storage: 'ok' },
          503: { ok: false, database: 'ok', storage: 'unreachable' },
        },
      }),
    },
  },
});

export const metrics = operation({
  method: 'GET',
  url: '/metrics',
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
  config: { api: { examples: () => ({ responses: {} }) } },
});

export const openApiDocument = operation({
  method: 'GET',
  url: '/api/openapi.json',
  schema: { tags: ['ops'], summary: 'This document (OpenAPI 3.0), rendered at /docs' },
  config: { api: { examples: () => ({ responses: {} }) } },
});
