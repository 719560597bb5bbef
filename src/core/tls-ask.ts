// The TLS front end's question (CONTRACT "Custom domains": GET /internal/tls-ask?domain=): may a
// certificate be issued for this host? Yes exactly when the host is live by the one host rule
// (core/hosts.ts: a site's host, a handle or an active custom domain its plan includes); no for anything
// else, so on-demand TLS cannot be made to request certificates for random names.

import { markTlsRequested } from '../store/db/tables/domain.js';
import { type HostDeps, isLiveHost, normalizeHostname, parseHost, resolveHost } from './hosts.js';
import type { WebhookEvents } from './webhooks.js';

export type TlsAskDeps = HostDeps & { events?: WebhookEvents };

export async function tlsAllowed(deps: TlsAskDeps, input: string): Promise<boolean> {
  const normalized = normalizeHostname(input);
  if (!('hostname' in normalized)) return false;
  const host = normalized.hostname;
  if (!isLiveHost(await resolveHost(deps, host))) return false;
  // sslStatus moves from provisioning to active: the front end is getting its certificate now.
  if (parseHost(host, deps.config.siteHost)?.kind === 'domain') {
    const account = await markTlsRequested(deps.db.kysely, host, deps.clock.now());
    if (account !== undefined) {
      await deps.events?.emit(account, { type: 'domain.certificate_active', data: { domain: host } });
    }
  }
  return true;
}
