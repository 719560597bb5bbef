// Queries built and compiled once and then run with each call's values: the site server's miss-path lookups
// (compiledOnce) and the analytics flush's batched statements (compiledPerShape).
// Kysely builds an immutable query tree and compiles it to SQL on every call: on a cache miss of the site
// server (four small indexed lookups), building and compiling took about as long as SQLite running them
// (issue 23's CPU profile of a random spread over 3,000 sites: compile 5.7 % of busy samples, building
// several more, the driver 14 %). The prepared statement behind each SQL text is already reused (db.ts).

import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
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

/** Shapes (list lengths) compiled per database before the cache starts over: a flush uses a handful. */
const SHAPES_MAX = 64;

/** How compiledPerShape builds a statement over a list and finds its parameters. */
export interface PerShape<T, R> {
  build: (db: Executor, list: T) => Compilable<R>;
  /** What the statement's SQL depends on (e.g. the list's length). */
  shape: (list: T) => string;
  /** The list's parameters, in the statement's order. */
  params: (list: T) => unknown[];
  /** A list of the same shape whose parameters are all different (checks `params` at the first compile). */
  probe: (list: T) => T;
}

/**
 * A statement over a list of values (a multi-row INSERT, an IN list), compiled once per database and
 * shape, then run with each call's values: the analytics flush writes ~4 statements per 100 sites, each
 * of a few hundred rows, and Kysely building and compiling them was 36 % of the flush's CPU (a profile of
 * 20,000 sites, issue 23), more than SQLite running them. The first compile of a shape is of a probe
 * whose parameters all differ, so a `params` that puts any value in another's place fails there, not in
 * the data. The cache is keyed by the database's dialect adapter, which its transactions share, so a
 * statement compiled in one transaction serves the next.
 */
export function compiledPerShape<T, R>(
  spec: PerShape<T, R>,
): (db: Executor, list: T) => Promise<QueryResult<R>> {
  const compiled = new WeakMap<object, Map<string, CompiledQuery<R>>>();
  return async (db, list) => {
    const adapter = db.getExecutor().adapter;
    let shapes = compiled.get(adapter);
    if (shapes === undefined) {
      shapes = new Map();
      compiled.set(adapter, shapes);
    }
    const key = spec.shape(list);
    let query = shapes.get(key);
    if (query === undefined) {
      const probe = spec.probe(list);
      query = spec.build(db, probe).compile();
      const expected = spec.params(probe);
      const same =
        spec.shape(probe) === key &&
        new Set(expected).size === expected.length &&
        query.parameters.length === expected.length &&
        query.parameters.every((p, i) => p === expected[i]);
      if (!same)
        throw new Error(`compiledPerShape: params() does not give the statement's parameters: ${query.sql}`);
      if (shapes.size >= SHAPES_MAX) shapes.clear();
      shapes.set(key, query);
    }
    return db.executeQuery<R>({ ...query, parameters: spec.params(list) });
  };
}
