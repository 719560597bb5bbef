// validateManifest: the spec's "File entry" rules and "Limits", one row per rule.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError, type ErrorCode } from '../../src/core/errors.js';
import {
  MAX_MANIFEST_FILES,
  MAX_PATH_CHARS,
  type ManifestLimits,
  totalSize,
  validateManifest,
} from '../../src/core/manifest.js';

const LIMITS: ManifestLimits = {
  maxFiles: MAX_MANIFEST_FILES,
  maxPathChars: MAX_PATH_CHARS,
  maxFileSizeBytes: 209715200, // Free plan, 200 MB
};
const SHA = 'a'.repeat(64);

function entry(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { path: 'index.html', size: 10, contentType: 'text/html', ...fields };
}

function manyFiles(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => entry({ path: `f/${i}.txt` }));
}

/** Runs validateManifest expecting an ApiError with this code and status whose message holds `mentions`. */
function assertRefused(files: unknown, code: ErrorCode, status: number, mentions: string[]): void {
  assert.throws(
    () => validateManifest(files, LIMITS),
    (err: unknown) => {
      assert.ok(err instanceof ApiError, `expected ApiError, got ${String(err)}`);
      assert.equal(err.code, code, err.message);
      assert.equal(err.status, status, err.message);
      for (const m of mentions)
        assert.ok(err.message.includes(m), `message ${JSON.stringify(err.message)} lacks ${m}`);
      return true;
    },
  );
}

describe('validateManifest: the files array', () => {
  test('validateManifest: 1000 files -> accepted', () => {
    assert.equal(validateManifest(manyFiles(1000), LIMITS).length, 1000);
  });
  test('validateManifest: 1 file -> accepted', () => {
    assert.equal(validateManifest([entry()], LIMITS).length, 1);
  });
  test('validateManifest: 1001 files -> 400 INVALID_REQUEST naming the limit and the count', () => {
    assertRefused(manyFiles(1001), 'INVALID_REQUEST', 400, ['files must hold 1 to 1000 entries; got 1001']);
  });
  test('validateManifest: 0 files -> 400 INVALID_REQUEST', () => {
    assertRefused([], 'INVALID_REQUEST', 400, ['files must hold 1 to 1000 entries; got 0']);
  });
  const notArrays: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['null', null],
    ['an object', { 'index.html': entry() }],
    ['a string', 'index.html'],
  ];
  for (const [name, files] of notArrays) {
    test(`validateManifest: files is ${name}, not an array -> 400 INVALID_REQUEST`, () => {
      assertRefused(files, 'INVALID_REQUEST', 400, ['files must be an array of 1 to 1000']);
    });
  }
  const notObjects: Array<[string, unknown]> = [
    ['null', null],
    ['a string', 'index.html'],
    ['an array', ['index.html', 10, 'text/html']],
    ['a number', 3],
  ];
  for (const [name, item] of notObjects) {
    test(`validateManifest: entry is ${name}, not an object -> 400 INVALID_REQUEST naming the index`, () => {
      assertRefused([entry({ path: 'a' }), item], 'INVALID_REQUEST', 400, ['files[1]', 'must be an object']);
    });
  }
});

