// Encryption of site variables (core/variables.ts): AES-256-GCM, a fresh nonce per value, the site and
// the name bound as associated data.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { decryptVariable, encryptVariable, keyIdOf, variableNameProblem } from '../../src/core/variables.js';

const key = randomBytes(32);

describe('site variable encryption', () => {
  test('a value round-trips, and the stored form holds neither the value nor its base64', () => {
    const value = 'sk_live_round_trip_ä_value';
    const sealed = encryptVariable(key, 'site-a', 'STRIPE_SECRET_KEY', value);
    assert.equal(decryptVariable(key, 'site-a', 'STRIPE_SECRET_KEY', sealed), value);
    assert.ok(!sealed.includes(value));
    assert.ok(!sealed.includes(Buffer.from(value).toString('base64').slice(0, 12)));
  });

  test('the same value encrypts differently each time (random nonce)', () => {
    const a = encryptVariable(key, 'site-a', 'N', 'same');
    const b = encryptVariable(key, 'site-a', 'N', 'same');
    assert.notEqual(a, b);
  });

  test('a ciphertext moved to another site or name, or under another key, does not decrypt', () => {
    const sealed = encryptVariable(key, 'site-a', 'TOKEN', 'value');
    assert.throws(() => decryptVariable(key, 'site-b', 'TOKEN', sealed));
    assert.throws(() => decryptVariable(key, 'site-a', 'OTHER', sealed));
    assert.throws(() => decryptVariable(randomBytes(32), 'site-a', 'TOKEN', sealed));
    const tampered = Buffer.from(sealed, 'base64');
    tampered[14] = (tampered[14] ?? 0) ^ 1;
    assert.throws(() => decryptVariable(key, 'site-a', 'TOKEN', tampered.toString('base64')));
  });

  test('the key id is a stable fingerprint that differs between keys and does not reveal the key', () => {
    assert.equal(keyIdOf(key), keyIdOf(Buffer.from(key)));
    assert.notEqual(keyIdOf(key), keyIdOf(randomBytes(32)));
    assert.ok(!key.toString('hex').includes(keyIdOf(key)));
  });

  test('names: a letter first, then letters, digits, underscores; at most 64 characters', () => {
    for (const ok of ['A', 'STRIPE_SECRET_KEY', 'a1_b2', 'X'.repeat(64)])
      assert.equal(variableNameProblem(ok), null, ok);
    for (const bad of ['', '1A', '_A', 'A-B', 'A B', 'Ä', 'X'.repeat(65), 'A.B']) {
      assert.notEqual(variableNameProblem(bad), null, bad);
    }
  });
});
