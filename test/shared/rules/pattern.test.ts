import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compilePattern,
  matchPattern,
  normalizeRequestPath,
  type PathPattern,
} from '../../../src/shared/rules/pattern.js';

const compiled = (source: string): PathPattern => {
  const p = compilePattern(source);
  assert.ok(typeof p !== 'string', `pattern ${source} should compile: ${p}`);
  return p;
};

const cases: Array<[name: string, pattern: string, path: string, captures: string[] | null]> = [
  ['the root pattern matches only the root', '/', '/', []],
  ['the root pattern does not match a page', '/', '/a', null],
  ['an exact pattern matches', '/a/b', '/a/b', []],
  ['an exact pattern does not match a prefix', '/a/b', '/a', null],
  ['an exact pattern does not match a longer path', '/a/b', '/a/b/c', null],
  ['placeholders capture whole segments', '/p/:x/q/:y', '/p/1/q/2', ['1', '2']],
  ['a placeholder does not match an empty segment', '/p/:x', '/p', null],
  ['a placeholder does not match two segments', '/p/:x', '/p/1/2', null],
  ['/* matches the root with an empty splat', '/*', '/', ['']],
  ['/* matches everything', '/*', '/a/b', ['a/b']],
  ['/a/* matches /a with an empty splat', '/a/*', '/a', ['']],
  ['/a/* matches deep paths', '/a/*', '/a/b/c', ['b/c']],
  ['/a/* does not match /ab', '/a/*', '/ab', null],
  ['/a* matches /ab', '/a*', '/ab', ['b']],
  ['/a* matches /a/b', '/a*', '/a/b', ['/b']],
  ['/a* does not match /b', '/a*', '/b', null],
  ['placeholder then splat', '/u/:id/*', '/u/7/x/y', ['7', 'x/y']],
  ['placeholder then inline splat', '/u/:id/f*', '/u/7/foo', ['7', 'oo']],
  ['a trailing slash in the pattern is ignored', '/a/', '/a', []],
];

for (const [name, pattern, path, expected] of cases) {
  test(`matchPattern: ${name}`, () => {
    const captures: string[] = [];
    const ok = matchPattern(compiled(pattern), normalizeRequestPath(path), captures);
    assert.equal(ok, expected !== null);
    if (expected !== null) assert.deepEqual(captures, expected);
  });
}

const invalid: Array<[pattern: string, reason: RegExp]> = [
  ['a', /must start with \//],
  ['/a/*/b', /only allowed at the end/],
  ['/a//b', /empty segment/],
  ['/:1x', /must be a whole segment/],
  ['/:', /must be a whole segment/],
  ['/:x*', /cannot be followed by \*/],
  ['/:splat/*', /clashes/],
  ['/a b', /whitespace/],
];

for (const [pattern, reason] of invalid) {
  test(`compilePattern: ${JSON.stringify(pattern)} is rejected`, () => {
    const p = compilePattern(pattern);
    assert.equal(typeof p, 'string');
    assert.match(p as string, reason);
  });
}