describe('validateManifest: path', () => {
  // Each bad path sits at index 1 so the message must name both the index and the path.
  const badPaths: Array<[rule: string, path: string, problem: string]> = [
    ['empty path', '', 'must not be empty'],
    ['leading slash', '/index.html', 'leading "/"'],
    ['bare .. segment', '..', '".." segment'],
    ['leading .. segment', '../secret', '".." segment'],
    ['.. segment in the middle (a/../b)', 'a/../b', '".." segment'],
    ['trailing .. segment', 'a/..', '".." segment'],
    ['leading . segment (./a)', './a', '"." segment'],
    ['. segment in the middle (a/./b)', 'a/./b', '"." segment'],
    ['null byte', 'a\u0000b.html', 'null byte'],
    ['backslash', 'a\\b.html', 'backslash'],
    ['empty segment (a//b)', 'a//b', 'empty segment'],
    ['trailing slash (a/)', 'a/', 'empty segment'],
    ['control character U+0001', 'a\u0001b', 'control characters'],
    ['control character U+001F', 'a\u001fb', 'control characters'],
    ['newline', 'a\nb', 'control characters'],
    ['DEL U+007F', 'a\u007fb', 'control characters'],
    ['C1 control U+0085', 'a\u0085b', 'control characters'],
    ['lone surrogate', 'a\ud800b', 'lone surrogate'],
  ];
  for (const [rule, path, problem] of badPaths) {
    test(`validateManifest: path with ${rule} -> 400 INVALID_PATH`, () => {
      assertRefused([entry({ path: 'ok.html' }), entry({ path })], 'INVALID_PATH', 400, [
        `files[1] (${JSON.stringify(path)})`,
        problem,
      ]);
    });
  }

  test('validateManifest: path of 501 characters -> 400 INVALID_PATH naming the path and the limit', () => {
    const path = 'p'.repeat(501);
    assertRefused([entry({ path })], 'INVALID_PATH', 400, [
      `files[0] ("${'p'.repeat(80)}"…)`,
      '501 characters',
      'limit is 500',
    ]);
  });
  test('validateManifest: path missing -> 400 INVALID_PATH naming the index', () => {
    assertRefused([{ size: 1, contentType: 'text/plain' }], 'INVALID_PATH', 400, [
      'files[0]: path is required',
    ]);
  });
  test('validateManifest: path not a string -> 400 INVALID_PATH naming the index', () => {
    assertRefused([entry({ path: 42 })], 'INVALID_PATH', 400, ['files[0]: path must be a string; got 42']);
  });
  test('validateManifest: duplicate path -> 400 INVALID_PATH naming the path and both indexes', () => {
    const files = [entry({ path: 'a.html' }), entry({ path: 'index.html' }), entry({ path: 'index.html' })];
    assertRefused(files, 'INVALID_PATH', 400, ['files[2] ("index.html")', 'duplicates files[1]']);
  });

  const goodPaths: Array<[rule: string, path: string]> = [
    ['exactly 500 characters', 'p'.repeat(500)],
    ['500 characters outside the BMP (1000 UTF-16 units)', '😀'.repeat(500)],
    ['nested directories', 'assets/img/logo.png'],
    ['dotfile', '.well-known/security.txt'],
    ['dots inside a name', 'a..b/...'],
    ['spaces and unicode', 'my docs/résumé.pdf'],
  ];
  for (const [rule, path] of goodPaths) {
    test(`validateManifest: path ${rule} -> accepted`, () => {
      assert.equal(validateManifest([entry({ path })], LIMITS)[0]?.path, path);
    });
  }
  test('validateManifest: paths differing only in case -> accepted (paths are case-sensitive)', () => {
    const out = validateManifest([entry({ path: 'Index.html' }), entry({ path: 'index.html' })], LIMITS);
    assert.deepEqual(
      out.map((f) => f.path),
      ['Index.html', 'index.html'],
    );
  });
});

describe('validateManifest: size', () => {
  const badSizes: Array<[string, unknown, string]> = [
    ['0', 0, 'got 0'],
    ['-1', -1, 'got -1'],
    ['1.5', 1.5, 'got 1.5'],
    ['the string "10"', '10', 'got "10"'],
    ['NaN', Number.NaN, 'got NaN'],
    ['beyond Number.MAX_SAFE_INTEGER', 2 ** 53, 'got 9007199254740992'],
    ['null', null, 'got null'],
  ];
  for (const [name, size, got] of badSizes) {
    test(`validateManifest: size ${name} -> 400 INVALID_REQUEST naming the path`, () => {
      assertRefused([entry({ path: 'a.bin', size })], 'INVALID_REQUEST', 400, [
        'files[0] ("a.bin")',
        'size must be a positive whole number of bytes',
        got,
      ]);
    });
  }
  test('validateManifest: size missing -> 400 INVALID_REQUEST naming the path', () => {
    assertRefused([{ path: 'a.bin', contentType: 'text/plain' }], 'INVALID_REQUEST', 400, [
      'files[0] ("a.bin"): size is required',
    ]);
  });
  test('validateManifest: size over the per-file limit -> 413 FILE_TOO_LARGE naming the path, size and limit', () => {
    assertRefused([entry({ path: 'video.mp4', size: 314572800 })], 'FILE_TOO_LARGE', 413, [
      'files[0] ("video.mp4")',
      '300 MB (314572800 bytes)',
      '200 MB (209715200 bytes)',
    ]);
  });
  test('validateManifest: size exactly the per-file limit -> accepted', () => {
    assert.equal(validateManifest([entry({ size: 209715200 })], LIMITS)[0]?.size, 209715200);
  });
});

