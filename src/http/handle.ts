// The handle: GET/PUT/DELETE /api/v1/handle (spec "Handle"; Hobby only).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { deleteHandle, getHandle, type HandleDeps, putHandle } from '../core/handle.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, NullableString, SECURITY } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };

export function handleRoutes(deps: HandleDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/handle',
      {
        schema: {
          tags: ['handle'],
          summary: 'Your handle and its URL (both null if none)',
          security: SECURITY,
          response: { 200: Type.Object({ handle: NullableString, url: NullableString }), ...errors },
        },
      },
      async (req) => getHandle(deps, requireAccount(req)),
    );
    app.put(
      '/api/v1/handle',
      {
        schema: {
          tags: ['handle'],
          summary:
            'Claim a handle (Hobby): 3-30 of a-z 0-9 -, not reserved or taken; the old one is released',
          security: SECURITY,
          body: Type.Object({ handle: Type.Unknown() }),
          response: {
            200: Type.Object({ handle: Type.String(), url: Type.String(), message: Type.String() }),
            ...errors,
          },
        },
      },
      async (req) => putHandle(deps, requireAccount(req), req.body.handle),
    );
    app.delete(
      '/api/v1/handle',
      {
        schema: {
          tags: ['handle'],
          summary: 'Release your handle and remove its links',
          security: SECURITY,
          response: { 200: Type.Object({ deleted: Type.Literal(true), message: Type.String() }), ...errors },
        },
      },
      async (req) => deleteHandle(deps, requireAccount(req)),
    );
  };
}
