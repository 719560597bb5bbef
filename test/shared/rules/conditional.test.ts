import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ConditionalHeaders,
  ifRangeMatches,
  isNotModified,
} from '../../../src/shared/rules/conditional.js';

const ETAG = '"abc123"';
// 1994-11-06T08:49:37.250Z: sub-second part must be ignored (HTTP-dates have 1 s resolution).
const MTIME = Date.UTC(1994, 10, 6, 8, 49, 37, 250);
const SAME = 'Sun, 06 Nov 1994 08:49:37 GMT';
const LATER = 'Sun, 06 Nov 1994 08:49:38 GMT';
const EARLIER = 'Sun, 06 Nov 1994 08:49:36 GMT';

const notModifiedCases: Array<[name: string, headers: ConditionalHeaders, etag: string, expected: boolean]> =
  [
    ['no conditional headers is modified', {}, ETAG, false],
    ['matching If-None-Match is not modified', { 'if-none-match': '"abc123"' }, ETAG, true],
    ['different If-None-Match is modified', { 'if-none-match': '"zzz"' }, ETAG, false],
    ['weak request tag matches strong etag (weak comparison)', { 'if-none-match': 'W/"abc123"' }, ETAG, true],
    [
      'strong request tag matches weak etag (weak comparison)',
      { 'if-none-match': '"abc123"' },
      'W/"abc123"',
      true,
    ],
    ['weak matches weak', { 'if-none-match': 'W/"abc123"' }, 'W/"abc123"', true],
    ['* matches any file', { 'if-none-match': '*' }, ETAG, true],
    ['* with spaces matches', { 'if-none-match': ' * ' }, ETAG, true],
    ['list with a match is not modified', { 'if-none-match': '"x", "y", "abc123"' }, ETAG, true],
    ['list without spaces matches', { 'if-none-match': '"x","abc123"' }, ETAG, true],
    ['list with weak member matches', { 'if-none-match': '"x", W/"abc123"' }, ETAG, true],
    ['list without a match is modified', { 'if-none-match': '"x", "y"' }, ETAG, false],
    ['a comma inside an opaque tag does not split it', { 'if-none-match': '"a,"abc123"' }, ETAG, false],
    ['tag prefix does not match', { 'if-none-match': '"abc"' }, ETAG, false],
    ['tag with extra chars does not match', { 'if-none-match': '"abc1234"' }, ETAG, false],
    ['unquoted tag does not match', { 'if-none-match': 'abc123' }, ETAG, false],
    ['junk member is skipped, later tag matches', { 'if-none-match': 'junk, "abc123"' }, ETAG, true],
    ['unterminated tag does not match', { 'if-none-match': '"abc123' }, ETAG, false],
    [
      'If-None-Match takes precedence over a matching If-Modified-Since',
      { 'if-none-match': '"zzz"', 'if-modified-since': LATER },
      ETAG,
      false,
    ],
    [
      'If-None-Match match wins over an older If-Modified-Since',
      { 'if-none-match': '"abc123"', 'if-modified-since': EARLIER },
      ETAG,
      true,
    ],
    [
      'If-Modified-Since equal at second resolution is not modified',
      { 'if-modified-since': SAME },
      ETAG,
      true,
    ],
    ['If-Modified-Since later than mtime is not modified', { 'if-modified-since': LATER }, ETAG, true],
    ['If-Modified-Since earlier than mtime is modified', { 'if-modified-since': EARLIER }, ETAG, false],
    [
      'If-Modified-Since in RFC 850 format is understood',
      { 'if-modified-since': 'Sunday, 06-Nov-94 08:49:37 GMT' },
      ETAG,
      true,
    ],
    [
      'If-Modified-Since in asctime format is understood',
      { 'if-modified-since': 'Sun Nov  6 08:49:37 1994' },
      ETAG,
      true,
    ],
    [
      'invalid If-Modified-Since is modified',
      { 'if-modified-since': 'not a date at all, really no' },
      ETAG,
      false,
    ],
    ['a loose number is not a date', { 'if-modified-since': '1' }, ETAG, false],
    ['empty If-Modified-Since is modified', { 'if-modified-since': '' }, ETAG, false],
  ];

for (const [name, headers, etag, expected] of notModifiedCases) {
  test(`isNotModified: ${name}`, () => {
    assert.equal(isNotModified(headers, etag, MTIME), expected);
  });
}

test('isNotModified: the date memo does not leak between different values', () => {
  assert.equal(isNotModified({ 'if-modified-since': SAME }, ETAG, MTIME), true);
  assert.equal(isNotModified({ 'if-modified-since': EARLIER }, ETAG, MTIME), false);
  assert.equal(isNotModified({ 'if-modified-since': SAME }, ETAG, MTIME), true);
});

const ifRangeCases: Array<[name: string, ifRange: string | undefined, etag: string, expected: boolean]> = [
  ['absent If-Range lets the Range apply', undefined, ETAG, true],
  ['identical strong etag matches', '"abc123"', ETAG, true],
  ['different etag does not match', '"zzz"', ETAG, false],
  ['weak request etag never matches (strong comparison)', 'W/"abc123"', ETAG, false],
  ['weak current etag never matches (strong comparison)', '"abc123"', 'W/"abc123"', false],
  ['exact Last-Modified date matches', SAME, ETAG, true],
  ['later date does not match (must be exact)', LATER, ETAG, false],
  ['earlier date does not match', EARLIER, ETAG, false],
  ['invalid date does not match', 'yesterday-ish, sometime around noon', ETAG, false],
  ['surrounding whitespace is tolerated', '  "abc123"  ', ETAG, true],
];

for (const [name, ifRange, etag, expected] of ifRangeCases) {
  test(`ifRangeMatches: ${name}`, () => {
    assert.equal(ifRangeMatches(ifRange, etag, MTIME), expected);
  });
}
