// The TLS front end's question (CONTRACT "Custom domains": GET /internal/tls-ask?domain=): may a
// certificate be issued for this host? Yes for an active custom domain and for the host of a live site or
// handle; no for anything else, so on-demand TLS cannot be made to request certificates for random names.

import type { Db } from '../store/db/db.js';
import { activeDomain, markTlsRequested } from '../store/db/tables/domain.js';
import { normalizeHostname } from './proxy-hosts.js';

export interface TlsAskDeps {
  db: Db;
  clock: { now(): number };
  config: { siteHost: string };
}

export async function tlsAllowed(deps: TlsAskDeps, input: string): Promise<boolean> {
  const normalized = normalizeHostname(input);
  if (!('hostname' in normalized)) return false;
  const host = normalized.hostname;
  const suffix = `.${deps.config.siteHost}`;
  if (host.endsWith(suffix)) {
    const label = host.slice(0, -suffix.length);
    if (label.includes('.')) return false;
    const site = await deps.db.kysely
      .selectFrom('sites')
      .select('slug')
      .where('slug', '=', label)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (site) return true;
    const account = await deps.db.kysely
      .selectFrom('accounts')
      .select('id')
      .where('handle', '=', label)
      .executeTakeFirst();
    return account !== undefined;
  }
  // Only the active entry answers for a domain; pending claims of other accounts never do.
  if (!(await activeDomain(deps.db.kysely, host))) return false;
  // sslStatus moves from provisioning to active: the front end is getting its certificate now.
  await markTlsRequested(deps.db.kysely, host, deps.clock.now());
  return true;
}
