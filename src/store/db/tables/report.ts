// Queries of reports (core/reports.ts): abuse reports and, for the operators' list, the reported site.

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { ReportTable } from '../schema.js';

export type ReportRow = Selectable<ReportTable>;

export async function insertReport(db: Executor, row: ReportRow): Promise<void> {
  await db.insertInto('reports').values(row).execute();
}

/** Closes the open reports of a site (it was taken down: they are dealt with); how many. */
export async function closeReportsOfSite(db: Executor, slug: string): Promise<number> {
  const res = await db
    .updateTable('reports')
    .set({ status: 'closed' })
    .where('site_slug', '=', slug)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export function findReport(db: Executor, id: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Closes one open report; whether it was open. */
export async function closeReportById(db: Executor, id: string): Promise<boolean> {
  const res = await db
    .updateTable('reports')
    .set({ status: 'closed' })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export interface ReportWithSite extends ReportRow {
  site_owner_id: string | null;
  site_created_at: number | null;
  site_expires_at: number | null;
  site_deleted_at: number | null;
  site_password: boolean;
  /** Reports of the same site (or host) still open, this one included. */
  open_for_site: number;
}

/** Reports in `status`, newest first, before `before` (created_at, exclusive) when given. */
export async function reportsByStatus(
  db: Executor,
  status: ReportRow['status'],
  limit: number,
  before: number | undefined,
): Promise<ReportWithSite[]> {
  let q = db
    .selectFrom('reports')
    .leftJoin('sites', 'sites.slug', 'reports.site_slug')
    .selectAll('reports')
    .select([
      'sites.owner_id as site_owner_id',
      'sites.created_at as site_created_at',
      'sites.expires_at as site_expires_at',
      'sites.deleted_at as site_deleted_at',
      'sites.password_hash as site_password_hash',
    ])
    .where('reports.status', '=', status);
  if (before !== undefined) q = q.where('reports.created_at', '<', before);
  const rows = await q
    .orderBy('reports.created_at', 'desc')
    .orderBy('reports.id', 'desc')
    .limit(limit)
    .execute();
  const counts = new Map<string, number>();
  const hosts = [...new Set(rows.map((r) => r.host))];
  if (hosts.length > 0) {
    const grouped = await db
      .selectFrom('reports')
      .select(['host', (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('status', '=', 'open')
      .where('host', 'in', hosts)
      .groupBy('host')
      .execute();
    for (const g of grouped) counts.set(g.host, Number(g.n));
  }
  return rows.map(({ site_password_hash, ...r }) => ({
    ...r,
    created_at: Number(r.created_at),
    site_created_at: r.site_created_at === null ? null : Number(r.site_created_at),
    site_expires_at: r.site_expires_at === null ? null : Number(r.site_expires_at),
    site_deleted_at: r.site_deleted_at === null ? null : Number(r.site_deleted_at),
    site_password: site_password_hash !== null,
    open_for_site: counts.get(r.host) ?? 0,
  }));
}
