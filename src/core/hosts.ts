// Which host serves what (CONTRACT "Hosts", "Links", "Custom domains"): the one rule, read by the site
// server (once per host, cached by serve/catalog.ts), the TLS front end's ask (core/tls-ask.ts), the
// proxy's Origin check (core/proxy.ts) and every URL the API and the dashboard show, so they cannot drift.
//
// BASE_URL's host is the API and the pages. `<label>.<site host>` is the site whose slug is `label`, else
// the handle `label`; `<slug>--<name>.<site host>` is a preview host (issue 24): the site's finalized
// version whose label is `name`, or the version its alias `name` points at (a handle taken with `--`
// before new handles lost it keeps its host first); any other name is a custom domain, by its active entry. A handle or domain serves its
// links: a mount per link location, longest first. A handle, or a domain beyond the plan's domain count,
// of an account whose plan no longer includes it answers a "paused" page: it serves nothing, gets no
// certificate and is no origin of the site; nothing is deleted. A deleted site's host serves nothing.
// Preview and alias hosts are one more HostName and one more branch of resolveHost; everything that
// reads a route (the site server, the TLS ask, certificates, the proxy's Origin check) follows.

import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { isAliasName, isVersionLabel, PREVIEW_SEPARATOR } from '../shared/preview-names.js';
import type { Db } from '../store/db/db.js';
import { type AccountRow, findAccountByHandle, findAccountById } from '../store/db/tables/account.js';
import { aliasVersion } from '../store/db/tables/alias.js';
import { activeDomain, keptDomains } from '../store/db/tables/domain.js';
import { HANDLE_TARGET, targetLinks } from '../store/db/tables/link.js';
import { slugState } from '../store/db/tables/site.js';
import { finalizedVersionByLabel } from '../store/db/tables/version.js';
import { effectivePlan, type PlanOverrides, planLimits } from './plans.js';
import { isValidSlug } from './slug.js';

/** RFC 1035 §2.3.4: 253 characters in text form, 63 per label. */
const MAX_HOSTNAME_CHARS = 253;
/** RFC 1035 §2.3.1 LDH label (lowercase: names are compared lowercased). */
const LABEL_RE = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

// ---- names -------------------------------------------------------------------------------------

/**
 * The lowercase hostname of a Host header value, without port or trailing dot (`''` when absent): how a
 * request names its host. Cheap (every request pays it); the name is looked up as it is, and an unknown
 * one serves nothing.
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
 * The canonical form of a hostname someone typed or sent (lowercase ASCII, IDN as punycode, no trailing
 * dot), or the reason it is refused: custom domains, links, proxy allowlist entries and the proxy's target,
 * the TLS ask's `domain`. No scheme, port, path, user information, wildcard or IP literal.
 */
