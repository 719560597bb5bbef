// Password-gate building blocks: session signatures bound to site and password, return URLs (its cookies:
// test/shared/cookies.test.ts).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { returnLocation, signSession, verifySession } from '../../src/serve/password-gate.js';
import { passwordFingerprint } from '../../src/serve/site-record.js';

describe('session signatures', () => {
  const key = randomBytes(32);
  const fp = passwordFingerprint('scrypt$c2FsdA==$aGFzaA==');

  test('a signed session verifies for the same site and password and returns its expiry', () => {
    const value = signSession(key, 'site-a', fp, 1_900_000_000_000);
    assert.equal(verifySession(key, 'site-a', fp, value), 1_900_000_000_000);
  });

  test('another site, another password, another key or a changed expiry fail', () => {
    const value = signSession(key, 'site-a', fp, 1_900_000_000_000);
    assert.equal(verifySession(key, 'site-b', fp, value), null);
    assert.equal(verifySession(key, 'site-a', passwordFingerprint('scrypt$other$x'), value), null);
    assert.equal(verifySession(randomBytes(32), 'site-a', fp, value), null);
    const [, mac] = value.split('.');
    assert.equal(verifySession(key, 'site-a', fp, `${(1_999_999_999_999).toString(36)}.${mac}`), null);
    for (const junk of ['', '.', 'abc', 'zz.', '.abc', '0x1.abc', '1'.repeat(20)]) {
      assert.equal(verifySession(key, 'site-a', fp, junk), null, junk);
    }
  });

  test('no password and a password have different fingerprints', () => {
    assert.notEqual(passwordFingerprint(null), passwordFingerprint('scrypt$a$b'));
  });
});

describe('returnLocation', () => {
  const cases: Array<[string | undefined, string]> = [
    ['/docs/a?x=1', '/docs/a?x=1'],
    ['/', '/'],
    [undefined, '/'],
    ['//evil.example/', '/'],
    ['/\\evil.example/', '/'],
    ['http://evil.example/', '/'],
    ['/caf\u00e9', '/'],
  ];
  for (const [url, expected] of cases) {
    test(`${JSON.stringify(url)} -> ${expected}`, () => assert.equal(returnLocation(url), expected));
  }
});
