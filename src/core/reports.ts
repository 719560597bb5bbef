// Abuse reports (issue 26, CONTRACT "Operators, reports and the audit log"): anyone reports a site's URL
// with a category, details and an optional contact, through POST /api/v1/reports or the /report form
// (one rule, one limit per client address for both). A report is stored, then mailed to the operators
// (ADMIN_EMAILS); the mail failing does not lose it. Operators list the open ones (GET /api/admin/reports).

import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  closeReportById,
  findReport,
  insertReport,
  type ReportRow,
  reportsByStatus,
} from '../store/db/tables/report.js';
import type { Mailer } from '../store/mail/types.js';
import type { RateStore } from '../store/rate/types.js';
import { operatorActor, recordAudit } from './audit.js';
import { limitKey } from './client-address.js';
import { ApiError, invalid, notFound } from './errors.js';
import { type HostConfig, mountFor, resolveHost } from './hosts.js';
import { MAX_REASON_CHARS } from './operators.js';
import { checkRateLimit } from './rate-limit.js';
import { newId } from './secrets.js';

export const REPORT_CATEGORIES = ['phishing', 'malware', 'spam', 'copyright', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];
export const MAX_REPORT_URL_CHARS = 2048;
export const MAX_REPORT_DETAILS_CHARS = 5000;
export const MAX_REPORT_CONTACT_CHARS = 254;
export const DEFAULT_REPORT_LIST = 50;
/**
 * Reports mailed per hour-aligned window, from everyone together: reports from many addresses cannot
 * flood the operators' inboxes. Past it reports are stored and listed, not mailed (the log says so once
 * per report).
 */
export const REPORT_MAILS_PER_HOUR = 100;
export const MAX_REPORT_LIST = 200;

/** Control characters but tab, newline and carriage return (details are free text on several lines). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: this is what it refuses.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u2028\u2029]/;

export interface ReportDeps {
  db: Db;
  clock: Clock;
  rate: RateStore;
  mailer: Mailer;
  logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  config: HostConfig & {
    baseUrl: string;
    adminEmails: ReadonlySet<string>;
    reportRateLimit: number;
  };
}

export interface ReportInput {
  url?: unknown;
  category?: unknown;
  details?: unknown;
  contact?: unknown;
}

/** A report as the operators see it, with the site it names. */
export interface ReportView {
  id: string;
  url: string;
  category: ReportCategory;
  details: string;
  contact: string | null;
  reporterIp: string;
  status: 'open' | 'closed';
  createdAt: string;
  site: {
    slug: string;
    accountId: string | null;
    createdAt: string;
    expiresAt: string | null;
    deleted: boolean;
    passwordProtected: boolean;
  } | null;
  /** Open reports of the same host, this one included. */
  openReportsForHost: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function text(value: unknown, field: string, max: number, required: boolean): string | null {
  if (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && value.trim() === '' && !required)
  )
    return null;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  const v = value.trim();
  if (required && v === '') throw invalid(`${field} is required`);
  if (v.length > max) throw invalid(`${field} is longer than ${max} characters`);
  if (CONTROL.test(v)) throw invalid(`${field} holds control characters`);
  return v;
}

