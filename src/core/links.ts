// Links (CONTRACT "Links"): one owned site mounted at a location (`/`, `/docs`, ...) of the caller's
// handle or of one of the caller's active custom domains. Serving picks the longest matching location
// and the site sees the path below it (core/hosts.ts). A site's, handle's or domain's links go
// with it.

import { randomBytes } from 'node:crypto';
import type { Link, LinkDeleted, LinkList } from '../api/links.js';
import type { ChangeBus } from '../shared/events.js';
import type { Db } from '../store/db/db.js';
import { isUniqueViolation } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { accountDomain } from '../store/db/tables/domain.js';
import {
  accountLinks,
  deleteLinksWhere,
  HANDLE_TARGET,
  insertLink,
  type LinkRow,
} from '../store/db/tables/link.js';
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { domainUrl, labelHost, labelUrl, normalizeHostname } from './hosts.js';
import { ownedSite } from './publish.js';

export const MAX_LOCATION_CHARS = 200;
/** RFC 3986 `pchar` (percent-encoded octets checked separately). */
const SEGMENT_RE = /^(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})+$/;

export interface LinkDeps {
  db: Db;
  clock: { now(): number };
  config: { scheme: string; siteDomain: string; siteHost: string };
  changes: ChangeBus;
}

/** `/`, `/docs`, `/docs/` -> `/`, `/docs`; a 400 naming the problem otherwise. */
export function normalizeLocation(input: unknown): string {
  if (input === undefined || input === null) return '/';
  if (typeof input !== 'string') throw invalid('location must be a path such as "/" or "/docs".');
  if (!input.startsWith('/')) throw invalid(`location "${input.slice(0, 100)}" must start with "/".`);
  if (input.length > MAX_LOCATION_CHARS)
    throw invalid(`location is longer than ${MAX_LOCATION_CHARS} characters.`);
  const trimmed = input === '/' ? '/' : input.replace(/\/$/, '');
  if (trimmed === '/') return '/';
  for (const segment of trimmed.slice(1).split('/')) {
    if (segment === '' || segment === '.' || segment === '..' || !SEGMENT_RE.test(segment)) {
      throw invalid(
        `location "${input.slice(0, 100)}" is not a clean path (empty, "." or ".." segments, or characters that need encoding).`,
      );
    }
  }
  return trimmed;
}

function hostOf(deps: LinkDeps, account: AccountRow, row: LinkRow): string | null {
  if (row.domain !== HANDLE_TARGET) return row.domain;
  return account.handle ? labelHost(deps.config, account.handle) : null;
}

export function linkView(deps: LinkDeps, account: AccountRow, row: LinkRow): Link {
  const path = row.location === '/' ? '/' : `${row.location}/`;
  const isHandle = row.domain === HANDLE_TARGET;
  const url = isHandle ? labelUrl(deps.config, account.handle ?? '', path) : domainUrl(row.domain, path);
  return {
    id: row.id,
    slug: row.site_slug,
    ...(isHandle ? { handle: account.handle ?? '' } : { domain: row.domain }),
    location: row.location,
    url,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** POST /api/v1/links. */
export async function createLink(deps: LinkDeps, account: AccountRow, body: unknown): Promise<Link> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('The body must be {"slug", "domain"?, "location"?}.');
  }
  const { slug, domain, location } = body as Record<string, unknown>;
  if (typeof slug !== 'string' || slug === '') throw invalid('slug is required: the site to link.');
  const loc = normalizeLocation(location);
  const site = await ownedSite(deps, account, slug);
  // A site with no live version serves nothing at the link (its first publish was refused or never
  // finalized): refused, so no link points at an empty mount.
  if (!site.current_version_id) {
    throw invalid(`Site "${slug}" is not published yet: finalize a publish of it first, then link it.`);
  }
  let target = HANDLE_TARGET;
  if (domain !== undefined && domain !== null) {
    const normalized = normalizeHostname(domain);
    const row =
      'hostname' in normalized
        ? await accountDomain(deps.db.kysely, account.id, normalized.hostname)
        : undefined;
    if (!row) throw notFound(`Domain "${String(domain).slice(0, 100)}" not found`);
    if (row.status !== 'active') {
      throw invalid(`${row.domain} is not verified yet: POST /api/v1/domains/${row.domain}/verify first.`);
    }
    target = row.domain;
  } else if (!account.handle) {
    throw invalid('This account has no handle: set one with PUT /api/v1/handle, or give a "domain".');
  }
  const row: LinkRow = {
    id: `lnk_${randomBytes(9).toString('base64url')}`,
    account_id: account.id,
    site_slug: slug,
    domain: target,
    location: loc,
    created_at: deps.clock.now(),
  };
  try {
    await deps.db.transaction(async (trx) => {
      await insertLink(trx, row);
      await recordAudit(trx, {
        accountId: account.id,
        action: 'link.create',
        target: row.id,
        details: { slug, domain: target, location: loc },
        at: row.created_at,
      });
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw invalid(
        `A site is already linked at ${loc} of ${target === HANDLE_TARGET ? 'your handle' : target}; delete that link first.`,
      );
    }
    throw err;
  }
  const host = hostOf(deps, account, row);
  if (host) await deps.changes.publish({ kind: 'host', host });
  return linkView(deps, account, row);
}

/** GET /api/v1/links. */
export async function listLinks(deps: LinkDeps, account: AccountRow): Promise<LinkList> {
  return { links: (await accountLinks(deps.db.kysely, account.id)).map((r) => linkView(deps, account, r)) };
}

/** DELETE /api/v1/links/:id. */
export async function deleteLink(deps: LinkDeps, account: AccountRow, id: string): Promise<LinkDeleted> {
  const row = await deps.db.transaction(async (trx) => {
    const [gone] = await deleteLinksWhere(trx, { id, accountId: account.id });
    if (!gone) throw notFound(`Link "${id.slice(0, 100)}" not found`);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'link.delete',
      target: gone.id,
      details: { slug: gone.site_slug, domain: gone.domain, location: gone.location },
      at: deps.clock.now(),
    });
    return gone;
  });
  const host = hostOf(deps, account, row);
  if (host) await deps.changes.publish({ kind: 'host', host });
  return { id, deleted: true as const };
}
