import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRange, type RangeResult } from '../../../src/shared/rules/range.js';

const none: RangeResult = { kind: 'none' };
const unsatisfiable: RangeResult = { kind: 'unsatisfiable' };
const range = (start: number, end: number): RangeResult => ({ kind: 'range', start, end });

const cases: Array<[name: string, header: string | undefined, size: number, expected: RangeResult]> = [
  ['no header serves the full file', undefined, 1000, none],
  ['empty header serves the full file', '', 1000, none],
  ['bytes=0-499 is the first 500 bytes', 'bytes=0-499', 1000, range(0, 499)],
  ['bytes=500-999 is the last 500 bytes', 'bytes=500-999', 1000, range(500, 999)],
  ['bytes=0-0 is the first byte', 'bytes=0-0', 1000, range(0, 0)],
  ['bytes=500- runs to the end', 'bytes=500-', 1000, range(500, 999)],
  ['end beyond the file is clamped to size-1', 'bytes=900-5000', 1000, range(900, 999)],
  ['suffix bytes=-100 is the last 100 bytes', 'bytes=-100', 1000, range(900, 999)],
  ['suffix longer than the file is the whole file', 'bytes=-5000', 1000, range(0, 999)],
  ['start == size is unsatisfiable', 'bytes=1000-', 1000, unsatisfiable],
  ['start > size is unsatisfiable', 'bytes=2000-3000', 1000, unsatisfiable],
  ['suffix of zero bytes is unsatisfiable', 'bytes=-0', 1000, unsatisfiable],
  ['empty file: bytes=0- is unsatisfiable', 'bytes=0-', 0, unsatisfiable],
  ['empty file: bytes=0-0 is unsatisfiable', 'bytes=0-0', 0, unsatisfiable],
  ['empty file: suffix bytes=-1 is unsatisfiable', 'bytes=-1', 0, unsatisfiable],
  ['multiple ranges serve the full file', 'bytes=0-1,5-6', 1000, none],
  ['multiple ranges with spaces serve the full file', 'bytes=0-1, 5-6', 1000, none],
  ['last < first is invalid and ignored', 'bytes=500-100', 1000, none],
  ['other units are ignored', 'items=0-5', 1000, none],
  ['unit is case-insensitive', 'Bytes=0-9', 1000, range(0, 9)],
  ['surrounding whitespace is tolerated', '  bytes=0-9  ', 1000, range(0, 9)],
  ['whitespace inside the spec is malformed', 'bytes=0 - 9', 1000, none],
  ['space before = is malformed', 'bytes =0-9', 1000, none],
  ['a bare dash is malformed', 'bytes=-', 1000, none],
  ['no dash is malformed', 'bytes=100', 1000, none],
  ['"bytes=" alone is malformed', 'bytes=', 1000, none],
  ['negative-looking numbers are malformed', 'bytes=--5', 1000, none],
  ['non-digits are malformed', 'bytes=0x10-20', 1000, none],
  ['a huge start is unsatisfiable', 'bytes=99999999999999999999999-', 1000, unsatisfiable],
  ['a huge end is clamped', 'bytes=10-99999999999999999999999', 1000, range(10, 999)],
  ['a huge suffix is the whole file', 'bytes=-99999999999999999999999', 1000, range(0, 999)],
  ['one-byte file, bytes=0-0', 'bytes=0-0', 1, range(0, 0)],
];

for (const [name, header, size, expected] of cases) {
  test(`parseRange: ${name}`, () => {
    assert.deepEqual(parseRange(header, size), expected);
  });
}
