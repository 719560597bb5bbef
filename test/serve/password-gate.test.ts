// Password-gate building blocks: cookie parsing, session signatures bound to site and password, return URLs.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  cookieValue,
  cookieValues,
  returnLocation,
  sessionCookie,
  signSession,
  verifySession,
} from '../../src/serve/password-gate.js';
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

describe('cookieValue', () => {
  const cases: Array<[string | undefined, string | undefined]> = [
    [undefined, undefined],
    ['slipway_pw_a=v1', 'v1'],
    ['x=1; slipway_pw_a=v2; y=2', 'v2'],
    ['xslipway_pw_a=no; slipway_pw_a=yes', 'yes'],
    ['slipway_pw_ab=other', undefined],
    ['slipway_pw_a', undefined],
  ];
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} -> ${JSON.stringify(expected)}`, () =>
      assert.equal(cookieValue(header, 'slipway_pw_a'), expected));
  }
});

describe('cookieValues', () => {
  const cases: Array<[string | undefined, string[]]> = [
    [undefined, []],
    ['slipway_pw_a=v1', ['v1']],
    // A parent-domain cookie of the same name comes first when older (RFC 6265 §5.4): both are seen.
    ['slipway_pw_a=tossed; x=1; slipway_pw_a=mine', ['tossed', 'mine']],
    ['slipway_pw_a=v; slipway_pw_ab=other; xslipway_pw_a=no', ['v']],
    ['slipway_pw_a=; slipway_pw_a=last', ['', 'last']],
  ];
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} -> ${JSON.stringify(expected)}`, () =>
      assert.deepEqual([...cookieValues(header, 'slipway_pw_a')], expected));
  }
});

describe('sessionCookie', () => {
  test('host-only, HttpOnly, SameSite=Lax, Path=/, Secure only on https', () => {
    assert.equal(
      sessionCookie('n', 'v', 3_600_000, false),
      'n=v; Max-Age=3600; Path=/; HttpOnly; SameSite=Lax',
    );
    assert.match(sessionCookie('n', 'v', 1000, true), /; Secure$/);
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
