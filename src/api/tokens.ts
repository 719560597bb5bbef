// Deploy tokens (CONTRACT "Deploy tokens"): POST/GET /api/v1/publish/:slug/tokens, DELETE
// .../tokens/:id. The owner's key or session manages them; the secret is in the create answer only.

import { type Static, Type } from 'typebox';
import {
  DEFAULT_TOKEN_DAYS,
  MAX_TOKEN_DAYS,
  MAX_TOKEN_NAME_CHARS,
  MAX_TOKENS_PER_SITE,
  TOKEN_NAME_PATTERN,
} from '../core/tokens.js';
import { ERRORS, errorExample, operation, SECURITY, Slug, SlugParams, Timestamp } from './common.js';
import { at, siteMissing, slug } from './examples.js';

const tokenId = 'dtk_Vr3dG0m6Q2yk3PA1xXwPqg';
const expires = '2027-02-22T09:30:00.000Z';
/** Shaped like a token (so examples read right) but never valid: the redaction rules mask it in logs too. */
const tokenExample = 'svc_site_0123456789abcdef0123456789abcdef';

/** What the scope rule says, in every description that needs it. */
export const DEPLOY_TOKEN_SCOPE =
  'A deploy token (Authorization: Bearer svc_site_...) may call only PUT /api/v1/publish/:slug of its own ' +
  'site, the upload addresses, finalize and aliases; every other endpoint answers it 403 FORBIDDEN.';

export const TokenName = Type.String({
  title: 'token name',
  minLength: 1,
  maxLength: MAX_TOKEN_NAME_CHARS,
  pattern: TOKEN_NAME_PATTERN.source,
  description: `1 to ${MAX_TOKEN_NAME_CHARS} letters, digits, spaces and . _ : / # ( ) @ + -, starting with a letter or digit (e.g. "GitHub Actions")`,
});

export const CreateTokenBody = Type.Object(
  {
    name: TokenName,
    expiresInDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_TOKEN_DAYS,
        description: `days until the token stops working: a whole number from 1 to ${MAX_TOKEN_DAYS} (default ${DEFAULT_TOKEN_DAYS})`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const CreatedDeployToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  token: Type.String({
    description:
      'the secret (`svc_site_` + 32 hex digits): shown only in this answer; store it as a CI secret',
  }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});
export type CreatedDeployToken = Static<typeof CreatedDeployToken>;

export const DeployTokenInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], {
    description: 'the last request it authenticated (to the minute); null = never used',
  }),
});
export type DeployTokenInfo = Static<typeof DeployTokenInfo>;
export const DeployTokenList = Type.Object({ tokens: Type.Array(DeployTokenInfo) });
export type DeployTokenList = Static<typeof DeployTokenList>;
export const RevokedDeployToken = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export type RevokedDeployToken = Static<typeof RevokedDeployToken>;

export const createToken = operation({
  method: 'POST',
  url: '/api/v1/publish/:slug/tokens',
  schema: {
    tags: ['tokens'],
    summary: 'Create a deploy token for this site (the secret is shown once)',
    description:
      `For CI: a token that may publish this site and nothing else. ${DEPLOY_TOKEN_SCOPE} Its calls count in ` +
      `the owner's rate-limit window. At most ${MAX_TOKENS_PER_SITE} unexpired tokens per site. Only the ` +
      "owner's API key or web session may create, list and revoke tokens (a token may not).",
    security: SECURITY,
    params: SlugParams,
    body: CreateTokenBody,
    response: { 201: CreatedDeployToken, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { name: 'GitHub Actions', expiresInDays: 90 },
        responses: {
          201: {
            id: tokenId,
            name: 'GitHub Actions',
            token: tokenExample,
            expiresAt: expires,
            createdAt: at,
          },
        },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          `Invalid request: body.expiresInDays must be at most ${MAX_TOKEN_DAYS}.`,
          'See /api/openapi.json for the expected shape.',
        ),
      }),
    },
  },
});

export const listTokens = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/tokens',
  schema: {
    tags: ['tokens'],
    summary: "The site's deploy tokens (never their secrets)",
    description: 'Oldest first; expired tokens stay listed for 30 days.',
    security: SECURITY,
    params: SlugParams,
    response: { 200: DeployTokenList, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: {
            tokens: [
              { id: tokenId, name: 'GitHub Actions', expiresAt: expires, createdAt: at, lastUsedAt: null },
            ],
          },
        },
        error: siteMissing,
      }),
    },
  },
});

export const revokeToken = operation({
  method: 'DELETE',
  url: '/api/v1/publish/:slug/tokens/:id',
  schema: {
    tags: ['tokens'],
    summary: 'Revoke a deploy token (it stops working at once)',
    security: SECURITY,
    params: Type.Object({ slug: Slug, id: Type.String({ maxLength: 100 }) }),
    response: { 200: RevokedDeployToken, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: { 200: { id: tokenId, deleted: true } },
        error: errorExample('NOT_FOUND', 404, `Site "${slug}" has no deploy token "${tokenId}"`),
      }),
    },
  },
});
