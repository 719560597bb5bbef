// Rate limiting of /api/ requests (spec "Rate limits", CONTRACT "Rate limits"). Also resolves the
// caller's account from the API key once per request: the limit is the account's when the key is
// valid, else the client IP's anonymous limit, checked before any handler answers 401.
// A deploy token (`svc_site_...`, core/tokens.ts) resolves to its site owner's account, so its calls count
// in the owner's window; the scope rule below then lets it reach only routes marked `deployToken: true`,
// of its own site, and answers every other route 403 FORBIDDEN (a new route is closed to tokens by default).

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { limitKey } from '../core/client-address.js';
import { ApiError, unauthorized } from '../core/errors.js';
import { checkRateLimit, type RateDecision } from '../core/rate-limit.js';
import { accountForAuthorization } from '../core/signin.js';
import { type DeployTokenCaller, deployTokenCaller, isDeployTokenAuthorization } from '../core/tokens.js';
import { UPLOAD_PATH_PREFIX } from '../core/upload-token.js';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import type { RateStore } from '../store/rate/types.js';
import { unavailable } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's account when a valid API key was sent (resolved by the rate-limit hook). */
    account: AccountRow | null;
    rate: RateDecision | null;
    /** The deploy token the request authenticated with (then `account` is its site's owner). */
    deployToken: DeployTokenCaller | null;
  }
}

/**
 * Neither counted nor given headers (CONTRACT "Rate limits"); `path` as routedPath gives it. The upload
 * PUTs and the payment callback; the API's own definition (the /docs page fetches it, so one visit must not
 * spend a new user's anonymous window); every CORS preflight (the browser sends it, not the caller's code).
 */
export function isRateExempt(method: string, path: string): boolean {
  return (
    method === 'OPTIONS' ||
    ((method === 'GET' || method === 'HEAD') && path === OPENAPI_PATH) ||
    (method === 'PUT' && path.startsWith('/api/v1/_upload/')) ||
    (method === 'POST' && path === '/api/billing/webhook')
  );
}

const OPENAPI_PATH = '/api/openapi.json';
/** The site proxy's calls: counted in their own window per visitor and site (http/proxy.ts), not here. */
export const PROXY_ROUTE = '/api/v1/proxy/:slug';

/** Counted by the proxy's own limiter (core/proxy-rate.ts) instead of the caller's API window. */
export function hasOwnWindow(method: string, path: string): boolean {
  return method === 'POST' && path === PROXY_ROUTE;
}

/**
 * The path the router serves a request under, which is what the limit must count: the matched route's
 * pattern, else the target's path decoded as the router decodes it. The raw target is not enough: the
 * router serves `/%61pi/v1/publish` and the absolute form `http://host/api/v1/publish` (RFC 9112 §3.2.2)
 * as `/api/v1/publish`, and a limit keyed on the raw text let both through uncounted.
 */
