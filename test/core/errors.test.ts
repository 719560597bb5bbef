// The error catalogue (src/core/errors.ts) lists the codes the service raises, and only those: a code no
// module raises is dead weight a client could be written against.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ERROR_STATUS } from '../../src/core/errors.js';

const SRC = resolve('src');
/** The service's modules (the API client and the CLI only read codes the service sends). */
const SERVICE_DIRS = ['core', 'http', 'serve', 'store', 'shared'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('every code of the catalogue is raised by some module of the service', () => {
  const catalogue = join('core', 'errors.ts');
  const text = SERVICE_DIRS.flatMap((d) => sources(join(SRC, d)))
    .filter((f) => !f.endsWith(catalogue))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
  // The catalogue's own helpers (`unauthorized()`, `notFound()`) raise a code wherever they are called.
  const helpers = [
    ...readFileSync(join(SRC, catalogue), 'utf8').matchAll(
      /export const (\w+) = [^\n]*\n?[^\n]*'([A-Z_]+)'/g,
    ),
  ].map((m) => ({ name: m[1]!, code: m[2]! }));
  const raised = (code: string) =>
    text.includes(`'${code}'`) ||
    helpers.some((h) => h.code === code && new RegExp(`\\b${h.name}\\(`).test(text));
  const unused = Object.keys(ERROR_STATUS).filter((code) => !raised(code));
  assert.deepEqual(unused, []);
});