/** Checks a report's fields; the URL must name a site this service serves. */
async function validate(deps: ReportDeps, input: ReportInput) {
  const rawUrl = text(input.url, 'url', MAX_REPORT_URL_CHARS, true)!;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw invalid(`url "${rawUrl.slice(0, 100)}" is not a URL`, {
      hint: 'Send the full address, e.g. https://name.example.site/page',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid('url must be an http or https address');
  const category = input.category;
  if (typeof category !== 'string' || !(REPORT_CATEGORIES as readonly string[]).includes(category))
    throw invalid(`category must be one of ${REPORT_CATEGORIES.join(', ')}`);
  const details = text(input.details, 'details', MAX_REPORT_DETAILS_CHARS, true)!;
  const contact = text(input.contact, 'contact', MAX_REPORT_CONTACT_CHARS, false);
  const host = url.hostname.toLowerCase();
  const route = await resolveHost(deps, host);
  if (route === null)
    throw invalid(`${host} is not a site on this service`, {
      hint: 'Report an address of a site this service hosts (its own host, a handle or a custom domain).',
    });
  const mount = mountFor(route, url.pathname)?.mount ?? route.mounts[0];
  return {
    url: url.href,
    host,
    category: category as ReportCategory,
    details,
    contact,
    slug: mount?.slug ?? null,
  };
}

/**
 * Stores a report from `ip` and mails it to the operators. 429 RATE_LIMITED past the per-address limit
 * (counted before anything is checked, so bad input counts too); 400 INVALID_REQUEST on bad input.
 */
export async function createReport(
  deps: ReportDeps,
  input: ReportInput,
  client: { ip: string },
): Promise<{ id: string }> {
  const now = deps.clock.now();
  const decision = await checkRateLimit(
    deps.rate,
    `report:${limitKey(client.ip)}`,
    deps.config.reportRateLimit,
    now,
  );
  if (!decision.allowed)
    throw new ApiError(
      'RATE_LIMITED',
      `Too many reports from your address; try again later (after ${iso(decision.resetAtS * 1000)}).`,
      { headers: { 'Retry-After': String(decision.retryAfterS) } },
    );
  const r = await validate(deps, input);
  const row: ReportRow = {
    id: newId('rpt'),
    url: r.url,
    host: r.host,
    site_slug: r.slug,
    category: r.category,
    details: r.details,
    contact: r.contact,
    reporter_ip: client.ip,
    status: 'open',
    created_at: now,
  };
  await insertReport(deps.db.kysely, row);
  await mailOperators(deps, row);
  return { id: row.id };
}

/** One plain-text mail per operator; a failure is logged (the report is stored and listed either way). */
async function mailOperators(deps: ReportDeps, row: ReportRow): Promise<void> {
  if (deps.config.adminEmails.size === 0) return;
  const budget = await checkRateLimit(deps.rate, 'report-mail:all', REPORT_MAILS_PER_HOUR, row.created_at);
  if (!budget.allowed) {
    deps.logger.warn({ reportId: row.id }, 'abuse report not mailed: the hourly mail budget is spent');
    return;
  }
  const body = [
    `A ${row.category} report about ${row.url}`,
    '',
    `Site: ${row.site_slug ?? `(no site: host ${row.host})`}`,
    `Category: ${row.category}`,
    `Contact: ${row.contact ?? '(none given)'}`,
    `From address: ${row.reporter_ip}`,
    `Report id: ${row.id}`,
    '',
    'Details:',
    row.details,
    '',
    `Open reports: ${deps.config.baseUrl}/api/admin/reports`,
  ].join('\n');
  for (const to of deps.config.adminEmails) {
    try {
      // The subject carries only checked values: a category and a host (no line breaks can reach it).
      await deps.mailer.send({ to, subject: `Abuse report (${row.category}): ${row.host}`, text: body });
    } catch (err) {
      deps.logger.error({ err, reportId: row.id }, 'abuse report mail failed');
    }
  }
}

/** Reports in `status` (default open), newest first, with the site each names. */
export async function listReports(
  db: Db,
  options: { status?: 'open' | 'closed'; limit?: number; before?: string } = {},
): Promise<ReportView[]> {
  const limit = Math.min(Math.max(1, options.limit ?? DEFAULT_REPORT_LIST), MAX_REPORT_LIST);
  let before: number | undefined;
  if (options.before !== undefined) {
    before = Date.parse(options.before);
    if (Number.isNaN(before)) throw invalid('before must be an ISO 8601 time');
  }
  const rows = await reportsByStatus(db.kysely, options.status ?? 'open', limit, before);
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    category: r.category,
    details: r.details,
    contact: r.contact,
    reporterIp: r.reporter_ip,
    status: r.status,
    createdAt: iso(r.created_at),
    site:
      r.site_slug === null || r.site_created_at === null
        ? null
        : {
            slug: r.site_slug,
            accountId: r.site_owner_id,
            createdAt: iso(r.site_created_at),
            expiresAt: r.site_expires_at === null ? null : iso(r.site_expires_at),
            deleted: r.site_deleted_at !== null,
            passwordProtected: r.site_password,
          },
    openReportsForHost: r.open_for_site,
  }));
}

/**
 * An operator closes a report without acting on the site (a false or settled report): it leaves the open
 * list, and the audit log keeps who closed it and why (a takedown closes its site's reports itself).
 * Closing a closed report changes nothing.
 */
export async function closeReport(
  deps: Pick<ReportDeps, 'db' | 'clock'>,
  operator: AccountRow,
  id: string,
  input: { reason?: unknown },
): Promise<{ id: string; status: 'closed' }> {
  const reason = typeof input.reason === 'string' ? input.reason.trim() : '';
  if (reason === '') throw invalid('Give a reason for closing the report (it is kept in the audit log).');
  if (reason.length > MAX_REASON_CHARS)
    throw invalid(`The reason is at most ${MAX_REASON_CHARS} characters.`);
  await deps.db.transaction(async (trx) => {
    const row = await findReport(trx, id);
    if (row === undefined) throw notFound('No such report.');
    if (!(await closeReportById(trx, id))) return;
    await recordAudit(trx, {
      accountId: null,
      action: 'report.close',
      target: id,
      details: { reason, category: row.category, host: row.host, slug: row.site_slug },
      at: deps.clock.now(),
      actor: operatorActor(operator.id),
    });
  });
  return { id, status: 'closed' };
}
