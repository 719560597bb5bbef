// The operators' API (CONTRACT "Operators, reports and the audit log"; docs/admin.md): /api/admin/..., with
// the API key of an account whose address is in ADMIN_EMAILS. Everyone else (anonymous, another account's
// key, a deploy token, a suspended operator) gets 404 NOT_FOUND, as if these routes did not exist.

import { type Static, Type } from 'typebox';
import { MAX_REASON_CHARS } from '../core/operators.js';
import { AuditEntry } from './account.js';
import {
  ERRORS,
  errorExample,
  NullableString,
  operation,
  SECURITY,
  Slug,
  SlugParams,
  Timestamp,
} from './common.js';
import { at, hash, slug } from './examples.js';

const accountId = 'acct_3Jq9tOTlWk2Ex0f0m5lM5A';
const operatorId = 'acct_Op0hV3b8gG6x2w1nQ4lQ9w';
const blockId = 'blk_C6p1tXwY9sK2r7dQe4fZbA';
const NOT_OPERATOR = 'Anyone but an operator gets 404 NOT_FOUND here (the route does not exist for them).';
const notFoundExample = errorExample('NOT_FOUND', 404, 'Not found');

const Reason = Type.String({
  minLength: 1,
  maxLength: MAX_REASON_CHARS,
  description: 'why (kept with the action; a takedown or suspension reason is shown to the owner)',
});
const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const Stamp = Type.Object({ reason: Type.String(), at: Timestamp });

export const OperatorAccount = Type.Object({
  id: Type.String(),
  email: Type.String(),
  plan: Type.Union([Type.Literal('free'), Type.Literal('hobby')]),
  handle: NullableString,
  suspended: Type.Boolean(),
  suspension: Type.Union([Stamp, Type.Null()]),
  operator: Type.Boolean({ description: 'its address is in ADMIN_EMAILS' }),
  siteCount: Type.Integer(),
  createdAt: Timestamp,
});

export const OperatorSite = Type.Object({
  slug: Type.String(),
  accountId: NullableString,
  status: Type.Union([
    Type.Literal('active'),
    Type.Literal('pending'),
    Type.Literal('expired'),
    Type.Literal('deleted'),
  ]),
  takenDown: Type.Boolean(),
  takedown: Type.Union([Stamp, Type.Null()]),
  createdAt: Timestamp,
});

const accountExample = {
  id: accountId,
  email: 'someone@example.com',
  plan: 'free',
  handle: null,
  suspended: false,
  suspension: null,
  operator: false,
  siteCount: 1,
  createdAt: at,
};
const siteExample = {
  slug,
  accountId,
  status: 'active',
  takenDown: false,
  takedown: null,
  createdAt: at,
};

export const SearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'an email (or part of one), account id, slug, handle, custom domain, SHA-256 content hash or a site URL',
  }),
});
export const SearchResult = Type.Object({
  accounts: Type.Array(OperatorAccount),
  sites: Type.Array(OperatorSite),
});

export const search = operation({
  method: 'GET',
  url: '/api/admin/search',
  schema: {
    tags: ['admin'],
    summary: 'Find accounts and sites (operators)',
    description:
      'Matches `q` as an email, account id, slug (or preview label), handle, custom domain, content hash or a ' +
      `site URL pasted as is. Sites found bring their owners; accounts found bring their sites. ${NOT_OPERATOR}`,
    security: SECURITY,
    querystring: SearchQuery,
    response: { 200: SearchResult, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { accounts: [accountExample], sites: [siteExample] } },
        error: notFoundExample,
      }),
    },
  },
});

export const getAccount = operation({
  method: 'GET',
  url: '/api/admin/accounts/:id',
  schema: {
    tags: ['admin'],
    summary: 'One account and its sites (operators)',
    description: NOT_OPERATOR,
    security: SECURITY,
    params: IdParams,
    response: {
      200: Type.Object({ account: OperatorAccount, sites: Type.Array(OperatorSite) }),
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { account: accountExample, sites: [siteExample] } },
        error: notFoundExample,
      }),
    },
  },
});

export const SuspendBody = Type.Object({ reason: Reason }, { additionalProperties: false });
export type SuspendBody = Static<typeof SuspendBody>;

