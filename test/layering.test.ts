// Dependencies point one way (README "Layout"): shared <- store <- core <- serve <- http <- app.ts <-
// compose.ts <- server.ts, with config.ts read by all. Reads every
// relative import under src/ and fails on one that points up, so a new module cannot quietly break it.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve('src');

/** What each layer may not import (directories under src/, or root modules by file name). */
const ROOT_MODULES = ['config.ts', 'app.ts', 'compose.ts', 'server.ts'];
const FORBIDDEN: Record<string, string[]> = {
  shared: ['store', 'core', 'serve', 'http', ...ROOT_MODULES],
  // config.ts is read by every layer: it may lean on core's types (plan names) and shared, nothing else.
  'config.ts': ['store', 'serve', 'http', 'client', 'cli', 'app.ts', 'compose.ts', 'server.ts'],
  store: ['core', 'serve', 'http', 'app.ts', 'compose.ts', 'server.ts'],
  core: ['serve', 'http', 'app.ts', 'compose.ts', 'server.ts'],
  serve: ['http', 'app.ts', 'compose.ts', 'server.ts'],
  http: ['app.ts', 'compose.ts', 'server.ts'],
  // The HTTP app is handed its services: it never opens a store or builds a dependency itself.
  'app.ts': ['store', 'compose.ts', 'server.ts'],
  // The composition root builds everything; only the process entry point sits above it.
  'compose.ts': ['server.ts', 'client', 'cli'],
  // The process entry: configuration and the composition root, nothing else.
  'server.ts': ['store', 'core', 'serve', 'http', 'app.ts', 'client', 'cli'],
  // The API client and the CLI/MCP shells over it talk to the service over HTTP only (issue 13).
  client: ['store', 'core', 'serve', 'http', 'shared', 'cli', ...ROOT_MODULES],
  cli: ['store', 'core', 'serve', 'http', 'shared', ...ROOT_MODULES],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The top-level entry of src/ a path belongs to: a directory name or a root file name. */
const layerOf = (file: string) => relative(SRC, file).split('/')[0]!;

/** The modules of src/ a file imports (relative imports, as paths of .ts files). */
const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].map((match) =>
    resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
  );

test('no module imports from a layer above its own', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    const forbidden = FORBIDDEN[layerOf(file)] ?? [];
    for (const target of importsOf(file)) {
      if (forbidden.includes(layerOf(target)))
        violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('every module of src/ belongs to a layer the rules above name', () => {
  const layers = new Set(sources(SRC).map(layerOf));
  assert.deepEqual([...layers].filter((layer) => !(layer in FORBIDDEN)).sort(), []);
});

/** Modules private to their layer: who may import them (layers as above). */
const PRIVATE: Record<string, string[]> = {
  // The password gate is the site server's; the cookies it shares with the dashboard are shared/cookies.ts.
  'serve/password-gate.ts': ['serve'],
};

test('a module private to its layer is imported from that layer only', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    for (const target of importsOf(file)) {
      const allowed = PRIVATE[relative(SRC, target)];
      if (allowed && !allowed.includes(layerOf(file))) {
        violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

/**
 * Kysely's query builder and raw SQL: queries live in src/store/db/tables/ (one file per table), so a
 * schema change has one place to look and core/serve read as rules, not SQL.
 */
const QUERY_BUILDER =
  /\.(?:selectFrom|selectNoFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)\(|\bsql(?:<[^`]*>)?`/;

test('only src/store/ builds database queries (no query builder or sql`` in core, serve, http, ...)', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    if (layerOf(file) === 'store') continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (QUERY_BUILDER.test(line)) violations.push(`${relative(SRC, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(violations, []);
});

/** A module of src/http/ that registers routes (the API's resources, ops, the web pages). */
const ROUTE_CALL = /\b(?:app|raw)\.(?:get|post|put|patch|delete|head|options|route)\(/;
const routeModules = () =>
  sources(join(SRC, 'http')).filter((file) => ROUTE_CALL.test(readFileSync(file, 'utf8')));

test('route modules of src/http/ (pages included) import no other route module: what they share lives apart', () => {
  const routes = new Set(routeModules());
  assert.ok(routes.size > 10, 'the route modules are found');
  const violations: string[] = [];
  for (const file of routes) {
    for (const target of importsOf(file)) {
      if (routes.has(target)) violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  assert.deepEqual(violations, []);
});

test('every route module exports one plugin factory, (deps) => FastifyPluginAsync, that app.ts registers', () => {
  const app = readFileSync(join(SRC, 'app.ts'), 'utf8');
  const problems: string[] = [];
  for (const file of routeModules()) {
    const factories = [
      ...readFileSync(file, 'utf8').matchAll(
        /^export function (\w+)\(\w+: [^,)]+\): FastifyPluginAsync(?:Typebox)? \{$/gm,
      ),
    ].map((m) => m[1]!);
    if (factories.length !== 1) problems.push(`${relative(SRC, file)}: ${factories.length} plugin factories`);
    for (const name of factories) {
      if (!new RegExp(`\\.register\\(${name}\\(`).test(app))
        problems.push(`${name} is not registered in app.ts`);
    }
  }
  assert.deepEqual(problems, []);
});

test('the query check sees queries (it would catch a violation)', () => {
  const text = readFileSync(join(SRC, 'store', 'db', 'tables', 'site.ts'), 'utf8');
  assert.ok(text.split('\n').filter((line) => QUERY_BUILDER.test(line)).length > 3);
  assert.ok(QUERY_BUILDER.test('await sql`select 1`.execute(db)'));
  assert.ok(QUERY_BUILDER.test('sql<number>`count(*)`'));
});

test('the layering check sees imports (it would catch a violation)', () => {
  // Guards the test above against a regex that silently matches nothing.
  const text = readFileSync(join(SRC, 'core', 'publish.ts'), 'utf8');
  assert.ok([...text.matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)].length > 3);
});
