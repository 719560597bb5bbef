// formatBytes: binary units as the spec writes them (`200 MB` = 209715200 bytes).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatBytes } from '../../src/core/format.js';

describe('formatBytes', () => {
  const cases: Array<[number, string]> = [
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1 KB'],
    [1536, '1.5 KB'],
    [1075, '1 KB'], // 1.0498 KB rounds to 1.0, trailing .0 dropped
    [1127, '1.1 KB'],
    [10 * 1024 + 1000, '11 KB'], // 10.98 rounds up to 11
    [1048575, '1 MB'], // 1023.999 KB rounds to 1024 KB, written as 1 MB
    [1048576, '1 MB'],
    [209715200, '200 MB'],
    [524288000, '500 MB'],
    [1073741824, '1 GB'],
    [10737418240, '10 GB'],
    [1099511627776 * 2.5, '2.5 TB'],
    [1125899906842624, '1 PB'],
    [1125899906842624 * 4096, '4096 PB'],
  ];
  for (const [bytes, expected] of cases) {
    test(`formatBytes: ${bytes} -> "${expected}"`, () => {
      assert.equal(formatBytes(bytes), expected);
    });
  }

  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
    test(`formatBytes: ${bad} -> RangeError`, () => {
      assert.throws(() => formatBytes(bad), RangeError);
    });
  }
});