export const suspend = operation({
  method: 'POST',
  url: '/api/admin/accounts/:id/suspend',
  schema: {
    tags: ['admin'],
    summary: 'Suspend an account (operators)',
    description:
      'Its API key, deploy tokens and browser sessions answer 401 and every site it owns answers 403, on every node at once; nothing is deleted, so DELETE on the same path undoes it. ' +
      NOT_OPERATOR,
    security: SECURITY,
    params: IdParams,
    body: SuspendBody,
    response: { 200: Type.Object({ id: Type.String(), suspended: Type.Literal(true) }), ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { reason: 'Phishing kits on three sites' },
        responses: { 200: { id: accountId, suspended: true } },
        error: notFoundExample,
      }),
    },
  },
});

export const unsuspend = operation({
  method: 'DELETE',
  url: '/api/admin/accounts/:id/suspend',
  schema: {
    tags: ['admin'],
    summary: 'Lift a suspension (operators)',
    description: `Its key, tokens, sessions and sites work again. 409 when it is not suspended. ${NOT_OPERATOR}`,
    security: SECURITY,
    params: IdParams,
    response: { 200: Type.Object({ id: Type.String(), suspended: Type.Literal(false) }), ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({ responses: { 200: { id: accountId, suspended: false } }, error: notFoundExample }),
    },
  },
});

export const PlanBody = Type.Object(
  { plan: Type.Union([Type.Literal('free'), Type.Literal('hobby')]) },
  { additionalProperties: false },
);

export const setPlan = operation({
  method: 'PUT',
  url: '/api/admin/accounts/:id/plan',
  schema: {
    tags: ['admin'],
    summary: "Set an account's plan by hand (operators)",
    description: `The plan applies at once and has no end date. ${NOT_OPERATOR}`,
    security: SECURITY,
    params: IdParams,
    body: PlanBody,
    response: {
      200: Type.Object({
        id: Type.String(),
        plan: Type.Union([Type.Literal('free'), Type.Literal('hobby')]),
      }),
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({
        request: { plan: 'hobby' },
        responses: { 200: { id: accountId, plan: 'hobby' } },
        error: notFoundExample,
      }),
    },
  },
});

export const getSite = operation({
  method: 'GET',
  url: '/api/admin/sites/:slug',
  schema: {
    tags: ['admin'],
    summary: 'One site, deleted ones included (operators)',
    description: NOT_OPERATOR,
    security: SECURITY,
    params: SlugParams,
    response: {
      200: Type.Intersect([OperatorSite, Type.Object({ fileCount: Type.Integer() })]),
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({ responses: { 200: { ...siteExample, fileCount: 3 } }, error: notFoundExample }),
    },
  },
});

