// GET /api/v1/account (spec "Account").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type AccountDeps, describeAccount } from '../core/account.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, NullableString, SECURITY } from './schemas.js';

const AccountReply = Type.Object({
  email: Type.String(),
  plan: Type.String(),
  handle: NullableString,
  usage: Type.Object({
    sites: Type.Object({
      used: Type.Number(),
      limit: Type.Union([Type.Number(), Type.Literal('unlimited')]),
    }),
    storage: Type.Object({
      used: Type.String(),
      usedBytes: Type.Number(),
      limit: Type.String(),
      limitBytes: Type.Number(),
    }),
  }),
  limits: Type.Object({
    maxFileSize: Type.String(),
    maxFileSizeBytes: Type.Number(),
    // null on Hobby (unlimited); the spec types it as a number, so null is the honest "no number".
    maxSites: Type.Union([Type.Number(), Type.Null()]),
    maxStorage: Type.String(),
  }),
  createdAt: Type.String(),
});

export function accountRoutes(deps: AccountDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/account',
      {
        schema: {
          tags: ['account'],
          summary: 'The signed-in account: plan, usage and limits',
          security: SECURITY,
          response: { 200: AccountReply, '4xx': ErrorBody },
        },
      },
      async (req) => describeAccount(deps.db, requireAccount(req), deps.planOverrides),
    );
  };
}
