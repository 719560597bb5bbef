import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  FORBIDDEN_HEADERS,
  headersFor,
  MAX_HEADER_RULES,
  parseHeaders,
} from '../../../src/shared/rules/headers.js';

type Parsed = { path: string; line: number; headers: Array<[string, string]> };
const summary = (text: string): { rules: Parsed[]; warnings: string[] } => {
  const { rules, warnings } = parseHeaders(text);
  return {
    rules: rules.map((r) => ({
      path: r.path,
      line: r.line,
      headers: r.headers.map((h) => [h.name, h.value]),
    })),
    warnings,
  };
};

const parseCases: Array<[name: string, text: string, rules: Parsed[], warnings: RegExp[]]> = [
  [
    'a path line and its indented headers form a rule',
    '/secure/*\n  X-Frame-Options: DENY\n  X-Content-Type-Options: nosniff\n',
    [
      {
        path: '/secure/*',
        line: 1,
        headers: [
          ['X-Frame-Options', 'DENY'],
          ['X-Content-Type-Options', 'nosniff'],
        ],
      },
    ],
    [],
  ],
  [
    'tab indentation, CRLF, comments and blank lines are accepted',
    '# site headers\r\n/*\r\n\tX-A: 1\r\n\r\n  # a comment\r\n\tX-B: two words\r\n',
    [
      {
        path: '/*',
        line: 2,
        headers: [
          ['X-A', '1'],
          ['X-B', 'two words'],
        ],
      },
    ],
    [],
  ],
  [
    'values keep inner colons and are trimmed',
    '/a\n  Link:   </style.css>; rel=preload; as=style   \n  Content-Security-Policy: default-src https:',
    [
      {
        path: '/a',
        line: 1,
        headers: [
          ['Link', '</style.css>; rel=preload; as=style'],
          ['Content-Security-Policy', 'default-src https:'],
        ],
      },
    ],
    [],
  ],
  [
    'Cache-Control and Content-Type may be overridden',
    '/feed\n  Cache-Control: public, max-age=60\n  Content-Type: application/rss+xml',
    [
      {
        path: '/feed',
        line: 1,
        headers: [
          ['Cache-Control', 'public, max-age=60'],
          ['Content-Type', 'application/rss+xml'],
        ],
      },
    ],
    [],
  ],
  [
    'several rules keep file order',
    '/a\n  X-A: 1\n/b/:id\n  X-B: 2',
    [
      { path: '/a', line: 1, headers: [['X-A', '1']] },
      { path: '/b/:id', line: 3, headers: [['X-B', '2']] },
    ],
    [],
  ],
  [
    'a header line before any path is a warning',
    '  X-A: 1\n/a\n  X-B: 2',
    [{ path: '/a', line: 2, headers: [['X-B', '2']] }],
    [/^line 1: header line before any path line/],
  ],
  [
    'a path not starting with / is a warning and its headers are skipped',
    'a\n  X-A: 1\n  X-B: 2',
    [],
    [/^line 1: invalid path "a": path must start with \//],
  ],
  [
    'a full-URL path is a warning',
    'https://example.com/*\n  X-A: 1',
    [],
    [/^line 1: full URLs are not supported/],
  ],
  ['a splat in the middle is a warning', '/a/*/b\n  X-A: 1', [], [/^line 1: invalid path/]],
  [
    'a header name with a space before the colon is a warning',
    '/a\n  X-A : 1\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: invalid header name "X-A "/],
  ],
  [
    'a header name with invalid characters is a warning',
    '/a\n  X(A): 1\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: invalid header name/],
  ],
  [
    'a line without a colon is a warning',
    '/a\n  just text\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: expected "Name: value"/],
  ],
  [
    'an empty value is a warning',
    '/a\n  X-A:\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: header X-A has an empty value/],
  ],
  [
    'a CR inside a value is a warning',
    '/a\n  X-A: 1\rSet-Cookie: x=y\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: header X-A value contains a control or non-ASCII character/],
  ],
  [
    'a NUL inside a value is a warning',
    '/a\n  X-A: a\0b\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: header X-A value contains/],
  ],
  [
    'a non-ASCII value is a warning',
    '/a\n  X-A: naïve\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: header X-A value contains/],
  ],
  [
    'Cloudflare "! Name" detach lines are a warning',
    '/a\n  ! X-A\n  X-B: 2',
    [{ path: '/a', line: 1, headers: [['X-B', '2']] }],
    [/^line 2: detaching headers/],
  ],
  [
    'a path with no valid headers is a warning and dropped',
    '/a\n  Content-Length: 5\n/b\n  X-B: 2',
    [{ path: '/b', line: 3, headers: [['X-B', '2']] }],
    [/^line 2: header Content-Length cannot be set/, /^line 1: \/a has no valid headers/],
  ],
];

for (const [name, text, rules, warnings] of parseCases) {
  test(`parseHeaders: ${name}`, () => {
    const got = summary(text);
    assert.deepEqual(got.rules, rules);
    assert.equal(got.warnings.length, warnings.length, `warnings: ${JSON.stringify(got.warnings)}`);
    for (const [i, re] of warnings.entries()) assert.match(got.warnings[i]!, re);
  });
}

const forbidden = [
  'Content-Length',
  'Transfer-Encoding',
  'Connection',
  'Keep-Alive',
  'Proxy-Connection',
  'TE',
  'Trailer',
  'Upgrade',
  'Content-Encoding',
  'Content-Range',
  'ETag',
  'Last-Modified',
  'Accept-Ranges',
  'Date',
  'Set-Cookie',
];

for (const name of forbidden) {
  test(`parseHeaders: ${name} cannot be set (any case)`, () => {
    const { rules, warnings } = parseHeaders(`/*\n  ${name.toUpperCase()}: x\n  X-Ok: 1`);
    assert.equal(rules.length, 1);
    assert.deepEqual(
      rules[0]!.headers.map((h) => h.name),
      ['X-Ok'],
    );
    assert.match(warnings[0]!, /^line 2: header .* cannot be set from _headers$/);
  });
}

test('parseHeaders: the forbidden list is exactly the documented one', () => {
  assert.deepEqual([...FORBIDDEN_HEADERS].sort(), forbidden.map((n) => n.toLowerCase()).sort());
});

test(`parseHeaders: more than ${MAX_HEADER_RULES} path rules is a warning and the rest is ignored`, () => {
  const text = Array.from({ length: MAX_HEADER_RULES + 3 }, (_, i) => `/p${i}\n  X-N: ${i}`).join('\n');
  const { rules, warnings } = parseHeaders(text);
  assert.equal(rules.length, MAX_HEADER_RULES);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    new RegExp(`^line ${2 * MAX_HEADER_RULES + 1}: more than ${MAX_HEADER_RULES} path rules`),
  );
});

