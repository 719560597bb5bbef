// Dependencies point one way (README "Layout"): shared <- store <- core <- serve <- http <- app.ts <-
// compose.ts <- server.ts, with config.ts read by all (and store <- workers <- server.ts: the primary). The public API's schemas (api/) are built from
// core's constants; http registers them, and core, the client and the CLI use their types only (`import
// type` vanishes at build, so the client still carries no service code). Reads every relative import
// under src/ and fails on one that points up, so a new module cannot quietly break it.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve('src');

/** What each layer may not import at all (directories under src/, or root modules by file name). */
const ROOT_MODULES = ['config.ts', 'app.ts', 'compose.ts', 'server.ts'];
const FORBIDDEN: Record<string, string[]> = {
  shared: ['store', 'core', 'api', 'serve', 'http', ...ROOT_MODULES],
  // config.ts is read by every layer: it may lean on core's types (plan names) and shared, nothing else.
  'config.ts': ['store', 'api', 'serve', 'http', 'client', 'cli', 'app.ts', 'compose.ts', 'server.ts'],
  store: ['core', 'api', 'serve', 'http', 'app.ts', 'compose.ts', 'server.ts'],
  core: ['serve', 'http', 'app.ts', 'compose.ts', 'server.ts'],
  // The API's schemas: built from core's constants (below) and shared, read by http, core, client, cli.
  api: ['store', 'serve', 'http', 'client', 'cli', ...ROOT_MODULES],
  serve: ['api', 'http', 'app.ts', 'compose.ts', 'server.ts'],
  http: ['app.ts', 'compose.ts', 'server.ts'],
  // The HTTP app is handed its services: it never opens a store or builds a dependency itself.
  'app.ts': ['store', 'compose.ts', 'server.ts'],
  // The composition root builds everything; only the process entry point sits above it.
  'compose.ts': ['server.ts', 'client', 'cli'],
  // The node's primary (WORKERS > 1): the stores it holds for its workers, nothing of the service itself.
  workers: ['core', 'api', 'serve', 'http', 'client', 'cli', 'app.ts', 'compose.ts', 'server.ts'],
  // The process entry: configuration, the composition root and the primary, nothing else.
  'server.ts': ['store', 'core', 'api', 'serve', 'http', 'app.ts', 'client', 'cli'],
  // The API client and the CLI/MCP shells over it talk to the service over HTTP only (issue 13).
  client: ['store', 'core', 'serve', 'http', 'shared', 'cli', ...ROOT_MODULES],
  cli: ['store', 'core', 'serve', 'http', 'shared', ...ROOT_MODULES],
};

/**
 * Layers another may import with `import type` only (a whole `import type {...}` or `export type {...}`
 * statement: under verbatimModuleSyntax, `import { type X }` still loads the module).
 */
const TYPES_ONLY: Record<string, string[]> = { core: ['api'], client: ['api'], cli: ['api'] };

/** Layers whose values another may import only if they are constants (SCREAMING_CASE names). */
const CONSTANTS_ONLY: Record<string, string[]> = { api: ['core'] };
const CONSTANT = /^[A-Z][A-Z0-9_]*$/;

interface Import {
  target: string;
  typeOnly: boolean;
  /** The values it brings in: names, `default` or `*`. */
  values: string[];
}

/** Every relative import and re-export of a module's text. */
function importsOf(text: string): Import[] {
  const found: Import[] = [];
  for (const m of text.matchAll(
    /\b(?:import|export)\s+(type\s+)?(?:([\w$*{}\s,]+?)\s+from\s+)?'(\.{1,2}\/[^']+)'/g,
  )) {
    const clause = m[2] ?? '';
    const braces = /\{([^}]*)\}/.exec(clause);
    const named = (braces?.[1] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '' && !s.startsWith('type '))
      .map((s) => s.split(/\s+as\s+/)[0]!);
    const outside = clause.replace(/\{[^}]*\}/, '').trim();
    const extra = outside.includes('*') ? ['*'] : /^\w/.test(outside) ? ['default'] : [];
    found.push({ target: m[3]!, typeOnly: m[1] !== undefined, values: [...extra, ...named] });
  }
  for (const m of text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'/g)) {
    found.push({ target: m[1]!, typeOnly: false, values: ['*'] });
  }
  return found;
}

