import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_REDIRECT_RULES, matchRedirect, parseRedirects } from '../../../src/shared/rules/redirects.js';

type Parsed = { from: string; to: string; status: number; force: boolean; rewrite: boolean; line: number };
const summary = (text: string): { rules: Parsed[]; warnings: string[] } => {
  const { rules, warnings } = parseRedirects(text);
  return {
    rules: rules.map(({ from, to, status, force, rewrite, line }) => ({
      from,
      to,
      status,
      force,
      rewrite,
      line,
    })),
    warnings,
  };
};
const rule = (line: number, from: string, to: string, status = 301, force = false): Parsed => ({
  from,
  to,
  status,
  force,
  rewrite: status === 200 || status === 404,
  line,
});

const parseCases: Array<[name: string, text: string, rules: Parsed[], warnings: RegExp[]]> = [
  ['status defaults to 301', '/old /new', [rule(1, '/old', '/new')], []],
  [
    'explicit statuses are kept',
    '/a /b 302\n/c /d 308\n/e /f 200\n/g /h 404',
    [rule(1, '/a', '/b', 302), rule(2, '/c', '/d', 308), rule(3, '/e', '/f', 200), rule(4, '/g', '/h', 404)],
    [],
  ],
  [
    '303 and 307 are accepted',
    '/a /b 303\n/c /d 307',
    [rule(1, '/a', '/b', 303), rule(2, '/c', '/d', 307)],
    [],
  ],
  [
    'the ! force suffix is accepted and recorded',
    '/app/* /app/index.html 200!',
    [rule(1, '/app/*', '/app/index.html', 200, true)],
    [],
  ],
  [
    'comments and blank lines are skipped',
    '# comment\n\n   \n  # indented comment\n/a /b',
    [rule(5, '/a', '/b')],
    [],
  ],
  ['tabs and runs of spaces separate fields', '/a\t\t/b    302', [rule(1, '/a', '/b', 302)], []],
  [
    'CRLF line endings are accepted',
    '/a /b\r\n/c /d 302\r\n',
    [rule(1, '/a', '/b'), rule(2, '/c', '/d', 302)],
    [],
  ],
  [
    'an absolute https target is accepted',
    '/docs https://docs.example.com/',
    [rule(1, '/docs', 'https://docs.example.com/')],
    [],
  ],
  [
    'an absolute URL target is normalised (punycode host)',
    '/x https://exämple.com/a',
    [rule(1, '/x', 'https://xn--exmple-cua.com/a')],
    [],
  ],
  ['non-ASCII in a path target is percent-encoded', '/x /café', [rule(1, '/x', '/caf%C3%A9')], []],
  ['too few fields is a warning', '/only-from', [], [/^line 1: expected "from to \[status\]"/]],
  ['a bad status is a warning', '/a /b 418', [], [/^line 1: status "418" is not one of/]],
  ['a non-numeric status is a warning', '/a /b abc', [], [/^line 1: status "abc"/]],
  ['from not starting with / is a warning', 'old /new', [], [/^line 1: "from" must start with \//]],
  [
    'a domain-level from is a warning',
    'https://old.example.com/* https://new.example.com/:splat',
    [],
    [/^line 1: domain-level redirects/],
  ],
  [
    'query matching with from?x=:y is a warning',
    '/store?id=:id /blog/:id 301',
    [],
    [/^line 1: query-parameter matching/],
  ],
  [
    'query matching with key=value tokens is a warning',
    '/store id=:id /blog/:id 301',
    [],
    [/^line 1: query-parameter matching/],
  ],
  [
    'conditions after the status are a warning',
    '/ /anz 302 Country=au,nz',
    [],
    [/^line 1: conditions \("Country=au,nz"\)/],
  ],
  ['conditions instead of a status are a warning', '/ /anz Language=en', [], [/^line 1: conditions/]],
  ['an extra field is a warning', '/a /b 301 extra', [], [/^line 1: unexpected field "extra"/]],
  [
    'a 200 rewrite to an external URL is a warning',
    '/api/* https://api.example.com/:splat 200',
    [],
    [/^line 1: a 200 rewrite to an external URL \(proxying\) is not supported/],
  ],
  [
    'a 404 rewrite to an external URL is a warning',
    '/x https://example.com/404 404',
    [],
    [/^line 1: a 404 rewrite/],
  ],
  ['a target that is neither a path nor a URL is a warning', '/a b', [], [/^line 1: "to" must be a path/]],
  [
    'a protocol-relative target is a warning',
    '/a //evil.example',
    [],
    [/^line 1: "to" must not start with \/\//],
  ],
  [
    'a splat in the middle is a warning',
    '/a/*/b /c',
    [],
    [/^line 1: invalid "from": a \* splat is only allowed at the end/],
  ],
  ['a partial placeholder is a warning', '/a/:x-:y /c', [], [/^line 1: invalid "from": placeholder ":x-:y"/]],
  [
    'an empty segment in from is a warning',
    '/a//b /c',
    [],
    [/^line 1: invalid "from": path has an empty segment/],
  ],
  [
    'a duplicate placeholder is a warning',
    '/:a/:a /c',
    [],
    [/^line 1: invalid "from": placeholder :a is used twice/],
  ],
  ['an invalid URL target is a warning', '/a https://exa mple', [], [/^line 1: /]],
  [
    'valid lines around bad ones are kept, with line numbers',
    '/a /b\nbad\n/c /d 999\n/e /f',
    [rule(1, '/a', '/b'), rule(4, '/e', '/f')],
    [/^line 2: /, /^line 3: /],
  ],
];

for (const [name, text, rules, warnings] of parseCases) {
  test(`parseRedirects: ${name}`, () => {
    const got = summary(text);
    assert.deepEqual(got.rules, rules);
    assert.equal(got.warnings.length, warnings.length, `warnings: ${JSON.stringify(got.warnings)}`);
    for (const [i, re] of warnings.entries()) assert.match(got.warnings[i]!, re);
  });
}

test(`parseRedirects: more than ${MAX_REDIRECT_RULES} rules is a warning and the rest is ignored`, () => {
  const lines = Array.from({ length: MAX_REDIRECT_RULES + 5 }, (_, i) => `/r${i} /t${i}`);
  const { rules, warnings } = parseRedirects(lines.join('\n'));
  assert.equal(rules.length, MAX_REDIRECT_RULES);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    new RegExp(`^line ${MAX_REDIRECT_RULES + 1}: more than ${MAX_REDIRECT_RULES} rules`),
  );
});

const FILE = `
# exact rules
/home / 301
/old-page /new-page 302
/about /about-us
/external https://example.com/landing 308

# placeholders and splats
/news/:year/:month/:slug /blog/:year-:month/:slug
/news/* /blog/:splat
/go/* /:splat 302
/img/* https://cdn.example.com/img/:splat 301
/docs/v1* /docs/v2:splat 301
/keep/:id /kept/:id/:unknown/:splat
/café /coffee

# rewrites
/app/* /app/index.html 200
/gone/* /404.html 404

# first match wins: the pattern precedes the exact rule below it
/shadow/* /by-pattern
/shadow/x /by-exact
/exact-first /exact-wins
/exact-first* /pattern-loses
/* /index.html 200
`;
const { rules: RULES, warnings: FILE_WARNINGS } = parseRedirects(FILE);

test('parseRedirects: the sample file parses without warnings', () => {
  assert.deepEqual(FILE_WARNINGS, []);
});

const matchCases: Array<
  [name: string, path: string, expected: [location: string, status: number, line: number] | null]
> = [
  ['an exact rule matches', '/old-page', ['/new-page', 302, 4]],
  ['/about rule also matches /about/ (trailing slash)', '/about/', ['/about-us', 301, 5]],
  ['a rule written with a trailing slash matches without it', '/home/', ['/', 301, 3]],
  ['an absolute target is returned as the location', '/external', ['https://example.com/landing', 308, 6]],
  ['placeholders are substituted', '/news/2024/05/hello', ['/blog/2024-05/hello', 301, 9]],
  [
    'placeholders do not match empty segments, the splat rule takes it',
    '/news/2024//hello',
    ['/blog/2024//hello', 301, 10],
  ],
  ['a splat is substituted', '/news/a/b/c/d', ['/blog/a/b/c/d', 301, 10]],
  ['a splat matches the bare prefix with an empty value', '/news', ['/blog/', 301, 10]],
  ['a splat matches the prefix with a trailing slash', '/news/', ['/blog/', 301, 10]],
  ['a splat does not match a longer first segment', '/newsletter', ['/index.html', 200, 26]],
  ['a splat into an absolute URL', '/img/a/b.png', ['https://cdn.example.com/img/a/b.png', 301, 12]],
  ['an inline splat captures the rest of the segment', '/docs/v1.2/intro', ['/docs/v2.2/intro', 301, 13]],
  ['unknown placeholders stay literal', '/keep/42', ['/kept/42/:unknown/:splat', 301, 14]],
  [
    'a splat cannot produce a protocol-relative location',
    '/go//evil.example/x',
    ['/evil.example/x', 302, 11],
  ],
  [
    'a splat cannot produce a backslash protocol-relative location',
    '/go/\\evil.example',
    ['/evil.example', 302, 11],
  ],
  ['a non-ASCII rule matches the percent-encoded request', '/caf%C3%A9', ['/coffee', 301, 15]],
  ['a 200 rewrite returns the path to serve', '/app/settings/profile', ['/app/index.html', 200, 18]],
  ['a 404 rewrite returns the page and status', '/gone/thing', ['/404.html', 404, 19]],
  ['first match wins: an earlier pattern beats a later exact rule', '/shadow/x', ['/by-pattern', 301, 22]],
  ['first match wins: an earlier exact rule beats a later pattern', '/exact-first', ['/exact-wins', 301, 24]],
  ['the later pattern still matches other paths', '/exact-first-not', ['/pattern-loses', 301, 25]],
  ['the catch-all matches the root', '/', ['/index.html', 200, 26]],
  ['matching is case-sensitive', '/OLD-PAGE', ['/index.html', 200, 26]],
];

for (const [name, path, expected] of matchCases) {
  test(`matchRedirect: ${name}`, () => {
    const m = matchRedirect(RULES, path);
    if (expected === null) {
      assert.equal(m, null);
      return;
    }
    assert.ok(m, 'expected a match');
    assert.deepEqual([m.location, m.status, m.rule.line], expected);
  });
}

test('matchRedirect: no rules, or no matching rule, gives null', () => {
  assert.equal(matchRedirect([], '/anything'), null);
  const { rules } = parseRedirects('/a /b\n/c/* /d');
  assert.equal(matchRedirect(rules, '/x'), null);
  assert.equal(matchRedirect(rules, '/ab'), null);
  assert.equal(matchRedirect(rules, '/'), null);
});

test('matchRedirect: the force flag is reported on the matched rule', () => {
  const { rules } = parseRedirects('/app/* /app/index.html 200!');
  const m = matchRedirect(rules, '/app/x');
  assert.ok(m);
  assert.equal(m.rule.force, true);
  assert.equal(m.rule.rewrite, true);
});

const orderCases: Array<[name: string, text: string, path: string, expectedLine: number]> = [
  [
    'a wildcard-first rule before a literal-first rule wins',
    '/:lang/* /w/:lang 302\n/en/* /b 302',
    '/en/a',
    1,
  ],
  [
    'a literal-first rule before a wildcard-first rule wins',
    '/en/* /b 302\n/:lang/* /w/:lang 302',
    '/en/a',
    1,
  ],
  ['rules of the same first segment keep file order', '/en/a /x\n/en/:p /y\n/en/* /z', '/en/b', 2],
  [
    'an inline splat on the first segment is tried for other first segments',
    '/doc* /d\n/docs/* /e',
    '/docs/x',
    1,
  ],
  ['a later exact rule loses to an earlier wildcard', '/:any /w\n/page /e', '/page', 1],
];

for (const [name, text, path, expectedLine] of orderCases) {
  test(`matchRedirect: ${name}`, () => {
    const { rules, warnings } = parseRedirects(text);
    assert.deepEqual(warnings, []);
    assert.equal(matchRedirect(rules, path)?.rule.line, expectedLine);
  });
}
