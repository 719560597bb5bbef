// Path patterns shared by `_redirects` and `_headers` (Netlify / Cloudflare Pages syntax), compiled once.
//
// Syntax: literal segments, `:name` placeholders (a whole, non-empty segment), and one trailing `*` splat
// which matches anything, including nothing. `/a/*` matches `/a`, `/a/` and `/a/b/c` (splat `''`, `''`,
// `b/c`); `/a*` matches `/a`, `/ab`, `/a/b` (splat `''`, `b`, `/b`). Matching is case-sensitive (static
// file names are) and works on the raw, still percent-encoded request path, so captured values are safe
// to put back into a URL. Trailing slashes are normalised on both sides: `/about` also matches `/about/`.

/**
 * How a trailing `*` splat is attached: 0 none; 1 `/a/*` (the splat starts at a segment boundary);
 * 2 `/a*` (the last literal part is only a prefix of its segment and the splat is the rest).
 */
export type SplatKind = 0 | 1 | 2;
const SPLAT_NONE = 0;
const SPLAT_SEGMENT = 1;
const SPLAT_INLINE = 2;

/** A literal segment (string) or a placeholder capture index (number). */
export type Part = string | number;

export interface PathPattern {
  /** The pattern as written. */
  readonly source: string;
  /** The normalised path when the pattern has no placeholder or splat (matched with `===`). */
  readonly exact: string | null;
  /** Literal text that every matching normalised path starts with (cheap pre-filter). */
  readonly prefix: string;
  readonly parts: readonly Part[];
  readonly splat: SplatKind;
  /** Capture names in capture order; `splat` is last when the pattern has a splat. */
  readonly names: readonly string[];
}

/** Compiles a pattern; returns the reason as a string when it is invalid. */
export function compilePattern(source: string): PathPattern | string {
  if (source.charCodeAt(0) !== 0x2f) return 'path must start with /';
  const star = source.indexOf('*');
  if (star >= 0 && star !== source.length - 1) return 'a * splat is only allowed at the end of the path';
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return 'path contains whitespace or control characters';
  }

  let splat: SplatKind = SPLAT_NONE;
  let body = source;
  if (star >= 0) {
    body = source.slice(0, -1);
    splat = body.endsWith('/') ? SPLAT_SEGMENT : SPLAT_INLINE;
  }
  if (body.length > 1 && body.endsWith('/')) body = body.slice(0, -1);

  const parts: Part[] = [];
  const names: string[] = [];
  if (body !== '/') {
    const segs = body.slice(1).split('/');
    for (let k = 0; k < segs.length; k++) {
      const seg = segs[k]!;
      if (seg === '') return 'path has an empty segment (//)';
      if (seg.charCodeAt(0) === 0x3a /* : */) {
        const name = seg.slice(1);
        if (!isPlaceholderName(name)) return `placeholder "${seg}" must be a whole segment like :name`;
        if (splat === SPLAT_INLINE && k === segs.length - 1) return 'a placeholder cannot be followed by *';
        if (names.includes(name)) return `placeholder :${name} is used twice`;
        parts.push(names.length);
        names.push(name);
      } else {
        parts.push(encodeNonAscii(seg));
      }
    }
  }
  if (splat !== SPLAT_NONE) {
    if (names.includes('splat')) return 'placeholder :splat clashes with the * splat';
    names.push('splat');
  }

  let prefix = '/';
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!;
    if (typeof part === 'number') break;
    prefix += part;
    if (k < parts.length - 1) prefix += '/';
  }
  const exact = splat === SPLAT_NONE && names.length === 0 ? '/' + parts.join('/') : null;
  return { source, exact, prefix, parts, splat, names };
}

/** `[A-Za-z_][A-Za-z0-9_]*` */
export function isPlaceholderName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    const alpha = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
    if (!alpha && (i === 0 || c < 0x30 || c > 0x39)) return false;
  }
  return true;
}

/**
 * Percent-encodes (UTF-8) the characters that cannot appear raw in a request path or header value
 * (non-ASCII), leaving existing `%XX` escapes alone, so `/café` in a rule matches `/caf%C3%A9`.
 */
export function encodeNonAscii(s: string): string {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7e) {
      let out = '';
      for (const ch of s) out += ch.charCodeAt(0) > 0x7e ? encodeURIComponent(ch) : ch;
      return out;
    }
  }
  return s;
}

/** Normalises a request path for matching: `''` → `/`, one trailing slash removed (except for `/`). */
export function normalizeRequestPath(path: string): string {
  if (path.length === 0) return '/';
  if (path.length > 1 && path.charCodeAt(path.length - 1) === 0x2f) return path.slice(0, -1);
  return path;
}

/** The literal first segment every match must have, or null when the first segment can vary. */
export function firstLiteralSegment(p: PathPattern): string | null {
  const first = p.parts[0];
  if (typeof first !== 'string') return null; // '/*', or a placeholder first
  if (p.splat === SPLAT_INLINE && p.parts.length === 1) return null; // '/a*' matches '/ab/...'
  return first;
}

/** The first segment of a normalised path (`'/a/b'` → `'a'`, `'/'` → `''`). */
export function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return path.slice(1, end < 0 ? path.length : end);
}

/**
 * Tests a normalised path (see {@link normalizeRequestPath}) against a pattern. When `captures` is
 * given, the captured values are pushed onto it in `pattern.names` order (only meaningful on success).
 */
export function matchPattern(p: PathPattern, path: string, captures: string[] | null): boolean {
  if (p.exact !== null) return path === p.exact;
  if (!path.startsWith(p.prefix)) return false;
  const parts = p.parts;
  const n = parts.length;
  const len = path.length;
  let pos = 1; // just after the leading '/'
  for (let k = 0; k < n; k++) {
    if (pos > len) return false; // path ran out of segments
    const part = parts[k]!;
    if (p.splat === SPLAT_INLINE && k === n - 1) {
      // Last literal is a prefix of its segment; the splat takes everything after it.
      const lit = part as string;
      if (!path.startsWith(lit, pos)) return false;
      captures?.push(path.slice(pos + lit.length));
      return true;
    }
    let end = path.indexOf('/', pos);
    if (end < 0) end = len;
    if (typeof part === 'string') {
      if (end - pos !== part.length || !path.startsWith(part, pos)) return false;
    } else {
      if (end === pos) return false; // placeholders never match an empty segment
      captures?.push(path.slice(pos, end));
    }
    pos = end + 1;
  }
  if (p.splat === SPLAT_SEGMENT) {
    captures?.push(pos < len ? path.slice(pos) : '');
    return true;
  }
  // An inline splat always returns inside the loop (its pattern ends with a literal part).
  return p.splat === SPLAT_NONE && pos > len;
}
