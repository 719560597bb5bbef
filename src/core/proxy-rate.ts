// The site proxy's rate limit (CONTRACT "Rate limits"): the calls a site's visitors make are counted in
// their own hour-aligned window per visitor IP and site (RATE_LIMIT_PROXY), not in the API's anonymous or
// account windows, under a ceiling per site and window that follows the owner's plan, so one visitor
// cannot spend a site's budget and a site cannot be used as an unbounded relay. Same RateStore as every
// other limit (memory, or Redis shared by the nodes).

import type { Db } from '../store/db/db.js';
import { findAccountById } from '../store/db/tables/account.js';
import type { SiteRow } from '../store/db/tables/site.js';
import type { RateStore } from '../store/rate/types.js';
import { ApiError } from './errors.js';
import { effectivePlan } from './plans.js';
import { checkRateLimit, peekRateLimit, type RateDecision } from './rate-limit.js';

/** The per-site ceiling is RATE_LIMIT_PROXY times this, by the owner's plan (no owner: anonymous). */
export const PROXY_SITE_CEILING_FACTOR = { anonymous: 10, free: 10, hobby: 100 } as const;

export interface ProxyRateDeps {
  db: Db;
  clock: { now(): number };
  rate: RateStore;
  config: { proxyRateLimit: number };
}

/** The ceiling of all visitors' calls to one site per window. */
export async function siteProxyCeiling(
  deps: ProxyRateDeps,
  site: Pick<SiteRow, 'owner_id'>,
): Promise<number> {
  let plan: keyof typeof PROXY_SITE_CEILING_FACTOR = 'anonymous';
  if (site.owner_id !== null) {
    const owner = await findAccountById(deps.db.kysely, site.owner_id);
    if (owner) plan = effectivePlan(owner, deps.clock.now());
  }
  return deps.config.proxyRateLimit * PROXY_SITE_CEILING_FACTOR[plan];
}

/**
 * Counts one proxy call of `visitor` (its limit key) to `site`: first the visitor's window, then, if that
 * allowed it, the site's. Returns the tighter of the two decisions (the one with fewer calls left; the
 * visitor's on a tie), which the answer's X-RateLimit-* headers describe; throws 429 RATE_LIMITED past
 * either. A call the visitor's window refused does not spend the site's.
 */
export async function limitProxyCall(
  deps: ProxyRateDeps,
  site: Pick<SiteRow, 'slug' | 'owner_id'>,
  visitor: string,
): Promise<RateDecision> {
  const now = deps.clock.now();
  const mine = await checkRateLimit(
    deps.rate,
    visitorKey(site.slug, visitor),
    deps.config.proxyRateLimit,
    now,
  );
  if (!mine.allowed) {
    throw rateLimited(
      mine,
      `This visitor called the site proxy of "${site.slug}" ${mine.limit} times this hour (the limit per visitor and site); try again later (after ${resetText(mine)}).`,
    );
  }
  const ceiling = await siteProxyCeiling(deps, site);
  const all = await checkRateLimit(deps.rate, `proxy:${site.slug}:site`, ceiling, now);
  if (!all.allowed) {
    throw rateLimited(
      all,
      `The site "${site.slug}" reached its ceiling of ${all.limit} proxy calls this hour for all its visitors together; try again later (after ${resetText(all)}).`,
    );
  }
  return all.remaining < mine.remaining ? all : mine;
}

const visitorKey = (slug: string, visitor: string) => `proxy:${slug}:ip:${visitor}`;

/**
 * The visitor's window for a call that was refused before it was counted (disabled proxy, unknown site,
 * foreign origin, bad slug): every API answer carries the window headers (spec), and for the proxy they
 * describe this window (CONTRACT), so the refusal shows it as it stands, unchanged.
 */
export function peekProxyWindow(deps: ProxyRateDeps, slug: string, visitor: string): Promise<RateDecision> {
  return peekRateLimit(deps.rate, visitorKey(slug, visitor), deps.config.proxyRateLimit, deps.clock.now());
}

const resetText = (d: RateDecision) => new Date(d.resetAtS * 1000).toISOString();

/** 429 with the headers of the window that refused (X-RateLimit-*, Retry-After). */
const rateLimited = (d: RateDecision, message: string) =>
  new ApiError('RATE_LIMITED', message, {
    headers: { ...rateHeaders(d), 'Retry-After': String(d.retryAfterS) },
  });

export const rateHeaders = (d: RateDecision): Record<string, string> => ({
  'X-RateLimit-Limit': String(d.limit),
  'X-RateLimit-Remaining': String(d.remaining),
  'X-RateLimit-Reset': String(d.resetAtS),
});