describe('validateManifest: contentType', () => {
  const badTypes: Array<[string, unknown]> = [
    ['text (no subtype)', 'text'],
    ['text/ (empty subtype)', 'text/'],
    ['/html (empty type)', '/html'],
    ['text/ht ml (space in subtype)', 'text/ht ml'],
    ['of 300 characters', `application/${'x'.repeat(288)}`],
    ['empty', ''],
    ['with two slashes', 'text/html/x'],
    ['with a parameter lacking a value', 'text/html; charset'],
    ['with a parameter lacking a name', 'text/html; =utf-8'],
    ['with a space inside a parameter value', 'text/html; charset=utf 8'],
    ['with a non-ASCII character', 'text/htmł'],
    ['with a CR LF inside', 'text/html\r\nX-Evil: 1'],
    ['a number', 42],
  ];
  for (const [name, contentType] of badTypes) {
    test(`validateManifest: contentType ${name} -> 400 INVALID_REQUEST naming the path`, () => {
      assertRefused([entry({ path: 'page.html', contentType })], 'INVALID_REQUEST', 400, [
        'files[0] ("page.html")',
        'contentType',
      ]);
    });
  }
  // Blank runs between ";" once had 3^n parses; 17 repeats took seconds before the fix, ~0 ms after.
  const adversarial: Array<[string, string]> = [
    ['blank runs between semicolons', `a/b${' \t;'.repeat(17)}x`],
    ['blank runs before a stray "="', `a/b${'  ;'.repeat(17)}=`],
    ['escaped quotes without a closing quote', `a/b;x="${'\\"'.repeat(80)}`],
  ];
  for (const [name, contentType] of adversarial) {
    test(`validateManifest: contentType with ${name} -> 400 INVALID_REQUEST in linear time`, () => {
      const started = performance.now();
      assertRefused([entry({ path: 'page.html', contentType })], 'INVALID_REQUEST', 400, [
        'files[0] ("page.html")',
      ]);
      assert.ok(performance.now() - started < 100, `took ${performance.now() - started} ms`);
    });
  }
  test('validateManifest: contentType missing -> 400 INVALID_REQUEST naming the path', () => {
    assertRefused([{ path: 'page.html', size: 1 }], 'INVALID_REQUEST', 400, [
      'files[0] ("page.html"): contentType is required',
    ]);
  });

  const goodTypes: Array<[sent: string, normalized: string]> = [
    ['text/html', 'text/html'],
    ['text/html; charset=utf-8', 'text/html; charset=utf-8'],
    ['application/vnd.api+json', 'application/vnd.api+json'],
    ['Text/HTML; Charset=UTF-8', 'text/html; Charset=UTF-8'],
    ['  image/svg+xml  ', 'image/svg+xml'],
    ['multipart/form-data; boundary="a b;c"', 'multipart/form-data; boundary="a b;c"'],
    ['text/plain;charset=us-ascii;format=flowed', 'text/plain;charset=us-ascii;format=flowed'],
    ['text/html ;charset=utf-8', 'text/html ;charset=utf-8'],
    ['text/html;', 'text/html;'], // RFC 9110 §5.6.6 allows an empty parameter
    [`application/${'x'.repeat(243)}`, `application/${'x'.repeat(243)}`], // 255 characters
  ];
  for (const [sent, normalized] of goodTypes) {
    test(`validateManifest: contentType ${JSON.stringify(sent.slice(0, 40))} -> accepted as ${JSON.stringify(normalized.slice(0, 40))}`, () => {
      assert.equal(validateManifest([entry({ contentType: sent })], LIMITS)[0]?.contentType, normalized);
    });
  }
});

describe('validateManifest: hash', () => {
  const badHashes: Array<[string, unknown]> = [
    ['uppercase hex', 'A'.repeat(64)],
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['non-hex characters', 'g'.repeat(64)],
    ['empty string', ''],
    ['a number', 123],
  ];
  for (const [name, hash] of badHashes) {
    test(`validateManifest: hash ${name} -> 400 INVALID_HASH naming the path`, () => {
      assertRefused([entry({ path: 'app.js', hash })], 'INVALID_HASH', 400, [
        'files[0] ("app.js")',
        '64 lowercase hex',
      ]);
    });
  }
  test('validateManifest: hash of 64 lowercase hex -> kept', () => {
    assert.equal(validateManifest([entry({ hash: SHA })], LIMITS)[0]?.hash, SHA);
  });
  test('validateManifest: hash absent or null -> entry has no hash field', () => {
    const out = validateManifest([entry({ path: 'a' }), entry({ path: 'b', hash: null })], LIMITS);
    assert.ok(out.every((f) => !('hash' in f)));
  });
});

describe('validateManifest: normalized result', () => {
  test('validateManifest: extra fields are dropped and order is kept', () => {
    const out = validateManifest(
      [entry({ path: 'b', extra: 1 }), entry({ path: 'a', hash: SHA, contentType: 'TEXT/CSS' })],
      LIMITS,
    );
    assert.deepEqual(out, [
      { path: 'b', size: 10, contentType: 'text/html' },
      { path: 'a', size: 10, contentType: 'text/css', hash: SHA },
    ]);
  });
  test('validateManifest: the first bad entry is the one reported', () => {
    assertRefused([entry({ path: 'a', size: 0 }), entry({ path: '/b' })], 'INVALID_REQUEST', 400, [
      'files[0] ("a")',
    ]);
  });
  test('totalSize: sums the sizes', () => {
    assert.equal(totalSize([]), 0);
    assert.equal(
      totalSize(validateManifest([entry({ path: 'a', size: 5 }), entry({ path: 'b', size: 7 })], LIMITS)),
      12,
    );
  });
});
