import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownedString } from '../../src/shared/strings.js';

test('an owned copy of a string has exactly its characters, whatever they are', () => {
  const head = 'GET /caf\u00e9/index.html HTTP/1.1\r\nHost: some-site-abc123.example.test:8080\r\n';
  const cases = [
    '',
    'short',
    head.slice(head.indexOf('some-'), head.indexOf(':8080')), // a slice of a request head
    `${'Cache-Control: public\r\n'}${'ETag: "x"\r\n'}`, // a pair of parts
    'caf\u00e9-\u00ff-latin-1-only-text',
    'wide \u4e2d\u6587 and an emoji \u{1f680} past Latin-1',
    'a lone surrogate \ud800 kept as it is, and another \udfff',
  ];
  for (const s of cases) assert.equal(ownedString(s), s);
});
