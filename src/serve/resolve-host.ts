// Host resolution (CONTRACT "Hosts"): which site(s) a request's Host serves, and at which path prefix.
//
// Today: `<label>.<siteHost>` is the site whose slug is `label`. The seam for handles and custom domains
// is the `HostRoute` shape: a host maps to one or more mounts `{slug, basePath}`; a handle or an active
// custom domain will resolve to its links (a mount per link location, longest first) in the same
// `resolveSiteForHost`, and the site server already picks the mount by longest prefix.

import { isValidSlug } from '../core/slug.js';
import type { Db } from '../store/db/db.js';

/** One site mounted on a host. */
export interface SiteMount {
  readonly slug: string;
  /**
   * Path prefix the site is mounted at, without a trailing slash: `''` for the whole host, `/blog` for a
   * link at location `/blog` (the site then sees the path below it).
   */
  readonly basePath: string;
}

/** The sites a host serves, longest `basePath` first. */
export interface HostRoute {
  readonly mounts: readonly SiteMount[];
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
 * Resolves a hostname to the sites it serves, or null for an unknown host (a 404 page). One indexed
 * query at most; callers cache the answer (see catalog.ts) and drop it on `host`/`site` change events.
 */
export async function resolveSiteForHost(
  db: Db,
  siteHost: string,
  hostname: string,
): Promise<HostRoute | null> {
  const label = siteLabelOf(hostname, siteHost);
  // Custom domains (an active `domains` row and its links) plug in here.
  if (label === null || !isValidSlug(label)) return null;
  const site = await db.kysely
    .selectFrom('sites')
    .select('slug')
    .where('slug', '=', label)
    .executeTakeFirst();
  // Handles (`accounts.handle` and its links) plug in here, after the slug (CONTRACT "Hosts").
  if (site === undefined) return null;
  return { mounts: [{ slug: site.slug, basePath: '' }] };
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
