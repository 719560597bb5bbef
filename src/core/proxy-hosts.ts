// The proxy host allowlist (spec "Proxy host allowlist", CONTRACT "Variables, proxy hosts, proxy"): the
// exact hostnames the site proxy may reach for a site. Stored in the one hostname form
// (core/hosts.ts normalizeHostname: lowercase, IDN as punycode; no wildcard, scheme, port, path or IP literal).

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
import { recordAudit } from './audit.js';
import { invalid, notFound } from './errors.js';
import { normalizeHostname } from './hosts.js';
import { ownedSite } from './publish.js';

export const MAX_PROXY_HOSTS_PER_SITE = 50;

export interface ProxyHostDeps {
  db: Db;
  clock: { now(): number };
}

const info = (row: ProxyHostRow): ProxyHostInfo => ({
  hostname: row.hostname,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
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
    await recordAudit(trx, {
      accountId: account.id,
      action: 'proxy_host.add',
      target: slug,
      details: { hostnames: stored },
      at: now,
    });
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
  await deps.db.transaction(async (trx) => {
    if (!(await deleteProxyHostRow(trx, slug, canonical))) {
      throw notFound(`Site "${slug}" has no proxy host ${JSON.stringify(hostname)}.`);
    }
    await recordAudit(trx, {
      accountId: account.id,
      action: 'proxy_host.delete',
      target: slug,
      details: { hostname: canonical },
      at: deps.clock.now(),
    });
  });
  return { ok: true, deleted: canonical };
}
