import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Candidate,
  candidatePaths,
  decodeRequestPath,
  resolveCandidate,
} from '../../../src/shared/rules/paths.js';

const decodeCases: Array<[name: string, raw: string, expected: string | null]> = [
  ['root decodes to the empty path', '/', ''],
  ['a file path loses its leading slash', '/about.html', 'about.html'],
  ['a folder path keeps its trailing slash', '/docs/', 'docs/'],
  ['a nested path is returned as is', '/a/b/c.txt', 'a/b/c.txt'],
  ['percent escapes are decoded', '/my%20page.html', 'my page.html'],
  ['UTF-8 escapes are decoded', '/caf%C3%A9/', 'café/'],
  ['decoding keeps later plain segments', '/a%20b/c/d', 'a b/c/d'],
  ['a plus sign stays a plus sign', '/a+b', 'a+b'],
  ['dots inside a name are fine', '/.well-known/x..y', '.well-known/x..y'],
  // Traversal table.
  ['/%2e%2e/ is rejected (encoded dot-dot)', '/%2e%2e/', null],
  ['/%2E%2E/secret is rejected (upper-case escapes)', '/%2E%2E/secret', null],
  ['/.%2e/ is rejected (half-encoded dot-dot)', '/.%2e/', null],
  ['/..%2f..%2f is rejected', '/..%2f..%2f', null],
  ['/a%2fb is rejected (encoded slash)', '/a%2fb', null],
  ['/a%2Fb is rejected (encoded slash, upper case)', '/a%2Fb', null],
  ['//etc/passwd is rejected (empty segment)', '//etc/passwd', null],
  ['/a//b is rejected (empty segment)', '/a//b', null],
  ['/a// is rejected (two trailing slashes)', '/a//', null],
  ['\\..\\ is rejected (backslashes)', '\\..\\', null],
  ['/a\\..\\b is rejected (raw backslash)', '/a\\..\\b', null],
  ['/a%5cb is rejected (encoded backslash)', '/a%5cb', null],
  ['/a/%00 is rejected (encoded NUL)', '/a/%00', null],
  ['/a%00.html is rejected (NUL inside a name)', '/a%00.html', null],
  ['a raw NUL is rejected', '/a\0b', null],
  ['/../etc/passwd is rejected', '/../etc/passwd', null],
  ['/a/./b is rejected (dot segment)', '/a/./b', null],
  ['/a/.. is rejected (final dot-dot)', '/a/..', null],
  ['/%2e is rejected (encoded dot)', '/%2e', null],
  ['/%252e%252e/ decodes once to the literal name %2e%2e', '/%252e%252e/', '%2e%2e/'],
  ['malformed escape %zz is rejected', '/a%zz', null],
  ['truncated escape is rejected', '/a%2', null],
  ['invalid UTF-8 escape is rejected', '/a%ff', null],
  ['a path without a leading slash is rejected', 'about.html', null],
  ['the empty string is rejected', '', null],
];

for (const [name, raw, expected] of decodeCases) {
  test(`decodeRequestPath: ${name}`, () => {
    assert.equal(decodeRequestPath(raw), expected);
  });
}

const candidateCases: Array<[name: string, decoded: string, expected: Candidate[]]> = [
  ['root serves index.html', '', [{ path: 'index.html' }]],
  ['dir/ serves dir/index.html', 'docs/', [{ path: 'docs/index.html' }]],
  ['nested dir/ serves its index.html', 'a/b/', [{ path: 'a/b/index.html' }]],
  [
    'page tries page, page.html, then page/index.html as a redirect to page/',
    'page',
    [{ path: 'page' }, { path: 'page.html' }, { path: 'page/index.html', redirect: '/page/' }],
  ],
  [
    'the folder redirect is percent-encoded',
    'my docs/été',
    [
      { path: 'my docs/été' },
      { path: 'my docs/été.html' },
      { path: 'my docs/été/index.html', redirect: '/my%20docs/%C3%A9t%C3%A9/' },
    ],
  ],
  [
    'a literal %2e%2e name is re-encoded in the redirect',
    '%2e%2e',
    [{ path: '%2e%2e' }, { path: '%2e%2e.html' }, { path: '%2e%2e/index.html', redirect: '/%252e%252e/' }],
  ],
];

for (const [name, decoded, expected] of candidateCases) {
  test(`candidatePaths: ${name}`, () => {
    assert.deepEqual(candidatePaths(decoded), expected);
  });
}

const resolveCases: Array<
  [name: string, decoded: string, files: string[], expected: ReturnType<typeof resolveCandidate>]
> = [
  [
    '/about serves about.html directly (no redirect)',
    'about',
    ['about.html'],
    { kind: 'file', path: 'about.html' },
  ],
  [
    '/docs with only docs/index.html redirects to /docs/',
    'docs',
    ['docs/index.html'],
    { kind: 'redirect', location: '/docs/' },
  ],
  ['/docs/ serves docs/index.html', 'docs/', ['docs/index.html'], { kind: 'file', path: 'docs/index.html' }],
  [
    'an exact file wins over page.html and page/index.html',
    'page',
    ['page', 'page.html', 'page/index.html'],
    { kind: 'file', path: 'page' },
  ],
  [
    'page.html wins over page/index.html',
    'page',
    ['page.html', 'page/index.html'],
    { kind: 'file', path: 'page.html' },
  ],
  ['root serves index.html', '', ['index.html'], { kind: 'file', path: 'index.html' }],
  ['nothing matching resolves to null', 'missing', ['index.html'], null],
  ['dir/ without an index resolves to null', 'docs/', ['docs.html'], null],
];

for (const [name, decoded, files, expected] of resolveCases) {
  test(`candidatePaths: ${name}`, () => {
    const set = new Set(files);
    assert.deepEqual(
      resolveCandidate(decoded, (p) => set.has(p)),
      expected,
    );
  });
}
