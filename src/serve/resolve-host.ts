// Host resolution (CONTRACT "Hosts", "Links"): which site(s) a request's Host serves, and at which path.
//
// `<label>.<siteHost>` is the site whose slug is `label`, else the handle `label`; any other host is an
// active custom domain. A handle or domain serves its links: a mount per link location, longest first
// (the site server picks the mount by longest prefix). A handle, or a domain beyond the plan's domain
// count, of an account whose plan no longer includes it answers a "paused" page; nothing is deleted.

import { effectivePlan, type PlanOverrides, planLimits } from '../core/plans.js';
import { isValidSlug } from '../core/slug.js';
import type { Db } from '../store/db/db.js';
import { activeDomain } from '../store/db/tables/domain.js';
import { HANDLE_TARGET, targetLinks } from '../store/db/tables/link.js';
/** One site mounted on a host. */
export interface SiteMount {
  readonly slug: string;
  /**
   * Path prefix the site is mounted at, without a trailing slash: `''` for the whole host, `/blog` for a
   * link at location `/blog` (the site then sees the path below it).
   */
  readonly basePath: string;
  /** Epoch ms until which this mount may be served from memory (the account's paid Hobby period). */
  readonly until?: number;
}

/** The sites a host serves, longest `basePath` first. */
export interface HostRoute {
  readonly mounts: readonly SiteMount[];
  /** The answer is a page, not a site: the plan no longer includes the host, or nothing is linked. */
  readonly page?: 'paused' | 'unlinked';
  /** Epoch ms after which the route must be resolved again (a plan that runs out). */
  readonly until?: number;
}

export interface HostResolution {
  /** Host of SITE_DOMAIN (no port). */
  siteHost: string;
  planOverrides: PlanOverrides;
  now(): number;
}

/**
 * The lowercase hostname of a Host header value, without port or trailing dot (`''` when absent).
 * Same rule as the host router in app.ts (kept here so the site server does not import the app).
 */
export function hostnameOf(hostHeader: string | undefined): string {
  if (hostHeader === undefined || hostHeader === '') return '';
  let host = hostHeader.toLowerCase();
  if (host.charCodeAt(0) === 0x5b /* [ */) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  return host.charCodeAt(host.length - 1) === 0x2e /* . */ ? host.slice(0, -1) : host;
}

/**
 * The single DNS label in front of the site domain (`abc.example.com` under `example.com` -> `abc`), or
 * null when the hostname is not exactly one label under it (a custom domain, or a deeper name).
 */
export function siteLabelOf(hostname: string, siteHost: string): string | null {
  const labelEnd = hostname.length - siteHost.length - 1;
  if (labelEnd <= 0 || !hostname.endsWith(siteHost) || hostname.charCodeAt(labelEnd) !== 0x2e) return null;
  const label = hostname.slice(0, labelEnd);
  return label.includes('.') ? null : label;
}

/**
 * Resolves a hostname to the sites it serves, or null for an unknown host (a 404 page). A few indexed
 * queries at most; callers cache the answer (see catalog.ts) and drop it on `host`/`site`/`account` change
 * events or at `until`.
 */
export async function resolveSiteForHost(
  db: Db,
  options: HostResolution,
  hostname: string,
): Promise<HostRoute | null> {
  const label = siteLabelOf(hostname, options.siteHost);
  if (label !== null) {
    if (!isValidSlug(label) && !/^[a-z0-9-]{1,63}$/.test(label)) return null;
    const site = await db.kysely
      .selectFrom('sites')
      .select('slug')
      .where('slug', '=', label)
      .executeTakeFirst();
    if (site !== undefined) return { mounts: [{ slug: site.slug, basePath: '' }] };
    // Not a slug: the handle `label` (handles and slugs never collide, core/handle.ts).
    const account = await db.kysely
      .selectFrom('accounts')
      .select(['id', 'plan', 'plan_until'])
      .where('handle', '=', label)
      .executeTakeFirst();
    if (account === undefined) return null;
    const now = options.now();
    if (!planLimits(effectivePlan(account, now), options.planOverrides).handles)
      return { mounts: [], page: 'paused' };
    return linkedRoute(db, account.id, HANDLE_TARGET, planEnd(account, now));
  }
  // The active entry only: a domain may also have pending entries of other accounts claiming it.
  const domain = await activeDomain(db.kysely, hostname);
  if (domain === undefined) return null;
  const account = await db.kysely
    .selectFrom('accounts')
    .select(['id', 'plan', 'plan_until'])
    .where('id', '=', domain.account_id)
    .executeTakeFirstOrThrow();
  const now = options.now();
  // A smaller plan keeps serving its oldest active domains, up to its count.
  const allowed = planLimits(effectivePlan(account, now), options.planOverrides).maxCustomDomains;
  const kept = await db.kysely
    .selectFrom('domains')
    .select('domain')
    .where('account_id', '=', account.id)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .orderBy('domain')
    .limit(allowed)
    .execute();
  if (!kept.some((d) => d.domain === hostname)) return { mounts: [], page: 'paused' };
  // Only a domain a downgrade would pause needs to be looked at again when the paid period ends.
  const until =
    allowed > planLimits('free', options.planOverrides).maxCustomDomains ? planEnd(account, now) : undefined;
  return linkedRoute(db, account.id, hostname, until);
}

/** When a Hobby plan with an end date runs out (undefined: no end, or not Hobby). */
function planEnd(account: { plan: string; plan_until: number | null }, now: number): number | undefined {
  return account.plan === 'hobby' && account.plan_until !== null && Number(account.plan_until) > now
    ? Number(account.plan_until)
    : undefined;
}

async function linkedRoute(
  db: Db,
  accountId: string,
  target: string,
  until: number | undefined,
): Promise<HostRoute> {
  const links = await targetLinks(db.kysely, accountId, target);
  const mounts = links.map((l) => ({
    slug: l.site_slug,
    basePath: l.location === '/' ? '' : l.location,
    ...(until === undefined ? {} : { until }),
  }));
  const route = mounts.length === 0 ? { mounts, page: 'unlinked' as const } : { mounts };
  return until === undefined ? route : { ...route, until };
}

/**
 * The mount serving `rawPath` (the request path, still percent-encoded, without query) and the path the
 * site sees below it; null when no mount covers the path. A mount at `/blog` covers `/blog/...` (the
 * site sees `/...`) and `/blog` itself, for which `sitePath` is `''`: the caller redirects it to `/blog/`
 * so that relative links resolve inside the mount.
 */
export function mountFor(route: HostRoute, rawPath: string): { mount: SiteMount; sitePath: string } | null {
  for (const mount of route.mounts) {
    const base = mount.basePath;
    if (base === '') return { mount, sitePath: rawPath };
    if (!rawPath.startsWith(base)) continue;
    if (rawPath.length === base.length) return { mount, sitePath: '' };
    if (rawPath.charCodeAt(base.length) === 0x2f) return { mount, sitePath: rawPath.slice(base.length) };
  }
  return null;
}
