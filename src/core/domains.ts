// Custom domains (spec "Custom domains", CONTRACT "Custom domains"): an account adds a domain, points
// its DNS at the service (CNAME to CNAME_TARGET, or A/AAAA to the target's addresses at an apex) and
// proves ownership with a TXT record; verify looks both up through DNS_SERVERS. Free 1, Hobby 5.
//
// Ownership is decided by DNS, not by who asked first: several accounts may hold the same domain pending,
// each with its own TXT token; the first to verify gets it and the other pending entries are dropped (their
// owners are told why when they ask about it). Pending entries expire after PENDING_DOMAIN_TTL_MS (the
// sweeper removes them).

import { randomBytes } from 'node:crypto';
import { parse as parseDomain } from 'tldts';
import type {
  DnsRecord,
  Domain,
  DomainAdded,
  DomainDeleted,
  DomainList,
  DomainVerification,
} from '../api/domains.js';
import type { ChangeBus } from '../shared/events.js';
import type { Db } from '../store/db/db.js';
import { isUniqueViolation } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  accountDomain,
  accountDomains,
  activateDomain,
  activeDomain,
  type DomainRow,
  deleteDomainRow,
  deletePendingClaims,
  insertDomain,
} from '../store/db/tables/domain.js';
import { deleteLinksWhere } from '../store/db/tables/link.js';
import type { DnsLookups } from '../store/dns/resolve.js';
import { type AuditEntryInput, recordAudit } from './audit.js';
import { ApiError, invalid, notFound } from './errors.js';
import { normalizeHostname } from './hosts.js';
import { type PlanOverrides, planLimits } from './plans.js';
import type { WebhookEvents } from './webhooks.js';

export const TXT_PREFIX = '_service.';
export const TXT_VALUE_PREFIX = 'service-verify=';
/** A domain not verified this long after it was added is removed by the sweeper (it frees the name's claim). */
export const PENDING_DOMAIN_TTL_MS = 7 * 24 * 3_600_000;

export interface DomainDeps {
  db: Db;
  clock: { now(): number };
  config: { siteHost: string; baseHost: string; cnameTarget: string; planOverrides: PlanOverrides };
  dns: DnsLookups;
  changes: ChangeBus;
  /** Reports `domain.verified` (webhooks). */
  events?: WebhookEvents;
}

/**
 * `sslStatus` (decisions.md): `pending` until the domain is verified (no certificate is issued for it);
 * `provisioning` once verified, until the TLS front end first asks for a certificate (on the first HTTPS
 * connection; with the service's own TLS listener, until its certificate is served); `active` from then
 * on. `sslError` tells why the last on-demand order failed while it is provisioning.
 */
export type SslStatus = 'pending' | 'provisioning' | 'active';

/** A registrable domain by the ICANN section of the Public Suffix List (`example.com`, `example.co.uk`). */
export function isApexDomain(domain: string): boolean {
  const parsed = parseDomain(domain, { allowPrivateDomains: false });
  return parsed.isIcann === true && parsed.domain === domain;
}

/** The canonical form of a domain to add, or a 400 naming what is wrong. */
export function normalizeDomain(input: unknown, config: DomainDeps['config']): string {
  const result = normalizeHostname(typeof input === 'string' ? input.trim() : input);
  if ('problem' in result) throw invalid(`Invalid domain: ${result.problem}.`);
  const domain = result.hostname;
  const parsed = parseDomain(domain, { allowPrivateDomains: false });
  // A name under a suffix (`shop.example.com`, also under reserved TLDs such as `.example` or `.test`),
  // never a suffix itself (`com`, `co.uk`) nor a single label.
  if (!domain.includes('.') || parsed.domain === null || domain.endsWith('.localhost')) {
    throw invalid(`Invalid domain: "${domain}" is not a domain name under a public suffix.`);
  }
  for (const own of [config.siteHost, config.baseHost]) {
    if (domain === own || domain.endsWith(`.${own}`)) {
      throw invalid(`Invalid domain: "${domain}" is one of this service's own hosts.`);
    }
  }
  return domain;
}

