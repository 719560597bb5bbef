import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CACHE_IMMUTABLE,
  CACHE_REVALIDATE,
  cacheControlFor,
} from '../../../src/shared/rules/cache-control.js';

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'public, max-age=0, must-revalidate';

test('cacheControlFor: the exported policy values are the documented strings', () => {
  assert.equal(CACHE_IMMUTABLE, IMMUTABLE);
  assert.equal(CACHE_REVALIDATE, REVALIDATE);
});

const cases: Array<[name: string, path: string, contentType: string, expected: string]> = [
  // HTML always revalidates.
  ['HTML revalidates', 'index.html', 'text/html', REVALIDATE],
  ['HTML with charset revalidates', 'about/index.html', 'text/html; charset=utf-8', REVALIDATE],
  ['HTML revalidates even with a hash-like name', 'page.3f9a1c2b.html', 'text/html', REVALIDATE],
  ['HTML type check is case-insensitive', 'page.3f9a1c2b.html', 'Text/HTML', REVALIDATE],
  // Fingerprinted assets are immutable.
  ['app.3f9a1c2b.js (hex between dots) is immutable', 'app.3f9a1c2b.js', 'text/javascript', IMMUTABLE],
  ['main-BfX9aK2q.css (base64url after a dash) is immutable', 'main-BfX9aK2q.css', 'text/css', IMMUTABLE],
  ['assets/index-4f3a9c2d.js is immutable', 'assets/index-4f3a9c2d.js', 'text/javascript', IMMUTABLE],
  [
    'webpack [name].[contenthash:20] is immutable',
    'static/js/main.8e3c9a1f2b4d5e6f7a80.js',
    'text/javascript',
    IMMUTABLE,
  ],
  ['a source map of a hashed file is immutable', 'app.3f9a1c2b.js.map', 'application/json', IMMUTABLE],
  ['hash before several extensions is immutable', 'app.3f9a1c2b.min.js', 'text/javascript', IMMUTABLE],
  ['esbuild chunk-HASH is immutable', 'chunk-5XGQ3JZT.js', 'text/javascript', IMMUTABLE],
  ['hashed font is immutable', 'fonts/inter-a1b2c3d4.woff2', 'font/woff2', IMMUTABLE],
  ['hashed image is immutable', 'img/hero.9f8e7d6c.png', 'image/png', IMMUTABLE],
  [
    'multi-dash name with a hash is immutable',
    'assets/my-long-name-3f9a1c2b.js',
    'text/javascript',
    IMMUTABLE,
  ],
  // Ordinary names revalidate.
  ['app.js revalidates', 'app.js', 'text/javascript', REVALIDATE],
  ['logo.png revalidates', 'logo.png', 'image/png', REVALIDATE],
  ['jquery.min.js revalidates', 'js/jquery.min.js', 'text/javascript', REVALIDATE],
  ['bootstrap.bundle.min.js revalidates', 'bootstrap.bundle.min.js', 'text/javascript', REVALIDATE],
  ['favicon-32x32.png revalidates', 'favicon-32x32.png', 'image/png', REVALIDATE],
  ['my-document.pdf (8 letters, no digit) revalidates', 'my-document.pdf', 'application/pdf', REVALIDATE],
  [
    'annual-report2024.pdf (word then year) revalidates',
    'annual-report2024.pdf',
    'application/pdf',
    REVALIDATE,
  ],
  ['img-1920x1080.jpg (dimensions) revalidates', 'img-1920x1080.jpg', 'image/jpeg', REVALIDATE],
  ['release-v20240115.zip (date) revalidates', 'release-v20240115.zip', 'application/zip', REVALIDATE],
  ['photo-20240115.jpg (digits only) revalidates', 'photo-20240115.jpg', 'image/jpeg', REVALIDATE],
  ['a hash-like name without a prefix revalidates', '3f9a1c2b4d.js', 'text/javascript', REVALIDATE],
  ['a hash-like folder does not count', 'v3f9a1c2b/app.js', 'text/javascript', REVALIDATE],
  ['a hash-like extension does not count', 'file.3f9a1c2b', 'application/octet-stream', REVALIDATE],
  ['a 7-char hash is too short', 'app.3f9a1c2.js', 'text/javascript', REVALIDATE],
  ['underscores break a hash (conservative)', 'app.3f9a_1c2b.js', 'text/javascript', REVALIDATE],
  ['robots.txt revalidates', 'robots.txt', 'text/plain', REVALIDATE],
];

for (const [name, path, contentType, expected] of cases) {
  test(`cacheControlFor: ${name}`, () => {
    assert.equal(cacheControlFor(path, contentType), expected);
  });
}
