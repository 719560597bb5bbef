// Password-gate building blocks: session signatures bound to site and password, return URLs (its cookies:
// test/shared/cookies.test.ts).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { SiteState } from '../../src/serve/catalog.js';
import type { SiteRequestHead } from '../../src/serve/exchange.js';
import {
  PasswordGate,
  type PasswordGateDeps,
  passwordCookieName,
  returnLocation,
  signSession,
  verifySession,
} from '../../src/serve/password-gate.js';
import { passwordFingerprint } from '../../src/serve/site-record.js';
import { MovableClock } from '../../src/shared/clock.js';

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

describe('remembered sessions', () => {
  test('a verified session is remembered without the request head it came in', () => {
    // On the fast path a Cookie value is a slice of the head's text: remembered as it is, each of a site's
    // 64 remembered sessions would keep its whole head (up to 16 KB) alive with the cached site.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const key = randomBytes(32);
    const fp = passwordFingerprint('scrypt$c2FsdA==$aGFzaA==');
    const clock = new MovableClock();
    const gate = new PasswordGate({ clock, siteCookieKey: key } as unknown as PasswordGateDeps, {} as never);
    const state = {
      record: { slug: 'site-a', passwordFingerprint: fp },
      sessions: new Map<string, number>(),
    } as unknown as SiteState;
    const pad = 'X-Pad: '.padEnd(14_000, 'p');
    const heads = Array.from({ length: 60 }, (_, i) => {
      const value = signSession(key, 'site-a', fp, clock.now() + 3_600_000 + i);
      const head = `${pad}\r\nCookie: ${passwordCookieName('site-a')}=${value}\r\n`;
      return {
        headers: { cookie: head.slice(head.indexOf('Cookie: ') + 8, -2) },
      } as unknown as SiteRequestHead;
    });
    // One first (its code compiled, its objects made), then the measured 59.
    assert.equal(gate.hasSession(heads.shift()!, state), true);
    gc();
    const withHeads = process.memoryUsage().heapUsed;
    for (const req of heads) assert.equal(gate.hasSession(req, state), true);
    heads.length = 0;
    gc();
    const freed = withHeads - process.memoryUsage().heapUsed;
    assert.equal(state.sessions.size, 60);
    assert.ok(freed > 59 * 10_000, `only ${freed} bytes freed of 59 heads of 14 KB`);
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
