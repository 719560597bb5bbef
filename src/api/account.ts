// The account (spec "Account"): GET /api/v1/account; its audit log (issue 26): GET /api/v1/account/audit.

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

export const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor: Type.Object({
    kind: Type.Union([
      Type.Literal('key'),
      Type.Literal('session'),
      Type.Literal('token'),
      Type.Literal('operator'),
      Type.Literal('system'),
    ]),
    id: Type.Optional(Type.String()),
  }),
  ip: NullableString,
  action: Type.String(),
  target: Type.String(),
  details: Type.Record(Type.String(), Type.Unknown()),
});
export const AuditList = Type.Object({ entries: Type.Array(AuditEntry) });
export type AuditList = Static<typeof AuditList>;

export const getAudit = operation({
  method: 'GET',
  url: '/api/v1/account/audit',
  schema: {
    tags: ['account'],
    summary: "The account's audit log, newest first: who changed what, from which address, when",
    description:
      "Every change to the account's sites, versions, keys, deploy tokens, domains, handle, links, plan, variables (names, never values) and proxy hosts, and every operator action on it. `limit` 1-200 (default 50); `before` the `id` of the last entry of the previous page (or a time) for the next page. docs/audit.md lists the actions.",
    security: SECURITY,
    querystring: Type.Object({
      limit: Type.Optional(Type.String({ maxLength: 10 })),
      before: Type.Optional(Type.String({ maxLength: 100 })),
    }),
    response: { 200: AuditList, '4xx': ErrorBody },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: {
            entries: [
              {
                id: 'aud_001795492520000000000004e5f6a7b',
                at,
                actor: { kind: 'key', id: 'key_3f1c0a9b2d4e' },
                ip: '203.0.113.7',
                action: 'variable.set',
                target: 'mellow-fern-vjn3ru',
                details: { names: ['OPENAI_API_KEY'] },
              },
            ],
          },
        },
        error: unauthorized,
      }),
    },
  },
});
