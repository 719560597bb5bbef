// The scanner's prefix search (src/core/scan/scanner.ts ruleMatches): a rule with `prefixes` runs its pattern
// only where one of them occurs, which is faster only if it finds exactly what the pattern's own global
// search finds. Both ways run here over the real-bundle set (many prefixes that lead nowhere: `://`, `eyJ`,
// `SK`, `gl`) and over texts made to hold matches next to, inside and after false starts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resolveRealBundles } from '../../bench/lib/real-bundles.js';
import { REPO_ROOT } from '../../bench/lib/service.js';
import { DETECTION_RULES } from '../../src/core/scan/rules.js';
import { prefixOffsets, ruleMatches, scanText } from '../../src/core/scan/scanner.js';

const PREFIXED = DETECTION_RULES.filter((rule) => rule.prefixes);
const ALL_MATCHES = (text: string) => {
  const offsets = prefixOffsets(text);
  return (rule: (typeof PREFIXED)[number]): Array<[number, string]> =>
    [...ruleMatches(DETECTION_RULES.indexOf(rule), text, offsets)].map((m) => [m.index, m[0]]);
};

/** [index, match] of every match, by the pattern's own global search. */
function globalMatches(pattern: RegExp, text: string): Array<[number, string]> {
  const re = new RegExp(pattern.source, pattern.flags);
  return [...text.matchAll(re)].map((m) => [m.index ?? -1, m[0]]);
}

const HEX32 = '3f9a2c7e5b1d4086af2e9c3b7d51e0a4';
const B62_40 = 'Zq8Lm2Rt7Vx4Nc9Pk3Hs6Jd1Fg5Wb0Ye2Ua8Ti4O';
/** Matches beside false starts: a prefix inside a match, repeated, at the very start and end of the text. */
const MADE = [
  `sk_sk_live_${B62_40}`,
  `"sk_live_${B62_40}" sk_ rk_test_${B62_40}`,
  `SKSK${HEX32} SK${HEX32}SK${HEX32} key-${HEX32}`,
  `postgres://a://user:${B62_40}@db.example.net/x ://u:p@h mysql://root:${B62_40}@h`,
  `ghp_ghp_${B62_40.slice(0, 36)} github_pat_${B62_40.slice(0, 22)}_${B62_40}${B62_40.slice(0, 19)}`,
  `AKIAAKIA${'ABCDEFGHJKLMNPQR'} ASIA${'Q2R3S4T5U6V7W2X3'}`,
  `Bearer Bearer ${B62_40}" bearer ${B62_40}'`,
  `-----BEGIN -----BEGIN PRIVATE KEY-----\n${B62_40}${B62_40}\n-----END PRIVATE KEY-----`,
  `eyJeyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.${B62_40}`,
  `https://hooks.slack.com/services/T000/B000/${B62_40} xoxb-12-34-${B62_40}`,
  `12345678:AA${B62_40.slice(0, 33)} bot123456789:AA:AA${B62_40.slice(0, 33)}`,
  `glpat-${B62_40} glgl glrt-${B62_40}`,
  `shpat_${HEX32} shp shpss_${HEX32}`,
];

describe('prefix search finds what the pattern finds', () => {
  test('every prefix of a rule is a literal its matches can start with', () => {
    assert.ok(PREFIXED.length >= 20, `${PREFIXED.length} rules have prefixes`);
    for (const rule of PREFIXED) {
      for (const prefix of rule.prefixes ?? []) assert.ok(prefix.length > 0, `${rule.type}: empty prefix`);
      for (const text of MADE) {
        for (const [, match] of globalMatches(rule.pattern, text)) {
          assert.ok(
            rule.prefixes?.some((p) => match.startsWith(p)),
            `${rule.type}: ${match} starts with none of ${rule.prefixes}`,
          );
        }
      }
    }
  });

  test('made texts: the same matches at the same offsets, both ways', () => {
    let matched = 0;
    for (const text of MADE) {
      const viaPrefixes = ALL_MATCHES(text);
      for (const rule of PREFIXED) {
        const expected = globalMatches(rule.pattern, text);
        matched += expected.length;
        assert.deepEqual(viaPrefixes(rule), expected, `${rule.type} on ${text.slice(0, 40)}`);
      }
    }
    assert.ok(matched >= MADE.length, `the made texts hold ${matched} matches`);
  });

  test('made texts: what the scanner reports is found by the prefixed rules', async () => {
    const findings = await Promise.all(MADE.map((text) => scanText(text)));
    const types = new Set(findings.flat().map((f) => f.type));
    for (const type of ['stripe_secret_key', 'database_connection_string', 'github_token', 'private_key']) {
      assert.ok(types.has(type), `${type} among ${[...types].join(', ')}`);
    }
  });

  test('real-bundle set: the same matches at the same offsets, both ways', () => {
    let matched = 0;
    for (const bundle of resolveRealBundles()) {
      assert.deepEqual(bundle.missing, [], `${bundle.name}: not in node_modules (run npm ci)`);
      for (const file of bundle.files) {
        const text = readFileSync(join(REPO_ROOT, 'node_modules', file), 'utf8');
        const viaPrefixes = ALL_MATCHES(text);
        for (const rule of PREFIXED) {
          const expected = globalMatches(rule.pattern, text);
          matched += expected.length;
          assert.deepEqual(viaPrefixes(rule), expected, `${rule.type} on ${file}`);
        }
      }
    }
    // Pattern matches the checks then reject (`://user:pass@` in docs, JWT-shaped strings): not a vacuous run.
    assert.ok(matched > 0, 'the real bundles hold pattern matches');
  });
});
