// Conditional-request rules: decide 304 Not Modified and whether If-Range lets a Range apply (RFC 9110 §13).
//
// Only GET and HEAD are conditional here; the caller must not consult these for other methods.

/** The request headers these rules read (lower-case names, as Node delivers them). */
export interface ConditionalHeaders {
  'if-none-match'?: string;
  'if-modified-since'?: string;
}

/**
 * True when the server should answer `304 Not Modified` (RFC 9110 §13.2.2 precedence):
 * - If-None-Match present → it alone decides, with the **weak** comparison (§8.8.3.2): `W/"x"` and
 *   `"x"` match each other; `*` matches any existing file; a comma-separated list matches if any
 *   member matches. If-Modified-Since is then ignored, even when If-None-Match does not match.
 * - Otherwise If-Modified-Since (§13.1.3): not modified when the file's Last-Modified, truncated to
 *   whole seconds (HTTP-date resolution), is at or before the given date. An unparseable date → false.
 */
export function isNotModified(reqHeaders: ConditionalHeaders, etag: string, lastModifiedMs: number): boolean {
  const inm = reqHeaders['if-none-match'];
  if (inm !== undefined) return etagListMatchesWeak(inm, etag);
  const ims = reqHeaders['if-modified-since'];
  if (ims === undefined) return false;
  const since = parseHttpDate(ims);
  if (Number.isNaN(since) || !Number.isFinite(lastModifiedMs)) return false;
  return Math.floor(lastModifiedMs / 1000) <= Math.floor(since / 1000);
}

/**
 * True when a Range request may be answered with 206 given its `If-Range` header (RFC 9110 §13.1.5):
 * - absent → true (the Range is unconditional);
 * - an entity-tag → **strong** comparison: both tags must be strong (no `W/`) and identical;
 * - an HTTP-date → must equal the file's Last-Modified at second resolution (exact match, not "older
 *   than"); an unparseable value → false.
 * When this returns false the server ignores the Range and sends the whole file with 200.
 */
export function ifRangeMatches(ifRange: string | undefined, etag: string, lastModifiedMs: number): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  // §13.1.5: an entity-tag is told apart from an HTTP-date by its DQUOTE (or a W/ weakness prefix).
  const c0 = v.charCodeAt(0);
  if (c0 === 0x22 /* " */ || (c0 === 0x57 /* W */ && v.charCodeAt(1) === 0x2f) /* / */) {
    return c0 === 0x22 && !isWeak(etag) && v === etag;
  }
  const date = parseHttpDate(v);
  if (Number.isNaN(date) || !Number.isFinite(lastModifiedMs)) return false;
  return Math.floor(lastModifiedMs / 1000) === Math.floor(date / 1000);
}

function isWeak(tag: string): boolean {
  return tag.charCodeAt(0) === 0x57 && tag.charCodeAt(1) === 0x2f;
}

/**
 * Weak comparison of our `etag` against an If-None-Match value: `*` or a list of entity-tags
 * (`#entity-tag`, RFC 9110 §13.1.2). Scans in place (no split); opaque-tags may legally contain
 * commas, so a tag runs from its opening to its closing quote. Unquoted junk members are skipped.
 */
function etagListMatchesWeak(list: string, etag: string): boolean {
  const opaque = isWeak(etag) ? etag.slice(2) : etag;
  if (list === opaque || list === etag) return true; // the common single-tag case
  const len = list.length;
  let i = 0;
  while (i < len) {
    const c = list.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x2c /* , */) {
      i++;
      continue;
    }
    if (c === 0x2a /* * */) {
      // "*" must be the whole member.
      const next = skipOws(list, i + 1);
      if (next === len || list.charCodeAt(next) === 0x2c) return true;
    }
    let start = i;
    if (c === 0x57 /* W */ && list.charCodeAt(i + 1) === 0x2f /* / */) start = i + 2;
    if (list.charCodeAt(start) === 0x22 /* " */) {
      const close = list.indexOf('"', start + 1);
      if (close < 0) return false; // unterminated: nothing further can be parsed
      if (close - start + 1 === opaque.length && list.startsWith(opaque, start)) return true;
      i = close + 1;
    } else {
      // Not an entity-tag: skip to the next member.
      const comma = list.indexOf(',', i);
      if (comma < 0) return false;
      i = comma + 1;
    }
  }
  return false;
}

function skipOws(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) break;
    i++;
  }
  return i;
}

// Browsers repeat the same If-Modified-Since value (our own Last-Modified) on every revalidation, so a
// one-entry memo saves the Date.parse on the hot path.
let lastDateText = '';
let lastDateMs = Number.NaN;

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, or the obsolete RFC 850 and asctime forms.
 * Values shorter than the shortest form (asctime, 24 chars) are refused so that loose inputs such as
 * `"1"` are not read as dates by Date.parse. asctime carries no zone but is UTC by definition, so ` GMT`
 * is appended before parsing (Date.parse would otherwise use the server's local zone).
 */
function parseHttpDate(text: string): number {
  if (text === lastDateText) return lastDateMs;
  let ms = Number.NaN;
  if (text.length >= 24 && text.length <= 64) {
    ms = Date.parse(text.endsWith('GMT') ? text : text + ' GMT');
  }
  lastDateText = text;
  lastDateMs = ms;
  return ms;
}
