// Abuse reports: POST /api/v1/reports (anyone), GET /api/admin/reports and POST /api/admin/reports/:id/close
// (operators: the signed-in account's email is in ADMIN_EMAILS; anyone else gets the unknown-route 404, so the
// route is not revealed).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as api from '../api/reports.js';
import { ApiError } from '../core/errors.js';
import { isOperator } from '../core/operators.js';
import { closeReport, createReport, listReports, type ReportDeps } from '../core/reports.js';
import type { AccountRow } from '../store/db/tables/account.js';

/** Operators only (core/operators.ts isOperator, as the rest of /api/admin/): anyone else, the unknown-route 404. */
function requireOperator(req: FastifyRequest, config: ReportDeps['config']): AccountRow {
  if (req.deployToken || !isOperator(config, req.account))
    throw new ApiError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`);
  return req.account!;
}

export function reportRoutes(deps: ReportDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.createReport,
      handler: async (req, reply) =>
        reply.code(201).send(await createReport(deps, req.body, { ip: req.clientAddress })),
    });

    app.route({
      ...api.listReports,
      // Before the query is validated: a non-operator learns nothing of the route, not even its parameters.
      preValidation: async (req) => {
        requireOperator(req, deps.config);
      },
      handler: async (req) => {
        return {
          reports: await listReports(deps.db, {
            ...(req.query.status ? { status: req.query.status } : {}),
            ...(req.query.limit ? { limit: Number(req.query.limit) } : {}),
            ...(req.query.before ? { before: req.query.before } : {}),
          }),
        };
      },
    });

    app.route({
      ...api.closeReport,
      preValidation: async (req) => {
        requireOperator(req, deps.config);
      },
      handler: async (req) => closeReport(deps, requireOperator(req, deps.config), req.params.id, req.body),
    });
  };
}