export function normalizeHostname(input: unknown): { hostname: string } | { problem: string } {
  if (typeof input !== 'string' || input === '') return { problem: 'a hostname must be a non-empty string' };
  const shown = JSON.stringify(input.slice(0, 100));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input))
    return { problem: `${shown} has a scheme; give the hostname only` };
  if (input.includes('*')) return { problem: `${shown} is a wildcard; list each exact hostname` };
  if (/[/?#]/.test(input)) return { problem: `${shown} has a path; give the hostname only` };
  if (input.includes('@')) return { problem: `${shown} has user information; give the hostname only` };
  const bare = input.replace(/^\[|\]$/g, '');
  if (isIP(bare) !== 0) return { problem: `${shown} is an IP address; the allowlist takes hostnames only` };
  if (input.includes(':')) return { problem: `${shown} has a port; give the hostname only` };
  if (/\s/.test(input)) return { problem: `${shown} contains whitespace` };
  const ascii = domainToASCII(input.replace(/\.$/, ''));
  if (ascii === '') return { problem: `${shown} is not a valid hostname` };
  const labels = ascii.split('.');
  // A numeric last label is read as an IPv4 address by URL parsers (`127.1`, `0x7f.1`): not a hostname.
  if (/^(?:0x[0-9a-f]*|[0-9]+)$/i.test(labels[labels.length - 1] ?? '')) {
    return { problem: `${shown} is an IP address; the allowlist takes hostnames only` };
  }
  if (ascii.length > MAX_HOSTNAME_CHARS || !labels.every((l) => LABEL_RE.test(l))) {
    return { problem: `${shown} is not a valid hostname` };
  }
  return { hostname: ascii };
}

export type HostTarget = 'api' | 'site';

/** CONTRACT "Hosts": BASE_URL's host -> API and pages; anything else -> the site server. */
export function hostTarget(hostname: string, baseHost: string): HostTarget {
  if (hostname === baseHost) return 'api';
  // No Host, or an IP literal: nothing a site or custom domain can be, so the API answers
  // (lets health checks and clients reach http://127.0.0.1:PORT/api/... directly). Site hosts end in
  // a letter (a TLD or `localhost`), so the isIP check only runs for the rare candidates.
  if (hostname === '') return 'api';
  const last = hostname.charCodeAt(hostname.length - 1);
  if (hostname.charCodeAt(0) === 91 /* [ */ || (last >= 48 && last <= 57) /* digit */) {
    if (isIP(hostname.replace(/^\[|\]$/g, '')) !== 0) return 'api';
  }
  return 'site';
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

/** What a site-server hostname names, by its form alone (no lookups). */
export type HostName =
  /** `<label>.<site host>`: the site whose slug is `label`, else the handle `label`. */
  | { readonly kind: 'label'; readonly label: string }
  /**
   * `<slug>--<name>.<site host>` (`label`): the version of site `slug` whose label is `name` (a digit
   * first) or that its alias `name` (a letter first) points at.
   */
  | { readonly kind: 'preview'; readonly label: string; readonly slug: string; readonly name: string }
  /** Any other name: a custom domain. */
  | { readonly kind: 'domain'; readonly domain: string };

/**
 * The kind of host `hostname` (lowercase, as hostnameOf or normalizeHostname give it) is; null for a name
 * under the site domain that no slug or handle can have (every handle is of the slug's form too:
 * core/handle.ts takes 3 to 30 of the same characters), so it costs no lookup.
 */
export function parseHost(hostname: string, siteHost: string): HostName | null {
  const label = siteLabelOf(hostname, siteHost);
  if (label === null) return { kind: 'domain', domain: hostname };
  if (!isValidSlug(label)) return null;
  const at = label.indexOf(PREVIEW_SEPARATOR);
  if (at > 0) {
    const slug = label.slice(0, at);
    const name = label.slice(at + PREVIEW_SEPARATOR.length);
    if (isValidSlug(slug) && (isVersionLabel(name) || isAliasName(name))) {
      return { kind: 'preview', label, slug, name };
    }
  }
  return { kind: 'label', label };
}

/** `<slug>--<name>`: the one DNS label of a preview or alias host (at most 63 characters: core/aliases.ts). */
export const previewLabel = (slug: string, name: string): string => `${slug}${PREVIEW_SEPARATOR}${name}`;

/** `<label>.<site host>`: the hostname of a site or handle (as change events and the catalog name it). */
export const labelHost = (config: { siteHost: string }, label: string): string =>
  `${label}.${config.siteHost}`;

/** A URL on a site's or handle's host, in BASE_URL's scheme (CONTRACT "Identity, ownership and URLs"). */
export const labelUrl = (config: { scheme: string; siteDomain: string }, label: string, path = '/'): string =>
  `${config.scheme}://${label}.${config.siteDomain}${path}`;

/** The URL of a version's preview host or of an alias host (`name`: a version label or an alias name). */
export const previewUrl = (
  config: { scheme: string; siteDomain: string },
  slug: string,
  name: string,
): string => labelUrl(config, previewLabel(slug, name));

/** A URL on a custom domain: https, which the TLS front end serves (docs/deploy.md). */
export const domainUrl = (domain: string, path = '/'): string => `https://${domain}${path}`;

/**
 * The origins pages of a host have (CONTRACT: compared whole): a site or handle host in BASE_URL's scheme
 * with SITE_DOMAIN's port; a custom domain `https://<domain>`, and also `http://<domain>` on an http
 * BASE_URL (a local set-up without TLS).
 */
export function hostOrigins(config: HostConfig, hostname: string): string[] {
  const label = siteLabelOf(hostname, config.siteHost);
  if (label !== null) return [labelUrl(config, label, '')];
  const secure = domainUrl(hostname, '');
  return config.scheme === 'http' ? [secure, `http://${hostname}`] : [secure];
}

// ---- what a host serves ------------------------------------------------------------------------

export interface HostConfig {
  /** Lowercase hostname of SITE_DOMAIN (no port). */
  siteHost: string;
  /** SITE_DOMAIN as configured (host and port), for URLs and origins. */
  siteDomain: string;
  scheme: 'http' | 'https';
  planOverrides: PlanOverrides;
}

export interface HostDeps {
  db: Db;
  clock: { now(): number };
  config: HostConfig;
}

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
  /** A preview or alias host: this finalized version of the site, not its live one. */
  readonly versionId?: string;
}

/** The sites a host serves, longest `basePath` first. */
export interface HostRoute {
  readonly mounts: readonly SiteMount[];
  /** The answer is a page, not a site: the plan no longer includes the host, or nothing is linked. */
  readonly page?: 'paused' | 'unlinked';
  /** Epoch ms after which the route must be resolved again (a plan that runs out). */
  readonly until?: number;
  /** A preview or alias host: every answer carries `X-Robots-Tag: noindex`. */
  readonly preview?: true;
}

const PAUSED: HostRoute = { mounts: [], page: 'paused' };

/**
 * What `hostname` serves, or null for a host that serves nothing (a 404 page). A few indexed queries at
 * most; the site server caches the answer (serve/catalog.ts) and drops it on `host`/`site`/`account`
 * change events or at `until`.
 */
export async function resolveHost(deps: HostDeps, hostname: string): Promise<HostRoute | null> {
  const name = parseHost(hostname, deps.config.siteHost);
  if (name === null) return null;
  switch (name.kind) {
    case 'label':
      return labelRoute(deps, name.label);
    case 'preview':
      return previewRoute(deps, name);
    case 'domain':
      return domainRoute(deps, name.domain);
  }
}

/**
 * Whether the host is live: it serves a site, or is a handle or active domain its plan includes (linked or
 * not yet). The TLS ask's yes; a paused handle or domain and a deleted site's host are not live.
 */
export const isLiveHost = (route: HostRoute | null): route is HostRoute =>
  route !== null && route.page !== 'paused';

/**
 * Whether `origin` (a request's Origin header) is an origin of the site `slug`: a host that serves the
 * site by the rule above (its slug host, or a live handle or domain linking it), in the form pages of that
 * host have. The proxy's Origin check (CONTRACT "Variables, proxy hosts, proxy").
 */
export async function isSiteOrigin(deps: HostDeps, origin: string, slug: string): Promise<boolean> {
  if (!URL.canParse(origin)) return false;
  const { hostname } = new URL(origin);
  if (!hostOrigins(deps.config, hostname).includes(origin)) return false;
  const route = await resolveHost(deps, hostname);
  return route?.mounts.some((m) => m.slug === slug) ?? false;
}

/**
 * The route of `<label>.<site host>` by the state of a site whose slug is `label` (slugState): that site,
 * nothing for a retired slug, or undefined when no site has it (the label may be a handle: resolveHost).
 */
export function siteLabelRoute(
  site: 'live' | 'deleted' | undefined,
  label: string,
): HostRoute | null | undefined {
  if (site === 'live') return { mounts: [{ slug: label, basePath: '' }] };
  // A retired slug stays retired: no handle can take it (core/handle.ts).
  if (site === 'deleted') return null;
  return undefined;
}

/** `<label>.<site host>`: the site whose slug is `label` (a deleted one serves nothing), else the handle. */
async function labelRoute(deps: HostDeps, label: string): Promise<HostRoute | null> {
  const route = siteLabelRoute(await slugState(deps.db.kysely, label), label);
  if (route !== undefined) return route;
  const account = await findAccountByHandle(deps.db.kysely, label);
  if (account === undefined) return null;
  const now = deps.clock.now();
  if (!planLimits(effectivePlan(account, now), deps.config.planOverrides).handles) return PAUSED;
  return linkedRoute(deps, account.id, HANDLE_TARGET, planEnd(account, now));
}

/**
 * `<slug>--<name>`: a handle of that exact name first (one taken before new handles lost `--` keeps its
 * host; decisions.md, issue 24), else the live site's finalized version by label, or by alias. A deleted
 * site's previews serve nothing; a pending version has no label that resolves (status is checked).
 */
async function previewRoute(
  deps: HostDeps,
  name: Extract<HostName, { kind: 'preview' }>,
): Promise<HostRoute | null> {
  if ((await findAccountByHandle(deps.db.kysely, name.label)) !== undefined)
    return labelRoute(deps, name.label);
  if ((await slugState(deps.db.kysely, name.slug)) !== 'live') return null;
  const versionId = isVersionLabel(name.name)
    ? (await finalizedVersionByLabel(deps.db.kysely, name.slug, name.name))?.id
    : await aliasVersion(deps.db.kysely, name.slug, name.name);
  if (versionId === undefined) return null;
  return { mounts: [{ slug: name.slug, basePath: '', versionId }], preview: true };
}

/** A custom domain: its active entry only (pending entries of other accounts may exist), within the plan. */
async function domainRoute(deps: HostDeps, domain: string): Promise<HostRoute | null> {
  const entry = await activeDomain(deps.db.kysely, domain);
  if (entry === undefined) return null;
  const account = await findAccountById(deps.db.kysely, entry.account_id);
  if (account === undefined) return null;
  const now = deps.clock.now();
  // A smaller plan keeps serving its oldest active domains, up to its count.
  const allowed = planLimits(effectivePlan(account, now), deps.config.planOverrides).maxCustomDomains;
  if (!(await keptDomains(deps.db.kysely, account.id, allowed)).includes(domain)) return PAUSED;
  // Only a domain a downgrade would pause needs to be looked at again when the paid period ends.
  const freeCount = planLimits('free', deps.config.planOverrides).maxCustomDomains;
  return linkedRoute(deps, account.id, domain, allowed > freeCount ? planEnd(account, now) : undefined);
}

/** When a Hobby plan with an end date runs out (undefined: no end, or not Hobby). */
function planEnd(account: Pick<AccountRow, 'plan' | 'plan_until'>, now: number): number | undefined {
  return account.plan === 'hobby' && account.plan_until !== null && account.plan_until > now
    ? account.plan_until
    : undefined;
}

async function linkedRoute(
  deps: HostDeps,
  accountId: string,
  target: string,
  until: number | undefined,
): Promise<HostRoute> {
  const links = await targetLinks(deps.db.kysely, accountId, target);
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
