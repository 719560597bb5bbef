import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Encoding, pickEncoding } from '../../../src/shared/rules/encoding.js';
import { isCompressible } from '../../../src/shared/rules/media-types.js';

const pickCases: Array<[name: string, header: string | undefined, expected: Encoding | null]> = [
  ['absent header sends identity', undefined, null],
  ['empty header sends identity', '', null],
  ['common browser header picks br', 'gzip, deflate, br', 'br'],
  ['common browser header with zstd picks br', 'gzip, deflate, br, zstd', 'br'],
  ['gzip only picks gzip', 'gzip', 'gzip'],
  ['br only picks br', 'br', 'br'],
  ['deflate only sends identity', 'deflate', null],
  ['zstd only sends identity', 'zstd', null],
  ['x-gzip counts as gzip', 'x-gzip', 'gzip'],
  ['names are case-insensitive', 'GZIP, BR', 'br'],
  ['br wins over gzip at equal q', 'gzip;q=0.8, br;q=0.8', 'br'],
  ['higher q wins: gzip over br', 'br;q=0.5, gzip;q=0.9', 'gzip'],
  ['q=0 excludes br', 'br;q=0, gzip', 'gzip'],
  ['q=0 excludes both', 'br;q=0, gzip;q=0', null],
  ['q=0.000 excludes', 'gzip;q=0.000', null],
  ['Q parameter name is case-insensitive', 'br;Q=0, gzip', 'gzip'],
  ['whitespace around ; and = is tolerated', 'br ; q=0 , gzip ; q=0.5', 'gzip'],
  ['* grants br and gzip', '*', 'br'],
  ['* with q=0 and gzip listed picks gzip', 'gzip, *;q=0', 'gzip'],
  ['*;q=0 alone sends identity', '*;q=0', null],
  ['explicit br;q=0 beats the * wildcard', 'br;q=0, *', 'gzip'],
  ['identity preferred explicitly over gzip sends identity', 'identity;q=1, gzip;q=0.5', null],
  ['identity at equal q still gets compression', 'gzip, identity', 'gzip'],
  ['identity;q=0 still allows br', 'br, identity;q=0', 'br'],
  ['invalid q-value ignores that member', 'br;q=2, gzip', 'gzip'],
  ['q-value with too many decimals is invalid', 'br;q=0.5555, gzip;q=0.1', 'gzip'],
  ['q=1.000 is valid', 'br;q=1.000', 'br'],
  ['q=1.5 is invalid', 'br;q=1.5', null],
  ['empty members are ignored', ',, gzip ,', 'gzip'],
  ['other parameters are ignored', 'gzip;level=9', 'gzip'],
];

for (const [name, header, expected] of pickCases) {
  test(`pickEncoding: ${name}`, () => {
    assert.equal(pickEncoding(header), expected);
    assert.equal(pickEncoding(header), expected, 'same answer from the cache');
  });
}

test('pickEncoding: the cache stays bounded under many distinct headers', () => {
  for (let i = 0; i < 2000; i++)
    assert.equal(pickEncoding(`gzip;q=0.${i % 1000}, x${i}`), i % 1000 === 0 ? null : 'gzip');
  assert.equal(pickEncoding('gzip, deflate, br'), 'br');
});

const compressibleCases: Array<[type: string, expected: boolean]> = [
  ['text/html', true],
  ['text/html; charset=utf-8', true],
  ['TEXT/CSS', true],
  ['text/plain', true],
  ['text/javascript', true],
  ['application/json', true],
  ['application/javascript', true],
  ['application/xml', true],
  ['image/svg+xml', true],
  ['application/wasm', true],
  ['application/manifest+json', true],
  ['application/ld+json', true],
  ['application/vnd.api+json', true],
  ['application/rss+xml', true],
  ['font/ttf', true],
  ['font/otf', true],
  ['application/vnd.ms-fontobject', true],
  ['font/woff', false],
  ['font/woff2', false],
  ['image/png', false],
  ['image/jpeg', false],
  ['image/webp', false],
  ['image/avif', false],
  ['image/gif', false],
  ['application/zip', false],
  ['application/gzip', false],
  ['application/pdf', false],
  ['video/mp4', false],
  ['audio/mpeg', false],
  ['application/octet-stream', false],
  ['', false],
];

for (const [type, expected] of compressibleCases) {
  test(`isCompressible: ${type || '(empty)'} is ${expected ? '' : 'not '}compressible`, () => {
    assert.equal(isCompressible(type), expected);
  });
}
