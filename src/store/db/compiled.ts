// Queries of the site server's miss path, built and compiled once and then run with each call's value.
// Kysely builds an immutable query tree and compiles it to SQL on every call: on a cache miss of the site
// server (four small indexed lookups), building and compiling took about as long as SQLite running them
// (issue 23's CPU profile of a random spread over 3,000 sites: compile 5.7 % of busy samples, building
// several more, the driver 14 %). The prepared statement behind each SQL text is already reused (db.ts).

import type { Compilable, CompiledQuery } from 'kysely';
import type { Executor } from './db.js';

/**
 * A query of one value (`build` puts `value` into exactly one placeholder), compiled once per Kysely
 * instance or transaction; the function returns its rows.
 */
export function compiledOnce<R>(
  build: (db: Executor, value: string) => Compilable<R>,
): (db: Executor, value: string) => Promise<R[]> {
  const compiled = new WeakMap<Executor, CompiledQuery<R>>();
  return async (db, value) => {
    let query = compiled.get(db);
    if (query === undefined) {
      query = build(db, value).compile();
      if (query.parameters.length !== 1 || query.parameters[0] !== value)
        throw new Error(`compiledOnce: the query must have exactly one parameter: ${query.sql}`);
      compiled.set(db, query);
    }
    const result = await db.executeQuery<R>({ ...query, parameters: [value] });
    return result.rows;
  };
}
