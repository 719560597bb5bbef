// Upload addresses: the token signs version, path, content type, expiry and, when the manifest gave the
// hash, the size and hash; changing any of them (or dropping the pair) makes the address worthless.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  checkUploadAddress,
  UPLOAD_PATH_PREFIX,
  type UploadTarget,
  uploadUrl,
} from '../../src/core/upload-token.js';

const KEY = randomBytes(32);
const NOW_MS = 1_800_000_000_000;
const HASH = 'a'.repeat(64);
const BASE: UploadTarget = {
  versionId: 'ver_1',
  path: 'dir/index.html',
  contentType: 'text/html',
  expiresAtS: NOW_MS / 1000 + 3600,
};

/** The parts of an address as the upload route hands them to checkUploadAddress. */
function partsOf(url: string): { key: string; query: Record<string, string> } {
  const u = new URL(url);
  return {
    key: u.pathname.slice(UPLOAD_PATH_PREFIX.length),
    query: Object.fromEntries(u.searchParams),
  };
}

const check = (url: string, change: (q: Record<string, string>) => void = () => {}) => {
  const { key, query } = partsOf(url);
  change(query);
  return checkUploadAddress(KEY, key, query, NOW_MS);
};

describe('upload addresses', () => {
  test('an address without the manifest hash names its file and nothing more', () => {
    assert.deepEqual(check(uploadUrl('http://x', KEY, BASE)), { ok: true, target: BASE });
  });

  test('an address with the manifest size and hash carries both, signed', () => {
    const target = { ...BASE, expected: { size: 1024, hash: HASH } };
    const url = uploadUrl('http://x', KEY, target);
    assert.match(url, /[?&]size=1024&hash=a{64}$/);
    assert.deepEqual(check(url), { ok: true, target });
  });

  const tampered: Array<[string, (q: Record<string, string>) => void, string]> = [
    ['a changed size', (q) => (q.size = '1025'), 'bad-token'],
    ['a changed hash', (q) => (q.hash = 'b'.repeat(64)), 'bad-token'],
    [
      'both dropped',
      (q) => {
        delete q.size;
        delete q.hash;
      },
      'bad-token',
    ],
    ['the hash dropped', (q) => delete q.hash, 'malformed'],
    ['a hash in capitals', (q) => (q.hash = HASH.toUpperCase()), 'malformed'],
    ['a size that is not a number', (q) => (q.size = '1e3'), 'malformed'],
  ];
  for (const [what, change, reason] of tampered) {
    test(`an address with ${what} is refused (${reason})`, () => {
      const url = uploadUrl('http://x', KEY, { ...BASE, expected: { size: 1024, hash: HASH } });
      assert.deepEqual(check(url, change), { ok: false, reason });
    });
  }

  test('size and hash added to an address issued without them are refused (bad-token)', () => {
    const url = uploadUrl('http://x', KEY, BASE);
    assert.deepEqual(
      check(url, (q) => Object.assign(q, { size: '1', hash: HASH })),
      { ok: false, reason: 'bad-token' },
    );
  });
});
