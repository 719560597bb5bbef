// The account (spec "Account"): GET /api/v1/account.

import { type Static, Type } from 'typebox';
import { ErrorBody, NullableString, operation, SECURITY } from './common.js';
import { at, unauthorized } from './examples.js';

export const Account = Type.Object({
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
export type Account = Static<typeof Account>;

export const getAccount = operation({
  method: 'GET',
  url: '/api/v1/account',
  schema: {
    tags: ['account'],
    summary: 'The signed-in account: plan, usage and limits',
    security: SECURITY,
    response: { 200: Account, '4xx': ErrorBody },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: {
            email: 'ada@example.com',
            plan: 'free',
            handle: null,
            usage: {
              sites: { used: 3, limit: 500 },
              storage: { used: '1.2 MB', usedBytes: 1258291, limit: '200 MB', limitBytes: 209715200 },
            },
            limits: {
              maxFileSize: '200 MB',
              maxFileSizeBytes: 209715200,
              maxSites: 500,
              maxStorage: '200 MB',
            },
            createdAt: at,
          },
        },
        error: unauthorized,
      }),
    },
  },
});
