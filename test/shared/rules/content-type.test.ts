import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentTypeHeader, isWellFormedMime } from '../../../src/shared/rules/content-type.js';

const headerCases: Array<[name: string, manifestType: string, expected: string]> = [
  ['text/html gets utf-8', 'text/html', 'text/html; charset=utf-8'],
  ['text/css gets utf-8', 'text/css', 'text/css; charset=utf-8'],
  ['text/plain gets utf-8', 'text/plain', 'text/plain; charset=utf-8'],
  ['application/javascript gets utf-8', 'application/javascript', 'application/javascript; charset=utf-8'],
  ['application/json gets utf-8', 'application/json', 'application/json; charset=utf-8'],
  ['image/svg+xml gets utf-8', 'image/svg+xml', 'image/svg+xml; charset=utf-8'],
  ['application/xml gets utf-8', 'application/xml', 'application/xml; charset=utf-8'],
  ['+json suffix gets utf-8', 'application/vnd.api+json', 'application/vnd.api+json; charset=utf-8'],
  ['manifest+json gets utf-8', 'application/manifest+json', 'application/manifest+json; charset=utf-8'],
  ['upper-case type still gets a charset', 'Text/HTML', 'Text/HTML; charset=utf-8'],
  ['an existing charset is kept', 'text/html; charset=iso-8859-1', 'text/html; charset=iso-8859-1'],
  ['an existing CHARSET (any case) is kept', 'text/plain;CHARSET=utf-16', 'text/plain;CHARSET=utf-16'],
  [
    'other parameters are kept and a charset appended',
    'text/plain; format=flowed',
    'text/plain; format=flowed; charset=utf-8',
  ],
  ['image/png is unchanged', 'image/png', 'image/png'],
  ['font/woff2 is unchanged', 'font/woff2', 'font/woff2'],
  ['application/octet-stream is unchanged', 'application/octet-stream', 'application/octet-stream'],
  ['application/wasm is unchanged (binary)', 'application/wasm', 'application/wasm'],
  ['a malformed type falls back to octet-stream', 'text html', 'application/octet-stream'],
  ['header injection falls back to octet-stream', 'text/html\r\nSet-Cookie: a=b', 'application/octet-stream'],
  ['an empty type falls back to octet-stream', '', 'application/octet-stream'],
];

for (const [name, manifestType, expected] of headerCases) {
  test(`contentTypeHeader: ${name}`, () => {
    assert.equal(contentTypeHeader(manifestType), expected);
    assert.equal(contentTypeHeader(manifestType), expected, 'same answer from the cache');
  });
}

const mimeCases: Array<[value: string, expected: boolean]> = [
  ['text/html', true],
  ['application/vnd.ms-fontobject', true],
  ['image/svg+xml', true],
  ['text/html; charset=utf-8', true],
  ['text/html;charset=utf-8', true],
  ['text/html ;charset=utf-8', true],
  ['text/html;\tcharset=utf-8', true],
  ['text/plain; charset="utf-8"', true],
  ['text/plain; foo="a \\"quoted\\" ; value"', true],
  ['multipart/mixed; boundary=abc; charset=utf-8', true],
  ['text/html;', true],
  ['text/html; ; charset=utf-8', true],
  ["application/x-weird!#$%&'*+-.^_`|~", true],
  ['', false],
  ['text', false],
  ['text/', false],
  ['/html', false],
  ['text/html/extra', false],
  ['text /html', false],
  [' text/html', false],
  ['text/html ', false],
  ['text/html; charset', false],
  ['text/html; charset=', false],
  ['text/html; =utf-8', false],
  ['text/html; charset=utf 8', false],
  ['text/html; charset="unterminated', false],
  ['text/html\r\nx: y', false],
  ['text/html; a=b\0', false],
  ['tëxt/html', false],
  ['text/html; name="naïve"', false],
  ['(text)/html', false],
  [`text/${'a'.repeat(250)}`, true], // 255 chars: the limit
  [`text/${'a'.repeat(251)}`, false], // 256 chars
];

for (const [value, expected] of mimeCases) {
  const label = value.length > 40 ? `${value.slice(0, 20)}… (${value.length} chars)` : JSON.stringify(value);
  test(`isWellFormedMime: ${label} is ${expected ? 'valid' : 'invalid'}`, () => {
    assert.equal(isWellFormedMime(value), expected);
  });
}
