// Strings that long-lived caches keep.

/** V8 represents a substring of this many characters or more as a slice that keeps its parent alive. */
const SLICE_MIN_LENGTH = 13;
/** A character past Latin-1 (a string without one copies as one byte a character). */
const WIDE = /[\u0100-\uffff]/;

/**
 * A copy of `s` that keeps no other string alive. A substring of a request head is a slice of the whole
 * head, and `a + b` is a pair of its parts: a cache entry keyed by a hostname cut from a request, or a
 * header block built with `+=`, would hold the head or every piece for as long as it lives (issue 23: ~1.2
 * KB of heap a cached site). For what a cache stores once, never per request.
 */
export function ownedString(s: string): string {
  if (s.length < SLICE_MIN_LENGTH) return s;
  return WIDE.test(s)
    ? Buffer.from(s, 'utf16le').toString('utf16le')
    : Buffer.from(s, 'latin1').toString('latin1');
}
