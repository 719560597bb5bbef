// checkServeFiles: the warnings finalize reports for bad lines of `_redirects` and `_headers`.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkServeFiles,
  parseServeFiles,
  SERVE_FILE_MAX_BYTES,
} from '../../../src/shared/rules/serve-files.js';

describe('checkServeFiles', () => {
  test('valid files give no warnings; other paths are ignored', () => {
    assert.deepEqual(
      checkServeFiles([
        { path: '_redirects', text: '/a /b 301\n/* /index.html 200\n' },
        { path: '_headers', text: '/*\n  X-Frame-Options: DENY\n' },
        { path: 'index.html', text: 'not a rules file /a' },
      ]),
      [],
    );
  });

  test('bad lines are reported with the file name and line number', () => {
    const warnings = checkServeFiles([
      { path: '_redirects', text: '/ok /fine\n/bad /x 999\nnoslash /y\n' },
      { path: '_headers', text: '/*\n  Set-Cookie: a=1\n  X-Ok: 1\n' },
    ]);
    assert.equal(warnings.length, 3, warnings.join('\n'));
    assert.match(warnings[0]!, /^_redirects line 2: status "999"/);
    assert.match(warnings[1]!, /^_redirects line 3: /);
    assert.match(warnings[2]!, /^_headers line 2: header Set-Cookie cannot be set/);
  });

  test('an oversized file is reported as ignored', () => {
    const text = `/a /b\n${'#'.repeat(SERVE_FILE_MAX_BYTES)}`;
    const warnings = checkServeFiles([{ path: '_redirects', text }]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /_redirects is larger than 1 MB and is ignored/);
  });

  test('parseServeFiles returns the parsed rules of both files', () => {
    const rules = parseServeFiles([
      { path: '_redirects', text: '/a /b 302!\n' },
      { path: '_headers', text: '/x\n  X-A: 1\n' },
    ]);
    assert.equal(rules.redirects.length, 1);
    assert.equal(rules.redirects[0]!.force, true);
    assert.equal(rules.headers.length, 1);
  });
});