const FILE = `
/*
  X-Frame-Options: DENY
  Link: </base.css>; rel=preload
/blog/*
  Cache-Control: public, max-age=300
  link: </blog.css>; rel=preload
/blog/:slug
  X-Blog-Post: yes
/about
  X-About: 1
/assets/*
  Access-Control-Allow-Origin: *
/assets/*
  access-control-allow-origin: https://example.com
/caf%C3%A9
  X-Cafe: 1
/prefix*
  X-Prefix: 1
`;
const { rules: RULES, warnings: FILE_WARNINGS } = parseHeaders(FILE);

test('parseHeaders: the sample file parses without warnings', () => {
  assert.deepEqual(FILE_WARNINGS, []);
});

const base: Array<[string, string]> = [
  ['X-Frame-Options', 'DENY'],
  ['Link', '</base.css>; rel=preload'],
];

const matchCases: Array<[name: string, path: string, expected: Array<[string, string]>]> = [
  ['the catch-all applies to the root', '/', base],
  ['a path matching only the catch-all gets its headers', '/contact', base],
  [
    'all matching rules apply in order and repeated names are joined with ", "',
    '/blog/hello',
    [
      ['X-Frame-Options', 'DENY'],
      ['Link', '</base.css>; rel=preload, </blog.css>; rel=preload'],
      ['Cache-Control', 'public, max-age=300'],
      ['X-Blog-Post', 'yes'],
    ],
  ],
  [
    'a placeholder matches one segment only',
    '/blog/2024/hello',
    [
      ['X-Frame-Options', 'DENY'],
      ['Link', '</base.css>; rel=preload, </blog.css>; rel=preload'],
      ['Cache-Control', 'public, max-age=300'],
    ],
  ],
  [
    'a splat matches its bare prefix',
    '/blog',
    [
      ['X-Frame-Options', 'DENY'],
      ['Link', '</base.css>; rel=preload, </blog.css>; rel=preload'],
      ['Cache-Control', 'public, max-age=300'],
    ],
  ],
  ['/about matches /about/ (trailing slash)', '/about/', [...base, ['X-About', '1']]],
  ['/about does not match /about/team', '/about/team', base],
  ['a rule matches the percent-encoded request path', '/caf%C3%A9', [...base, ['X-Cafe', '1']]],
  ['an inline splat matches longer names', '/prefixed/page', [...base, ['X-Prefix', '1']]],
  [
    'the same header from two rules is joined under the first spelling',
    '/assets/app.js',
    [...base, ['Access-Control-Allow-Origin', '*, https://example.com']],
  ],
];

for (const [name, path, expected] of matchCases) {
  test(`headersFor: ${name}`, () => {
    assert.deepEqual(headersFor(RULES, path), expected);
  });
}

test('headersFor: no rules gives no headers', () => {
  assert.deepEqual(headersFor([], '/x'), []);
  const { rules } = parseHeaders('/only\n  X-A: 1');
  assert.deepEqual(headersFor(rules, '/other'), []);
});

test('headersFor: repeated calls do not accumulate joined values', () => {
  const first = headersFor(RULES, '/assets/app.js');
  const second = headersFor(RULES, '/assets/app.js');
  assert.deepEqual(second, first);
});

test('headersFor: literal-first and wildcard-first rules interleave in file order', () => {
  const { rules } = parseHeaders(
    '/blog/*\n  X-Order: 1\n/*\n  X-Order: 2\n/blog/:slug\n  X-Order: 3\n/:any/post\n  X-Order: 4',
  );
  assert.deepEqual(headersFor(rules, '/blog/post'), [['X-Order', '1, 2, 3, 4']]);
  assert.deepEqual(headersFor(rules, '/news/post'), [['X-Order', '2, 4']]);
});
