// Queries of the analytics tables (core/analytics.ts): per site counts by hour and day with a visitor
// sketch, per site and day counts by path, referrer host and 404 path, and the salt of the current day.

import { sql } from 'kysely';
import { compiledPerShape } from '../compiled.js';
import type { Executor } from '../db.js';
import type { AnalyticsCountTable, AnalyticsKeyTable } from '../schema.js';

export type AnalyticsCountRow = AnalyticsCountTable;
export type AnalyticsKeyRow = AnalyticsKeyTable;

/** Rows per multi-row statement (at most 14 parameters a row: 5,600, far below either database's limit). */
const CHUNK = 400;

/** Serialises flushes across nodes on PostgreSQL for the rest of the transaction (sketches are merged in JS). */
export async function lockAnalytics(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('slipway.analytics'))`.execute(trx);
}

/** Stored sketches of these sites at these starts (either granularity), by `slug\ngranularity\nstart`. */
export async function storedSketches(
  db: Executor,
  slugs: string[],
  starts: number[],
): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (let i = 0; i < slugs.length; i += CHUNK) {
    const { rows } = await sketchesOf(db, { slugs: slugs.slice(i, i + CHUNK), starts });
    for (const r of rows) out.set(`${r.slug}\n${r.granularity}\n${r.start}`, r.sketch);
  }
  return out;
}

const sketchesOf = compiledPerShape({
  build: (db, { slugs, starts }: { slugs: string[]; starts: number[] }) =>
    db
      .selectFrom('analytics_counts')
      .select(['slug', 'granularity', 'start', 'sketch'])
      .where('slug', 'in', slugs)
      .where('start', 'in', starts),
  shape: ({ slugs, starts }) => `${slugs.length},${starts.length}`,
  params: ({ slugs, starts }) => [...slugs, ...starts],
  probe: ({ slugs, starts }) => ({
    slugs: slugs.map((_, i) => `slug${i}`),
    starts: starts.map((_, i) => -1 - i),
  }),
});

/**
 * The shape, parameters and probe of a multi-row statement (compiledPerShape): `flat` writes a row's values
 * in `columns`' order (named fields, not a loop over column names: the flush writes ~40 values a site).
 */
function rowsShape<Row>(
  columns: ReadonlyArray<keyof Row & string>,
  flat: (out: unknown[], row: Row) => void,
) {
  return {
    shape: (rows: Row[]) => String(rows.length),
    params: (rows: Row[]) => {
      const out: unknown[] = [];
      for (const r of rows) flat(out, r);
      return out;
    },
    probe: (rows: Row[]) =>
      rows.map((_, i) => Object.fromEntries(columns.map((c, j) => [c, `r${i}c${j}`])) as Row),
  };
}

const COUNT_COLUMNS = [
  'slug',
  'granularity',
  'start',
  'page_views',
  'bytes',
  'not_found',
  'bots',
  'status_1xx',
  'status_2xx',
  'status_3xx',
  'status_4xx',
  'status_5xx',
  'visitors',
  'sketch',
] as const satisfies ReadonlyArray<keyof AnalyticsCountRow>;

const KEY_COLUMNS = ['slug', 'day', 'kind', 'key', 'count'] as const satisfies ReadonlyArray<
  keyof AnalyticsKeyRow
>;

/** Adds the counts to each row (creating it), replacing sketch and estimate by the merged ones given. */
export async function upsertAnalyticsCounts(db: Executor, rows: AnalyticsCountRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await upsertCounts(db, rows.slice(i, i + CHUNK));
}

const upsertCounts = compiledPerShape({
  build: (db, rows: AnalyticsCountRow[]) =>
    db
      .insertInto('analytics_counts')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['slug', 'granularity', 'start']).doUpdateSet((eb) => ({
          page_views: eb('analytics_counts.page_views', '+', eb.ref('excluded.page_views')),
          bytes: eb('analytics_counts.bytes', '+', eb.ref('excluded.bytes')),
          not_found: eb('analytics_counts.not_found', '+', eb.ref('excluded.not_found')),
          bots: eb('analytics_counts.bots', '+', eb.ref('excluded.bots')),
          status_1xx: eb('analytics_counts.status_1xx', '+', eb.ref('excluded.status_1xx')),
          status_2xx: eb('analytics_counts.status_2xx', '+', eb.ref('excluded.status_2xx')),
          status_3xx: eb('analytics_counts.status_3xx', '+', eb.ref('excluded.status_3xx')),
          status_4xx: eb('analytics_counts.status_4xx', '+', eb.ref('excluded.status_4xx')),
          status_5xx: eb('analytics_counts.status_5xx', '+', eb.ref('excluded.status_5xx')),
          // A flush without visitors leaves the sketch and its estimate as they are.
          visitors: sql<number>`case when excluded.sketch is null then analytics_counts.visitors else excluded.visitors end`,
          sketch: sql<string>`coalesce(excluded.sketch, analytics_counts.sketch)`,
        })),
      ),
  ...rowsShape<AnalyticsCountRow>(COUNT_COLUMNS, (out, r) => {
    out.push(r.slug, r.granularity, r.start, r.page_views, r.bytes, r.not_found, r.bots, r.status_1xx);
    out.push(r.status_2xx, r.status_3xx, r.status_4xx, r.status_5xx, r.visitors, r.sketch);
  }),
});

export async function upsertAnalyticsKeys(db: Executor, rows: AnalyticsKeyRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await upsertKeys(db, rows.slice(i, i + CHUNK));
}

const upsertKeys = compiledPerShape({
  build: (db, rows: AnalyticsKeyRow[]) =>
    db
      .insertInto('analytics_keys')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['slug', 'day', 'kind', 'key']).doUpdateSet((eb) => ({
          count: eb('analytics_keys.count', '+', eb.ref('excluded.count')),
        })),
      ),
  ...rowsShape<AnalyticsKeyRow>(KEY_COLUMNS, (out, r) => out.push(r.slug, r.day, r.kind, r.key, r.count)),
});

export function analyticsCountRows(
  db: Executor,
  slug: string,
  granularity: 'hour' | 'day',
  from: number,
  to: number,
): Promise<AnalyticsCountRow[]> {
  return db
    .selectFrom('analytics_counts')
    .selectAll()
    .where('slug', '=', slug)
    .where('granularity', '=', granularity)
    .where('start', '>=', from)
    .where('start', '<', to)
    .orderBy('start')
    .execute();
}

/** Key counts of the site's days in [from, to), summed over the days. */
export async function analyticsKeyRows(
  db: Executor,
  slug: string,
  from: number,
  to: number,
): Promise<Array<{ kind: string; key: string; count: number }>> {
  const rows = await db
    .selectFrom('analytics_keys')
    .select(['kind', 'key', (eb) => eb.fn.sum<number | string>('count').as('count')])
    .where('slug', '=', slug)
    .where('day', '>=', from)
    .where('day', '<', to)
    .groupBy(['kind', 'key'])
    .execute();
  return rows.map((r) => ({ kind: r.kind, key: r.key, count: Number(r.count) }));
}

/** Visitors of the last days of many sites (the dashboard's site list): slug -> summed daily estimates. */
export async function recentVisitors(
  db: Executor,
  slugs: string[],
  from: number,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (slugs.length === 0) return out;
  const rows = await db
    .selectFrom('analytics_counts')
    .select(['slug', (eb) => eb.fn.sum<number | string>('visitors').as('visitors')])
    .where('slug', 'in', slugs)
    .where('granularity', '=', 'day')
    .where('start', '>=', from)
    .groupBy('slug')
    .execute();
  for (const r of rows) out.set(r.slug, Number(r.visitors));
  return out;
}

/** Hour rows before `hourBefore`, day and key rows before `dayBefore`; how many rows went. */
export async function deleteAnalyticsBefore(
  db: Executor,
  hourBefore: number,
  dayBefore: number,
): Promise<number> {
  const a = await db
    .deleteFrom('analytics_counts')
    .where('granularity', '=', 'hour')
    .where('start', '<', hourBefore)
    .executeTakeFirst();
  const b = await db
    .deleteFrom('analytics_counts')
    .where('granularity', '=', 'day')
    .where('start', '<', dayBefore)
    .executeTakeFirst();
  const c = await db.deleteFrom('analytics_keys').where('day', '<', dayBefore).executeTakeFirst();
  return Number(a.numDeletedRows + b.numDeletedRows + c.numDeletedRows);
}

/** Every count of a deleted site. */
export async function deleteSiteAnalytics(db: Executor, slug: string): Promise<void> {
  await db.deleteFrom('analytics_counts').where('slug', '=', slug).execute();
  await db.deleteFrom('analytics_keys').where('slug', '=', slug).execute();
}

/** Stores `salt` for `day` unless a node already did. */
export async function upsertSalt(db: Executor, day: number, salt: string): Promise<void> {
  await db
    .insertInto('analytics_salts')
    .values({ day, salt })
    .onConflict((oc) => oc.column('day').doNothing())
    .execute();
}

export async function readSalt(db: Executor, day: number): Promise<string | undefined> {
  const row = await db.selectFrom('analytics_salts').select('salt').where('day', '=', day).executeTakeFirst();
  return row?.salt;
}

/** Destroys the salts of past days (no visitor hash of those days can be made again). */
export async function deleteSaltsBefore(db: Executor, day: number): Promise<void> {
  await db.deleteFrom('analytics_salts').where('day', '<', day).execute();
}
