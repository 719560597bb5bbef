// Cookies as every host reads and writes them (src/shared/cookies.ts): the Cookie header's values, also
// when a name repeats, and the one Set-Cookie value of the dashboard's and the password gate's sessions.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cookieValue, cookieValues, sessionCookie } from '../../src/shared/cookies.js';

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
      'n=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600',
    );
    assert.match(sessionCookie('n', 'v', 1000, true), /; Secure$/);
    assert.match(sessionCookie('n', '', 0, true), /; Max-Age=0; /);
  });
});
