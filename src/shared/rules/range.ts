// Range rule: turns a `Range` request header into the one byte range to serve (RFC 9110 §14).

/** Result of {@link parseRange}. */
export type RangeResult =
  /** Ignore the header and serve the whole file with 200 (absent, malformed, other unit, multipart). */
  | { kind: 'none' }
  /** Serve bytes `start..end` (inclusive) with 206 and `Content-Range: bytes start-end/size`. */
  | { kind: 'range'; start: number; end: number }
  /** Answer 416; its Content-Range is the unsatisfied-range form: `bytes *`, a slash, the size (RFC 9110 §14.4). */
  | { kind: 'unsatisfiable' };

const NONE: RangeResult = Object.freeze({ kind: 'none' });
const UNSATISFIABLE: RangeResult = Object.freeze({ kind: 'unsatisfiable' });

/**
 * Parses a `Range` header against a file of `size` bytes. Only the `bytes` unit (case-insensitive,
 * RFC 9110 §14.1) and a single range-spec are honoured:
 * - `bytes=a-b` → a..min(b, size-1); `bytes=a-` → a..size-1; `bytes=-n` (suffix) → the last n bytes;
 * - `a >= size`, a zero-length suffix (`bytes=-0`), or any range on an empty file → unsatisfiable
 *   (RFC 9110 §14.1.1: a 206 of an empty file cannot be described by `Content-Range`);
 * - several ranges (`bytes=0-1,5-6`) → none: a server MAY ignore Range (§14.2), and serving the full
 *   200 avoids multipart/byteranges and range-amplification abuse;
 * - syntax errors, `b < a`, other units, whitespace inside the spec → none (§14.2: ignore invalid Range).
 * Only GET requests should consult this (§14.2).
 */
export function parseRange(header: string | undefined, size: number): RangeResult {
  if (header === undefined) return NONE;
  const h = header.trim();
  // "bytes=" prefix; the unit is case-insensitive, so only an unusual spelling pays for toLowerCase.
  if (
    !h.startsWith('bytes=') &&
    (h.charCodeAt(5) !== 0x3d /* = */ || h.slice(0, 5).toLowerCase() !== 'bytes')
  ) {
    return NONE;
  }
  if (h.includes(',', 6)) return NONE;

  const dash = h.indexOf('-', 6);
  if (dash < 0) return NONE;
  const first = parseDigits(h, 6, dash);
  const last = parseDigits(h, dash + 1, h.length);
  if (first === INVALID || last === INVALID) return NONE;

  if (first === EMPTY) {
    // Suffix range: bytes=-n
    if (last === EMPTY) return NONE;
    if (last === 0 || size <= 0) return UNSATISFIABLE;
    return { kind: 'range', start: last >= size ? 0 : size - last, end: size - 1 };
  }
  if (last !== EMPTY && last < first) return NONE;
  if (first >= size) return UNSATISFIABLE;
  const end = last === EMPTY || last >= size ? size - 1 : last;
  return { kind: 'range', start: first, end };
}

const EMPTY = -1;
const INVALID = -2;

/**
 * Parses `s[from, to)` as 1*DIGIT. Returns EMPTY for an empty slice, INVALID for any non-digit, and
 * Infinity for values beyond Number.MAX_SAFE_INTEGER (still compares correctly against any size).
 */
function parseDigits(s: string, from: number, to: number): number {
  if (from === to) return EMPTY;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return INVALID;
    n = n * 10 + d;
  }
  return n > Number.MAX_SAFE_INTEGER ? Number.POSITIVE_INFINITY : n;
}
