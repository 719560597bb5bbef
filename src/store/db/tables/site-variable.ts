// Queries of site_variables (values are ciphertext; core/variables.ts encrypts and decrypts).

import type { Executor } from '../db.js';
import type { SiteVariableTable } from '../schema.js';

export type SiteVariableRow = SiteVariableTable;

/** The site's variables, by name. */
export function siteVariables(db: Executor, slug: string): Promise<SiteVariableRow[]> {
  return db.selectFrom('site_variables').selectAll().where('site_slug', '=', slug).orderBy('name').execute();
}

/** Inserts the rows, replacing the value (and `updated_at`) of names that exist; `created_at` is kept. */
export async function upsertSiteVariables(db: Executor, rows: SiteVariableRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('site_variables')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['site_slug', 'name']).doUpdateSet((eb) => ({
        key_id: eb.ref('excluded.key_id'),
        ciphertext: eb.ref('excluded.ciphertext'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** True when the variable existed. */
export async function deleteSiteVariable(db: Executor, slug: string, name: string): Promise<boolean> {
  const res = await db
    .deleteFrom('site_variables')
    .where('site_slug', '=', slug)
    .where('name', '=', name)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export async function deleteSiteVariables(db: Executor, slug: string): Promise<void> {
  await db.deleteFrom('site_variables').where('site_slug', '=', slug).execute();
}