function sslStatusOf(row: DomainRow): SslStatus {
  if (row.status !== 'active') return 'pending';
  return row.tls_requested_at === null ? 'provisioning' : 'active';
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function domainView(row: DomainRow): Domain {
  return {
    domain: row.domain,
    status: row.status,
    sslStatus: sslStatusOf(row),
    ...(row.tls_error !== null && sslStatusOf(row) === 'provisioning' ? { sslError: row.tls_error } : {}),
    isApex: isApexDomain(row.domain),
    verificationTxtName: `${TXT_PREFIX}${row.domain}`,
    verificationTxtValue: `${TXT_VALUE_PREFIX}${row.token}`,
    createdAt: new Date(row.created_at).toISOString(),
    verifiedAt: iso(row.verified_at),
  };
}

function dnsRecords(config: DomainDeps['config'], row: DomainRow): DnsRecord[] {
  const apex = isApexDomain(row.domain);
  return [
    {
      type: 'CNAME',
      name: row.domain,
      value: config.cnameTarget,
      note: apex
        ? `${row.domain} is an apex domain, where DNS allows no CNAME: use your DNS provider's ALIAS, ANAME or CNAME flattening to ${config.cnameTarget}, or A/AAAA records with the addresses of ${config.cnameTarget}.`
        : `Points ${row.domain} at this service.`,
    },
    {
      type: 'TXT',
      name: `${TXT_PREFIX}${row.domain}`,
      value: `${TXT_VALUE_PREFIX}${row.token}`,
      note: 'Proves that you control the domain.',
    },
  ];
}

/** POST /api/v1/domains. */
export async function addDomain(deps: DomainDeps, account: AccountRow, input: unknown): Promise<DomainAdded> {
  const domain = normalizeDomain(input, deps.config);
  const limit = planLimits(account.plan, deps.config.planOverrides).maxCustomDomains;
  const owned = await accountDomains(deps.db.kysely, account.id);
  const taken = () => invalid(`${domain} is already registered to this account.`);
  if (owned.some((d) => d.domain === domain)) throw taken();
  // Another account's entry does not stop this one, pending or active: DNS decides (verifyDomain).
  const holder = await activeDomain(deps.db.kysely, domain);
  if (owned.length >= limit) {
    throw new ApiError(
      'PLAN_LIMIT',
      `The ${account.plan} plan allows ${limit} custom domain${limit === 1 ? '' : 's'}.`,
      {
        hint: account.plan === 'free' ? 'Upgrade to Hobby for 5 domains.' : 'Delete a domain first.',
      },
    );
  }
  const row: DomainRow = {
    domain,
    account_id: account.id,
    status: 'pending',
    token: randomBytes(16).toString('hex'),
    created_at: deps.clock.now(),
    verified_at: null,
    tls_requested_at: null,
    tls_error: null,
  };
  try {
    await deps.db.transaction(async (trx) => {
      await insertDomain(trx, row);
      await recordAudit(trx, {
        accountId: account.id,
        action: 'domain.add',
        target: domain,
        at: row.created_at,
      });
    });
  } catch (err) {
    // The same account adding it twice at once (the key is domain + account).
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
  const records = dnsRecords(deps.config, row);
  return {
    domain,
    status: 'pending' as const,
    dns: {
      instructions: `At your DNS provider, add the records below for ${domain}, then call POST /api/v1/domains/${domain}/verify. DNS changes can take up to 48 hours to propagate; verify may be retried.`,
      records,
    },
    message: holder
      ? `${domain} was added. It is verified by another account today: it moves to you when its DNS holds only your TXT record and points here.`
      : `${domain} was added; it is served once verified.`,
  };
}

async function ownedDomain(deps: DomainDeps, account: AccountRow, input: string): Promise<DomainRow> {
  const normalized = normalizeHostname(input);
  if (!('hostname' in normalized)) throw notFound(`Domain "${input.slice(0, 100)}" not found`);
  const row = await accountDomain(deps.db.kysely, account.id, normalized.hostname);
  if (row) return row;
  throw await notOwned(deps, normalized.hostname);
}

/**
 * The 404 for a domain the account holds no entry of, saying why an entry it may have had is gone: the
 * domain was verified by another account (public: it serves), or a pending entry expired.
 */
async function notOwned(deps: DomainDeps, domain: string): Promise<ApiError> {
  if (await activeDomain(deps.db.kysely, domain)) {
    return notFound(
      `Domain "${domain}" was verified by another account, whose token its DNS TXT record holds; pending entries of other accounts for it were removed.`,
    );
  }
  return notFound(
    `Domain "${domain}" not found. An entry not verified within ${PENDING_DOMAIN_TTL_MS / 86_400_000} days of being added is removed; add it again with POST /api/v1/domains.`,
  );
}

/** A failed lookup in words: what a person can act on, no stack. */
function lookupProblem(err: unknown, what: string): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'ENODATA') return `${what} not found`;
  if (code === 'ETIMEOUT' || code === 'ECONNREFUSED' || code === 'ESERVFAIL') {
    return `${what} could not be looked up (the DNS server did not answer: ${code})`;
  }
  return `${what} could not be looked up (${code ?? 'error'})`;
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The problems that keep a domain from verifying (empty = verified). Each names its record. */
async function dnsProblems(deps: DomainDeps, row: DomainRow): Promise<string[]> {
  const txtName = `${TXT_PREFIX}${row.domain}`;
  const txtValue = `${TXT_VALUE_PREFIX}${row.token}`;
  const target = deps.config.cnameTarget;
  const txtCheck = (async () => {
    try {
      const values = await deps.dns.txt(txtName);
      return values.includes(txtValue)
        ? null
        : `TXT ${txtName} does not hold "${txtValue}" (found ${values.map((v) => JSON.stringify(v)).join(', ') || 'nothing'})`;
    } catch (err) {
      return `TXT ${txtName}: ${lookupProblem(err, 'record')}`;
    }
  })();
  const pointCheck = (async () => {
    if (isApexDomain(row.domain)) {
      // Both lookups at once; a failure names the record that failed: the domain's, or the target's.
      const [mine, targets] = await Promise.allSettled([
        deps.dns.addresses(row.domain),
        deps.dns.addresses(target),
      ]);
      if (mine.status === 'rejected') {
        return `A/AAAA ${row.domain}: ${lookupProblem(mine.reason, 'records')} (an apex needs ALIAS/ANAME/flattening or A/AAAA records with ${target}'s addresses)`;
      }
      if (targets.status === 'rejected') {
        return `A/AAAA ${target} (CNAME_TARGET, whose addresses an apex must use): ${lookupProblem(targets.reason, 'records')} through this service's DNS servers`;
      }
      if (mine.value.length === 0) return `A/AAAA ${row.domain}: no records`;
      const stray = mine.value.filter((a) => !targets.value.includes(a));
      return stray.length === 0
        ? null
        : `A/AAAA ${row.domain} point at ${stray.join(', ')}, which ${stray.length === 1 ? 'is' : 'are'} not among ${target}'s addresses (${targets.value.join(', ') || 'none'})`;
    }
    try {
      const names = (await deps.dns.cname(row.domain)).map(bare);
      return names.includes(target)
        ? null
        : `CNAME ${row.domain} points at ${names.join(', ')}, not ${target}`;
    } catch (err) {
      return `CNAME ${row.domain} -> ${target}: ${lookupProblem(err, 'record')}`;
    }
  })();
  return (await Promise.all([txtCheck, pointCheck])).filter((p): p is string => p !== null);
}

/**
 * POST /api/v1/domains/:domain/verify: 200, `verified` says how it went; 404 (saying so) when another
 * account verified the domain first, which removes this account's pending entry.
 */
export async function verifyDomain(
  deps: DomainDeps,
  account: AccountRow,
  input: string,
): Promise<DomainVerification> {
  const row = await ownedDomain(deps, account, input);
  if (row.status === 'active') {
    return {
      domain: row.domain,
      status: 'active' as const,
      verified: true,
      message: `${row.domain} is verified and active.`,
    };
  }
  // The account that verified first keeps the domain while DNS still names it; once DNS no longer does
  // (the domain changed hands, its new holder replaced the records), a claim DNS names takes it over.
  const holder = await activeDomain(deps.db.kysely, row.domain);
  if (holder && (await dnsProblems(deps, holder)).length === 0) return lost(deps, account, row);
  const problems = await dnsProblems(deps, row);
  if (problems.length > 0) {
    return {
      domain: row.domain,
      status: 'pending' as const,
      verified: false,
      message: `Not verified yet: ${problems.join('; ')}. DNS changes can take up to 48 hours to propagate; try again later.`,
    };
  }
  // The former holder's entry records the system, not this caller: one account never sees another's address.
  if (holder)
    await releaseDomain(deps, holder, { actor: { kind: 'system' }, ip: null, action: 'domain.release' });
  if (!(await claimDomain(deps, account, row))) return lost(deps, account, row);
  await deps.changes.publish({ kind: 'host', host: row.domain });
  await deps.events?.emit(account.id, { type: 'domain.verified', data: { domain: row.domain } });
  return {
    domain: row.domain,
    status: 'active' as const,
    verified: true,
    message: `${row.domain} is verified: link a site to it with POST /api/v1/links.`,
  };
}

/** Another account verified the domain first: this entry is gone (or goes now), and the 404 says why. */
async function lost(deps: DomainDeps, account: AccountRow, row: DomainRow): Promise<never> {
  await deleteDomainRow(deps.db.kysely, account.id, row.domain);
  throw await notOwned(deps, row.domain);
}

/**
 * Makes the account's entry the domain's active one; false when another account's entry is (or just
 * became) active. The partial unique index decides between two verifies at once: the second waits for
 * the first and fails. The other pending entries are dropped after the activation commits, never inside
 * it: deleting rows another verify holds locked would deadlock the two.
 */
async function claimDomain(deps: DomainDeps, account: AccountRow, row: DomainRow): Promise<boolean> {
  let won: boolean;
  try {
    won = await deps.db.transaction(async (trx) => {
      const now = deps.clock.now();
      const activated = await activateDomain(trx, account.id, row.domain, now);
      if (activated) {
        await recordAudit(trx, {
          accountId: account.id,
          action: 'domain.verify',
          target: row.domain,
          at: now,
        });
      }
      return activated;
    });
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  if (!won) return false;
  await deletePendingClaims(deps.db.kysely, row.domain);
  return true;
}

/** Removes an account's entry of a domain and its links, at once on every node. */
async function releaseDomain(
  deps: DomainDeps,
  row: DomainRow,
  audit: Pick<AuditEntryInput, 'actor' | 'ip' | 'action'> = { action: 'domain.delete' },
): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const links = await deleteLinksWhere(trx, { accountId: row.account_id, domain: row.domain });
    await deleteDomainRow(trx, row.account_id, row.domain);
    await recordAudit(trx, {
      ...audit,
      accountId: row.account_id,
      target: row.domain,
      details: { linksRemoved: links.length },
      at: deps.clock.now(),
    });
  });
  await deps.changes.publish({ kind: 'host', host: row.domain });
}

/** GET /api/v1/domains. */
export async function listDomains(deps: DomainDeps, account: AccountRow): Promise<DomainList> {
  const rows = await accountDomains(deps.db.kysely, account.id);
  return { domains: rows.map(domainView), total: rows.length };
}

/** DELETE /api/v1/domains/:domain: the domain and its links, at once on every node. */
export async function deleteDomain(
  deps: DomainDeps,
  account: AccountRow,
  input: string,
): Promise<DomainDeleted> {
  const row = await ownedDomain(deps, account, input);
  await releaseDomain(deps, row);
  return { domain: row.domain, deleted: true as const };
}