export const TakedownBody = Type.Object(
  {
    reason: Reason,
    blockContent: Type.Optional(
      Type.Boolean({
        description:
          'also block the hashes of its live files, so the same files are refused at finalize on any site ' +
          '(files another live site also serves are left out)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TakedownBody = Static<typeof TakedownBody>;

export const takedown = operation({
  method: 'POST',
  url: '/api/admin/sites/:slug/takedown',
  schema: {
    tags: ['admin'],
    summary: 'Take a site down (operators)',
    description:
      'Every host of the site (its slug, previews and aliases, handle and domain links) answers 451 on every ' +
      'node at once; the owner sees the reason in GET /api/v1/publish/:slug (`takedown`) and the dashboard. ' +
      `Its content is kept: DELETE on the same path restores it. ${NOT_OPERATOR}`,
    security: SECURITY,
    params: SlugParams,
    body: TakedownBody,
    response: {
      200: Type.Object({
        slug: Slug,
        takenDown: Type.Literal(true),
        blockedHashes: Type.Integer({ description: 'file hashes newly blocked (blockContent)' }),
      }),
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({
        request: { reason: 'Phishing page imitating a bank (report 12)', blockContent: true },
        responses: { 200: { slug, takenDown: true, blockedHashes: 4 } },
        error: notFoundExample,
      }),
    },
  },
});

export const restore = operation({
  method: 'DELETE',
  url: '/api/admin/sites/:slug/takedown',
  schema: {
    tags: ['admin'],
    summary: 'Undo a takedown (operators)',
    description: `The site is served again on every node. Hashes it blocked stay blocked until removed. ${NOT_OPERATOR}`,
    security: SECURITY,
    params: SlugParams,
    response: { 200: Type.Object({ slug: Slug, takenDown: Type.Literal(false) }), ...ERRORS },
  },
  config: {
    api: { examples: () => ({ responses: { 200: { slug, takenDown: false } }, error: notFoundExample }) },
  },
});

export const deleteSite = operation({
  method: 'DELETE',
  url: '/api/admin/sites/:slug',
  schema: {
    tags: ['admin'],
    summary: 'Delete a site for good (operators)',
    description: `Its versions and files go, as with the owner's delete; the slug is never reissued. ${NOT_OPERATOR}`,
    security: SECURITY,
    params: SlugParams,
    response: { 200: Type.Object({ slug: Slug, deleted: Type.Literal(true) }), ...ERRORS },
  },
  config: {
    api: { examples: () => ({ responses: { 200: { slug, deleted: true } }, error: notFoundExample }) },
  },
});

const BlockKind = Type.Union(
  [Type.Literal('email'), Type.Literal('email_domain'), Type.Literal('ip'), Type.Literal('hash')],
  {
    description:
      '`email` and `email_domain` refuse sign-in (a domain covers its subdomains); `ip` (an address or CIDR ' +
      'range) refuses anonymous publishing; `hash` (SHA-256 of a file) refuses a finalize containing it',
  },
);

export const Block = Type.Object({
  id: Type.String(),
  kind: BlockKind,
  value: Type.String(),
  reason: Type.String(),
  createdBy: NullableString,
  createdAt: Timestamp,
});

export const BlockBody = Type.Object(
  { kind: BlockKind, value: Type.String({ minLength: 1, maxLength: 320 }), reason: Reason },
  { additionalProperties: false },
);
export type BlockBody = Static<typeof BlockBody>;

const blockExample = {
  id: blockId,
  kind: 'hash',
  value: hash,
  reason: 'Phishing kit',
  createdBy: operatorId,
  createdAt: at,
};

export const addBlock = operation({
  method: 'POST',
  url: '/api/admin/blocks',
  schema: {
    tags: ['admin'],
    summary: 'Block an email, email domain, client address or range, or file hash (operators)',
    description:
      'Refusals name what refused them: sign-in 403 `SIGNIN_BLOCKED`, anonymous publish 403 ' +
      '`PUBLISH_BLOCKED`, finalize 403 `CONTENT_BLOCKED` (with `blockedPaths`). 409 when already blocked. ' +
      NOT_OPERATOR,
    security: SECURITY,
    body: BlockBody,
    response: { 201: Block, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { kind: 'hash', value: hash, reason: 'Phishing kit' },
        responses: { 201: blockExample },
        error: notFoundExample,
      }),
    },
  },
});

export const listBlocks = operation({
  method: 'GET',
  url: '/api/admin/blocks',
  schema: {
    tags: ['admin'],
    summary: 'Every block, newest first (operators)',
    description: NOT_OPERATOR,
    security: SECURITY,
    querystring: Type.Object({ kind: Type.Optional(BlockKind) }),
    response: { 200: Type.Object({ blocks: Type.Array(Block) }), ...ERRORS },
  },
  config: {
    api: { examples: () => ({ responses: { 200: { blocks: [blockExample] } }, error: notFoundExample }) },
  },
});

export const removeBlock = operation({
  method: 'DELETE',
  url: '/api/admin/blocks/:id',
  schema: {
    tags: ['admin'],
    summary: 'Remove a block (operators)',
    description: NOT_OPERATOR,
    security: SECURITY,
    params: IdParams,
    response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), ...ERRORS },
  },
  config: {
    api: { examples: () => ({ responses: { 200: { id: blockId, deleted: true } }, error: notFoundExample }) },
  },
});

export const OperatorAuditEntry = Type.Object({
  ...AuditEntry.properties,
  accountId: Type.Union([Type.String(), Type.Null()], {
    description: 'whose log the entry is in; null for an action on no account (a block)',
  }),
});

export const listAudit = operation({
  method: 'GET',
  url: '/api/admin/audit',
  schema: {
    tags: ['admin'],
    summary: "Every account's audit log, newest first (operators)",
    description: `${NOT_OPERATOR} The entries of every account as GET /api/v1/account/audit shows them, plus \`accountId\` (null for a block). \`limit\` 1-200 (default 50); \`before\` the \`id\` of the last entry of the previous page (or a time); \`account\` an account id, to read that account's log only.`,
    security: SECURITY,
    querystring: Type.Object({
      limit: Type.Optional(Type.String({ maxLength: 10 })),
      before: Type.Optional(Type.String({ maxLength: 100 })),
      account: Type.Optional(Type.String({ maxLength: 100 })),
    }),
    response: { 200: Type.Object({ entries: Type.Array(OperatorAuditEntry) }), ...ERRORS },
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
                actor: { kind: 'operator', id: operatorId },
                ip: '203.0.113.7',
                action: 'site.takedown',
                target: slug,
                details: { reason: 'Phishing', blockedHashes: 0 },
                accountId,
              },
            ],
          },
        },
        error: notFoundExample,
      }),
    },
  },
});
