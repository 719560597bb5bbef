// Site variables: GET/PUT /api/v1/publish/:slug/variables, DELETE .../variables/:name (spec "Site
// variables"; owner only, 404 for anyone else). Values go in, never out.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { deleteVariable, listVariables, putVariables, type VariableDeps } from '../core/variables.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, SECURITY, Timestamp } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };
const SlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) });

export function variableRoutes(deps: VariableDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/publish/:slug/variables',
      {
        schema: {
          tags: ['variables'],
          summary: "The site's variable names (values are never returned)",
          security: SECURITY,
          params: SlugParams,
          response: {
            200: Type.Object({
              variables: Type.Array(
                Type.Object({ name: Type.String(), createdAt: Timestamp, updatedAt: Timestamp }),
              ),
            }),
            ...errors,
          },
        },
      },
      async (req) => ({ variables: await listVariables(deps, requireAccount(req), req.params.slug) }),
    );

    app.put(
      '/api/v1/publish/:slug/variables',
      {
        schema: {
          tags: ['variables'],
          summary: 'Store secrets as encrypted variables: {"NAME": "value", ...}; other names are kept',
          security: SECURITY,
          params: SlugParams,
          // Checked entry by entry in core (each refusal names its entry, never its value).
          body: Type.Unknown({ description: 'object of variable name -> secret string' }),
          response: {
            200: Type.Object({ ok: Type.Literal(true), stored: Type.Array(Type.String()) }),
            ...errors,
          },
        },
      },
      async (req) => putVariables(deps, requireAccount(req), req.params.slug, req.body),
    );

    app.delete(
      '/api/v1/publish/:slug/variables/:name',
      {
        schema: {
          tags: ['variables'],
          summary: 'Delete one variable',
          security: SECURITY,
          params: Type.Object({
            slug: Type.String({ maxLength: 63 }),
            name: Type.String({ maxLength: 200 }),
          }),
          response: {
            200: Type.Object({ ok: Type.Literal(true), deleted: Type.String() }),
            ...errors,
          },
        },
      },
      async (req) => deleteVariable(deps, requireAccount(req), req.params.slug, req.params.name),
    );
  };
}