/** The top-level entry of src/ a path belongs to: a directory name or a root file name. */
const layerOf = (file: string) => relative(SRC, file).split('/')[0]!;

/** What is wrong with the imports of one module (`file` is its path under src/). */
function violationsOf(file: string, text: string): string[] {
  const layer = layerOf(file);
  const out: string[] = [];
  for (const imp of importsOf(text)) {
    const target = layerOf(resolve(dirname(file), imp.target.replace(/\.js$/, '.ts')));
    const where = `${relative(SRC, file)} -> ${imp.target}`;
    if ((FORBIDDEN[layer] ?? []).includes(target)) out.push(where);
    else if ((TYPES_ONLY[layer] ?? []).includes(target) && !imp.typeOnly) out.push(`${where} (types only)`);
    else if ((CONSTANTS_ONLY[layer] ?? []).includes(target)) {
      const others = imp.typeOnly ? [] : imp.values.filter((v) => !CONSTANT.test(v));
      if (others.length > 0) out.push(`${where} (constants only, not ${others.join(', ')})`);
    }
  }
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('no module imports from a layer above its own', () => {
  const violations = sources(SRC).flatMap((file) => violationsOf(file, readFileSync(file, 'utf8')));
  assert.deepEqual(violations, []);
});

test('every module of src/ belongs to a layer the rules above name', () => {
  const layers = new Set(sources(SRC).map(layerOf));
  assert.deepEqual([...layers].filter((layer) => !(layer in FORBIDDEN)).sort(), []);
});

/** The modules of src/ a file imports (relative imports, as paths of .ts files). */
const importedFiles = (file: string) =>
  importsOf(readFileSync(file, 'utf8')).map((imp) =>
    resolve(dirname(file), imp.target.replace(/\.js$/, '.ts')),
  );

/** Modules private to their layer: who may import them (layers as above). */
const PRIVATE: Record<string, string[]> = {
  // The password gate is the site server's; the cookies it shares with the dashboard are shared/cookies.ts.
  'serve/password-gate.ts': ['serve'],
};

test('a module private to its layer is imported from that layer only', () => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    for (const target of importedFiles(file)) {
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
    for (const target of importedFiles(file)) {
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
  assert.ok(importsOf(text).length > 3);
});

test('the layering check tells `import type` from a value import', () => {
  const at = (layer: string) => join(SRC, layer, 'module.ts');
  const cases: Array<[string, string, number]> = [
    // The client and the CLI carry no service code: the API's types only.
    [at('client'), "import type { Link } from '../api/links.js';", 0],
    [at('client'), "import { Link } from '../api/links.js';", 1],
    [at('client'), "import { type Link } from '../api/links.js';", 1],
    [at('cli'), "export type { Link } from '../api/links.js';", 0],
    [at('cli'), "export { createLink } from '../api/links.js';", 1],
    [at('cli'), "const api = await import('../api/links.js');", 1],
    // Core returns the API's types and never runs its code.
    [at('core'), "import type {\n  Link,\n  LinkList,\n} from '../api/links.js';", 0],
    [at('core'), "import * as api from '../api/links.js';", 1],
    // The API is built from core's constants, not its functions.
    [at('api'), "import { HANDLE_MAX_CHARS, HANDLE_PATTERN } from '../core/handle.js';", 0],
    [at('api'), "import { handleProblem, HANDLE_MAX_CHARS } from '../core/handle.js';", 1],
    [at('api'), "import type { HandleDeps } from '../core/handle.js';", 0],
    [at('api'), "import { helper } from '../http/errors.js';", 1],
    // http registers the API's operations.
    [at('http'), "import * as api from '../api/links.js';", 0],
  ];
  for (const [file, text, expected] of cases) {
    assert.equal(violationsOf(file, text).length, expected, `${relative(SRC, file)}: ${text}`);
  }
});
