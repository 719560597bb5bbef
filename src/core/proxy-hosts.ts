// The proxy host allowlist (spec "Proxy host allowlist", CONTRACT "Variables, proxy hosts, proxy"): the
// exact hostnames the site proxy may reach for a site. Stored lowercase, IDN as punycode; no wildcard,
// scheme, port, path or IP literal.

import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { ProxyHostInfo } from '../api/proxy-hosts.js';
import type { Removed, Stored } from '../api/variables.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  deleteProxyHost as deleteProxyHostRow,
  type ProxyHostRow,
  proxyHosts,
  upsertProxyHosts,
} from '../store/db/tables/proxy-host.js';
import { lockSite } from '../store/db/tables/site.js';
import { invalid, notFound } from './errors.js';
import { ownedSite } from './publish.js';

export const MAX_PROXY_HOSTS_PER_SITE = 50;
/** RFC 1035 §2.3.4: 253 characters in text form, 63 per label. */
export const MAX_HOSTNAME_CHARS = 253;
const LABEL_RE = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export interface ProxyHostDeps {
  db: Db;
  clock: { now(): number };
}

/**
 * The canonical form of an allowlist entry (lowercase ASCII, IDN as punycode), or the reason it is refused.
 * Also used on the proxy's target URL, so both sides compare the same form.
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

const info = (row: ProxyHostRow): ProxyHostInfo => ({
  hostname: row.hostname,
  createdAt: new Date(Number(row.created_at)).toISOString(),
  updatedAt: new Date(Number(row.updated_at)).toISOString(),
});

/** GET .../proxy-hosts. */
export async function listProxyHosts(
  deps: ProxyHostDeps,
  account: AccountRow,
  slug: string,
): Promise<ProxyHostInfo[]> {
  await ownedSite(deps, account, slug);
  return (await proxyHosts(deps.db.kysely, slug)).map(info);
}

/** PUT .../proxy-hosts: adds the hosts, keeping the others; one bad entry refuses the request, naming it. */
export async function putProxyHosts(
  deps: ProxyHostDeps,
  account: AccountRow,
  slug: string,
  hosts: unknown,
): Promise<Stored> {
  await ownedSite(deps, account, slug);
  if (!Array.isArray(hosts))
    throw invalid('hosts must be an array of hostnames.', { hint: '{"hosts": ["api.stripe.com"]}' });
  if (hosts.length === 0) throw invalid('hosts is empty; list at least one hostname.');
  if (hosts.length > MAX_PROXY_HOSTS_PER_SITE) {
    throw invalid(
      `At most ${MAX_PROXY_HOSTS_PER_SITE} proxy hosts per site; this request has ${hosts.length}.`,
    );
  }
  const stored: string[] = [];
  for (const entry of hosts) {
    const result = normalizeHostname(entry);
    if ('problem' in result) throw invalid(`Invalid proxy host: ${result.problem}.`);
    if (!stored.includes(result.hostname)) stored.push(result.hostname);
  }
  const now = deps.clock.now();
  await deps.db.transaction(async (trx) => {
    await lockSite(trx, slug);
    const existing = new Set((await proxyHosts(trx, slug)).map((r) => r.hostname));
    const total = new Set([...existing, ...stored]).size;
    if (total > MAX_PROXY_HOSTS_PER_SITE) {
      throw invalid(
        `A site can allow at most ${MAX_PROXY_HOSTS_PER_SITE} proxy hosts; this would make ${total}. Delete some first.`,
      );
    }
    await upsertProxyHosts(
      trx,
      stored.map((hostname) => ({ site_slug: slug, hostname, created_at: now, updated_at: now })),
    );
  });
  return { ok: true, stored };
}

/** DELETE .../proxy-hosts/:hostname (given in any form the allowlist accepts, e.g. an IDN). */
export async function deleteProxyHost(
  deps: ProxyHostDeps,
  account: AccountRow,
  slug: string,
  hostname: string,
): Promise<Removed> {
  await ownedSite(deps, account, slug);
  const result = normalizeHostname(hostname);
  const canonical = 'hostname' in result ? result.hostname : hostname;
  if (!(await deleteProxyHostRow(deps.db.kysely, slug, canonical))) {
    throw notFound(`Site "${slug}" has no proxy host ${JSON.stringify(hostname)}.`);
  }
  return { ok: true, deleted: canonical };
}
