// Queries of site_proxy_hosts: the hostnames the site proxy may reach for a site.

import type { Executor } from '../db.js';
import type { SiteProxyHostTable } from '../schema.js';

export type ProxyHostRow = SiteProxyHostTable;

export function proxyHosts(db: Executor, slug: string): Promise<ProxyHostRow[]> {
  return db
    .selectFrom('site_proxy_hosts')
    .selectAll()
    .where('site_slug', '=', slug)
    .orderBy('hostname')
    .execute();
}

export async function isProxyHostAllowed(db: Executor, slug: string, hostname: string): Promise<boolean> {
  const row = await db
    .selectFrom('site_proxy_hosts')
    .select('hostname')
    .where('site_slug', '=', slug)
    .where('hostname', '=', hostname)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts the hosts; one already listed keeps its `created_at` and gets the new `updated_at`. */
export async function upsertProxyHosts(db: Executor, rows: ProxyHostRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('site_proxy_hosts')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['site_slug', 'hostname'])
        .doUpdateSet((eb) => ({ updated_at: eb.ref('excluded.updated_at') })),
    )
    .execute();
}

/** True when the host was listed. */
export async function deleteProxyHost(db: Executor, slug: string, hostname: string): Promise<boolean> {
  const res = await db
    .deleteFrom('site_proxy_hosts')
    .where('site_slug', '=', slug)
    .where('hostname', '=', hostname)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function deleteProxyHosts(db: Executor, slug: string): Promise<void> {
  await db.deleteFrom('site_proxy_hosts').where('site_slug', '=', slug).execute();
}
