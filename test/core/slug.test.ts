// Slugs: random `<adjective>-<noun>-<suffix>` DNS labels, and the route-parameter check.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  generateSlug,
  isValidSlug,
  SLUG_ADJECTIVES,
  SLUG_NOUNS,
  SLUG_SUFFIX_ALPHABET,
  SLUG_SUFFIX_LENGTH,
} from '../../src/core/slug.js';

/** RFC 1035 LDH label, lowercase, at most 63 characters. */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

describe('generateSlug', () => {
  const slugs = Array.from({ length: 1000 }, () => generateSlug());

  test('generateSlug: 1000 slugs are all different', () => {
    assert.equal(new Set(slugs).size, 1000);
  });
  test('generateSlug: every slug is a DNS label of at most 63 characters and passes isValidSlug', () => {
    for (const slug of slugs) {
      assert.match(slug, DNS_LABEL);
      assert.ok(slug.length <= 63, slug);
      assert.ok(isValidSlug(slug), slug);
    }
  });
  test('generateSlug: shape is <adjective>-<noun>-<6 chars of the suffix alphabet>', () => {
    for (const slug of slugs) {
      const [adjective = '', noun = '', suffix = '', ...rest] = slug.split('-');
      assert.deepEqual(rest, [], slug);
      assert.ok(SLUG_ADJECTIVES.includes(adjective), slug);
      assert.ok(SLUG_NOUNS.includes(noun), slug);
      assert.equal(suffix.length, SLUG_SUFFIX_LENGTH, slug);
      for (const c of suffix) assert.ok(SLUG_SUFFIX_ALPHABET.includes(c), slug);
    }
  });
  test('generateSlug: word lists hold >= 64 distinct lowercase words each, suffix alphabet 31 symbols', () => {
    for (const words of [SLUG_ADJECTIVES, SLUG_NOUNS]) {
      assert.ok(words.length >= 64);
      assert.equal(new Set(words).size, words.length);
      for (const w of words) assert.match(w, /^[a-z]{2,8}$/);
    }
    assert.equal(SLUG_SUFFIX_ALPHABET, 'abcdefghjkmnpqrstuvwxyz23456789');
    assert.equal(new Set(SLUG_SUFFIX_ALPHABET).size, 31);
  });
  test('generateSlug: at least 42 bits of entropy', () => {
    const bits =
      Math.log2(SLUG_ADJECTIVES.length) +
      Math.log2(SLUG_NOUNS.length) +
      SLUG_SUFFIX_LENGTH * Math.log2(SLUG_SUFFIX_ALPHABET.length);
    assert.ok(bits >= 42, `${bits} bits`);
  });
  test('generateSlug: draws spread over the word lists', () => {
    // 1000 draws from 128 words miss a given word with probability (127/128)^1000 ~ 0.04%;
    // fewer than 100 distinct words would mean the draw is not uniform.
    assert.ok(new Set(slugs.map((s) => s.split('-')[0])).size >= 100);
    assert.ok(new Set(slugs.map((s) => s.split('-')[1])).size >= 100);
  });
});

describe('isValidSlug', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['a generated slug', 'bright-canvas-a7k2qm', true],
    ['3 characters', 'abc', true],
    ['63 characters', 'a'.repeat(63), true],
    ['digits only', '123', true],
    ['inner double hyphen', 'a--b', true],
    ['2 characters', 'ab', false],
    ['64 characters', 'a'.repeat(64), false],
    ['empty', '', false],
    ['leading hyphen', '-abc', false],
    ['trailing hyphen', 'abc-', false],
    ['uppercase', 'Bright-canvas', false],
    ['underscore', 'a_b_c', false],
    ['dot', 'a.b.c', false],
    ['space', 'a b c', false],
    ['non-ASCII', 'café', false],
    ['path traversal', '..%2f', false],
    ['not a string', 123, false],
    ['undefined', undefined, false],
  ];
  for (const [name, value, expected] of cases) {
    test(`isValidSlug: ${name} -> ${expected}`, () => {
      assert.equal(isValidSlug(value), expected);
    });
  }
});