export function routedPath(req: FastifyRequest): string {
  const route = req.routeOptions?.url;
  if (route) return route;
  let target = req.url;
  if (!target.startsWith('/')) {
    try {
      target = new URL(target).pathname;
    } catch {
      return target;
    }
  }
  const path = target.split(/[?#]/, 1)[0]!;
  try {
    return decodeURIComponent(path).replace(/\/{2,}/g, '/');
  } catch {
    return path;
  }
}

/** What the limiter reads: keys (to find the account), the counters and the limits per plan. */
export interface RateLimitDeps {
  db: Db;
  clock: Clock;
  rate: RateStore;
  limits: Config['rateLimits'];
}

export function registerRateLimit(app: FastifyInstance, deps: RateLimitDeps): void {
  app.decorateRequest('account', null);
  app.decorateRequest('rate', null);
  app.decorateRequest('deployToken', null);

  app.addHook('onRequest', (req, reply) => limitRequest(deps, req, reply));
  // Counted first (a refused token call still spends the owner's window), then scoped.
  app.addHook('onRequest', (req) => checkDeployTokenScope(deps, req));

  // An operation that needs a key (its schema's `security`) answers 401 to a caller without one before its
  // body is validated: who is asking comes first, and a client without a key learns that, not a field.
  app.addHook('preValidation', async (req) => {
    const schema = req.routeOptions.schema as { security?: unknown[] } | undefined;
    // /api/admin/ answers 404 to everyone but the operators, the keyless too (CONTRACT "Operators").
    if (schema?.security?.length && !req.account && !routedPath(req).startsWith('/api/admin/'))
      throw unauthorized();
  });

  // Error replies may have been reset by the framework; put the window headers back on every answer.
  app.addHook('onSend', (req, reply, payload, done) => {
    const d = req.rate;
    if (d && !reply.hasHeader('X-RateLimit-Limit')) {
      reply.headers({
        'X-RateLimit-Limit': String(d.limit),
        'X-RateLimit-Remaining': String(d.remaining),
        'X-RateLimit-Reset': String(d.resetAtS),
      });
    }
    done(null, payload);
  });
}

/**
 * Counts an /api/ request against its window and sets the window headers; throws 429 past the limit and
 * 503 when the shared counter cannot be reached. Also resolves the caller's account (req.account).
 */
export async function limitRequest(
  deps: RateLimitDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const path = routedPath(req);
  if (!path.startsWith('/api/') || isRateExempt(req.method, path) || hasOwnWindow(req.method, path)) return;
  const header = req.headers.authorization;
  let account: AccountRow | null;
  if (isDeployTokenAuthorization(header)) {
    const caller = await deployTokenCaller(deps.db, header, deps.clock.now());
    account = caller?.account ?? null;
    req.deployToken = caller?.token ?? null;
  } else {
    account = (await accountForAuthorization(deps.db, header, deps.clock.now())) ?? null;
  }
  req.account = account;
  const limit = account ? deps.limits[account.plan] : deps.limits.anonymous;
  const subject = account ? `acct:${account.id}` : `ip:${limitKey(req.clientAddress)}`;
  let decision: RateDecision;
  try {
    decision = await checkRateLimit(deps.rate, subject, limit, deps.clock.now());
  } catch (err) {
    // Fail closed: without the shared counter no limit can be promised (decisions.md).
    throw unavailable(err);
  }
  req.rate = decision;
  reply.headers({
    'X-RateLimit-Limit': String(decision.limit),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(decision.resetAtS),
  });
  if (!decision.allowed) {
    throw new ApiError(
      'RATE_LIMITED',
      `Rate limit of ${decision.limit} requests per hour exceeded; try again later (after ${new Date(decision.resetAtS * 1000).toISOString()}).`,
      { headers: { 'Retry-After': String(decision.retryAfterS) } },
    );
  }
}

/** The caller's account, or 401 UNAUTHORIZED. */
export function requireAccount(req: FastifyRequest): AccountRow {
  if (!req.account) throw unauthorized();
  // The scope rule already refused a token here; kept so a handler reached some other way stays closed.
  if (req.deployToken && !deployTokenMayCall(req, req.deployToken)) throw tokenForbidden(req.deployToken);
  return req.account;
}

/** The route's `config.deployToken` (src/api/common.ts Operation). */
const markedForTokens = (req: FastifyRequest): boolean =>
  (req.routeOptions.config as { deployToken?: unknown } | undefined)?.deployToken === true;

/** A route whose path names a site (`:slug`): a token may only call it for its own site. */
const namesSite = (req: FastifyRequest): boolean => /(^|\/):slug(\/|$)/.test(req.routeOptions.url ?? '');

/**
 * The upload addresses: marked for tokens without a `:slug`, because each address carries its own signature
 * (bound to one version of one site), which a token neither needs nor widens.
 */
const isSignedUpload = (req: FastifyRequest): boolean =>
  (req.routeOptions.url ?? '').startsWith(UPLOAD_PATH_PREFIX);

/**
 * The scope rule of deploy tokens: a route marked `deployToken: true` whose path's `:slug` is the token's
 * site, or the upload addresses. A marked route that names no site in its path (its site coming from the
 * body, the query, a version id or a differently named parameter) is refused: the rule cannot tell which
 * site it acts on, so it fails closed rather than letting a token reach every site through it.
 */
export function deployTokenMayCall(req: FastifyRequest, token: DeployTokenCaller): boolean {
  if (!markedForTokens(req)) return false;
  if (!namesSite(req)) return isSignedUpload(req);
  return (req.params as { slug?: unknown } | undefined)?.slug === token.slug;
}

/**
 * A field of a token-allowed route that only the owner may send: 403 FORBIDDEN when a deploy token sent it.
 * The publish body's `viewer` sets the site's title, description and preview image, the same columns as
 * PATCH .../metadata, which a token may not call; so a token may not set them through the publish either.
 */
export function refuseOwnerField(req: FastifyRequest, present: boolean, what: string): void {
  if (!req.deployToken || !present) return;
  throw new ApiError(
    'FORBIDDEN',
    `A deploy token may publish files only; ${what} needs the owner's API key.`,
    {
      hint: 'Leave the field out of a token\u2019s publish; set it with SLIPWAY_API_KEY (or in the dashboard).',
    },
  );
}

const tokenForbidden = (token: DeployTokenCaller) =>
  new ApiError(
    'FORBIDDEN',
    `A deploy token may only publish its own site ("${token.slug}"); this request needs the owner's API key.`,
    { hint: 'Deploy tokens are for CI publishes; use the owner key (SLIPWAY_API_KEY) for anything else.' },
  );

/**
 * Refuses a request that carries a valid deploy token with 403 FORBIDDEN unless the route lets tokens in
 * (deployTokenMayCall). An unknown, revoked or expired token is no caller at all: the route answers it as
 * it answers an unknown key (401 where a key is needed). An unmatched URL keeps its 404.
 */
export async function checkDeployTokenScope(deps: RateLimitDeps, req: FastifyRequest): Promise<void> {
  const header = req.headers.authorization;
  if (!isDeployTokenAuthorization(header) || req.routeOptions.url === undefined) return;
  // The operators' API answers a token 404 itself (src/http/admin.ts): it is not there for anyone else.
  if (req.routeOptions.url.startsWith('/api/admin/')) return;
  if (markedForTokens(req) && isSignedUpload(req)) return;
  let token = req.deployToken;
  // Routes the limiter does not count (pages, operations, the proxy) resolved no caller: look it up here.
  if (token === null && req.rate === null) {
    token = (await deployTokenCaller(deps.db, header, deps.clock.now()))?.token ?? null;
  }
  if (token !== null && !deployTokenMayCall(req, token)) throw tokenForbidden(token);
}
