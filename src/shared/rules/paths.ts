// Request-path rules: decode a URL path safely once, then list the files that may answer it.
//
// Decoding follows RFC 3986 §2.1/§3.3 (percent-encoding, path segments) with the traversal
// defences of OWASP "Path Traversal": one decoding pass only (so `%252e` stays the literal text `%2e`),
// and every encoded or raw separator, NUL byte, dot segment (RFC 3986 §3.3 "." / "..") or empty
// segment is rejected instead of being normalised, so no decoded path can name a file outside the site.

const SLASH = 0x2f; // '/'
const BACKSLASH = 0x5c; // '\'
const PERCENT = 0x25; // '%'
const NUL = 0x00;

/**
 * Decodes the path part of a request target (the caller has already cut it at `?`).
 *
 * Returns the decoded path **without** its leading slash: `''` for the root, `'dir/'` for a folder
 * request (the trailing slash is kept), `'dir/page.html'` for a file. Returns `null` (reject, 400/404)
 * when the path:
 * - does not start with `/`;
 * - contains a raw backslash, or a `%5c`/`%2f` (encoded `\` or `/`) or a NUL byte (`%00`) once decoded;
 * - has an empty segment (`//etc/passwd`, `a//b`), except the single trailing slash of a folder;
 * - has a `.` or `..` segment, raw or encoded (`%2e%2e`);
 * - has a malformed percent escape or escapes that do not decode to UTF-8 (`%zz`, `%ff`).
 *
 * Decoding is `decodeURIComponent` applied once per segment, so `%252e%252e` becomes the harmless
 * filename `%2e%2e`. Paths without `%` are returned without decoding or copying segments.
 */
/**
 * The one form under which a site's paths are stored in its file map and looked up: Unicode NFC. A file
 * named on macOS arrives decomposed (`cafe\u0301.html`), while browsers and people type the composed
 * `café`; both must find it. ASCII (nearly every path) is returned as it is, without the normalizer.
 */
export function sitePathKey(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, on purpose
  return /^[\x00-\x7f]*$/.test(path) ? path : path.normalize('NFC');
}

export function decodeRequestPath(rawUrlPath: string): string | null {
  const len = rawUrlPath.length;
  if (len === 0 || rawUrlPath.charCodeAt(0) !== SLASH) return null;
  // Fast path for the common case: nothing to decode and nothing suspicious (native substring scans).
  if (
    !rawUrlPath.includes('%') &&
    !rawUrlPath.includes('/.') &&
    !rawUrlPath.includes('//') &&
    !rawUrlPath.includes('\\') &&
    !rawUrlPath.includes('\0')
  ) {
    return rawUrlPath.slice(1);
  }

  // Pieces of the decoded result; only allocated once a segment actually needs decoding.
  let out: string | null = null;
  let segStart = 1;
  let hasPercent = false;
  for (let i = 1; i <= len; i++) {
    const c = i < len ? rawUrlPath.charCodeAt(i) : SLASH;
    if (c === BACKSLASH || c === NUL) return null;
    if (c === PERCENT) {
      hasPercent = true;
      continue;
    }
    if (c !== SLASH) continue;

    // Segment [segStart, i) is complete.
    const segLen = i - segStart;
    if (segLen === 0) {
      // Empty segment: allowed only for the root ('/') or as the one trailing slash ('dir/').
      // i === len means we are at the virtual end, so the previous char was a real trailing '/'.
      if (i === len) break;
      return null;
    }
    let seg: string | null = null;
    if (hasPercent) {
      try {
        seg = decodeURIComponent(rawUrlPath.slice(segStart, i));
      } catch {
        return null; // malformed escape or invalid UTF-8
      }
      if (!isSafeDecodedSegment(seg)) return null;
    } else if (isDotSegment(rawUrlPath, segStart, segLen)) {
      return null;
    }

    if (seg !== null) {
      out = (out ?? rawUrlPath.slice(1, segStart)) + seg + (i < len ? '/' : '');
    } else if (out !== null) {
      out += rawUrlPath.slice(segStart, i < len ? i + 1 : i);
    }
    hasPercent = false;
    segStart = i + 1;
  }
  // Only a percent-decoded segment can hold non-ASCII: the file map's keys are NFC (sitePathKey).
  return out === null ? rawUrlPath.slice(1) : sitePathKey(out);
}

function isDotSegment(s: string, start: number, len: number): boolean {
  if (len === 1) return s.charCodeAt(start) === 0x2e;
  if (len === 2) return s.charCodeAt(start) === 0x2e && s.charCodeAt(start + 1) === 0x2e;
  return false;
}

/** A decoded segment must not reintroduce a separator or NUL, nor be a dot segment. */
function isSafeDecodedSegment(seg: string): boolean {
  if (seg.length === 0 || isDotSegment(seg, 0, seg.length)) return false;
  return !(seg.includes('/') || seg.includes('\\') || seg.includes('\0'));
}

/**
 * One file that may answer a request. The server tries the candidates in order and uses the first
 * whose `path` exists in the site's manifest. If that candidate has a `redirect`, the server answers
 * `301 Moved Permanently` with `Location: redirect` (plus the original query string, if any) instead
 * of serving the file.
 */
export interface Candidate {
  /** Site-relative file path (no leading slash), as stored in the manifest. */
  readonly path: string;
  /**
   * Percent-encoded absolute path to redirect to (always starts with exactly one `/`, so it can never
   * be read as a protocol-relative `//host` URL); absent when the file is served directly.
   */
  readonly redirect?: string;
}

/**
 * Files that may answer a decoded request path (from {@link decodeRequestPath}), in priority order.
 * Pretty-URL rules as Netlify and Cloudflare Pages apply them:
 * - `''` (root) and `dir/` → `index.html` of that folder;
 * - `page` → `page`, then `page.html` (served directly, so `/about` serves `about.html`), then
 *   `page/index.html` **as a redirect** to `/page/` — a folder index is only served under its
 *   trailing-slash URL so that relative links inside it resolve against the folder.
 */
export function candidatePaths(decodedPath: string): Candidate[] {
  if (decodedPath === '') return [{ path: 'index.html' }];
  if (decodedPath.charCodeAt(decodedPath.length - 1) === SLASH) return [{ path: decodedPath + 'index.html' }];
  return [
    { path: decodedPath },
    { path: decodedPath + '.html' },
    { path: decodedPath + '/index.html', redirect: '/' + encodePath(decodedPath) + '/' },
  ];
}

/** Outcome of {@link resolveCandidate}: serve a file, redirect to the folder URL, or nothing matched. */
export type Resolution = { kind: 'file'; path: string } | { kind: 'redirect'; location: string } | null;

/**
 * Convenience over {@link candidatePaths}: picks the first candidate for which `exists` (a manifest
 * lookup, no I/O here) returns true.
 */
export function resolveCandidate(decodedPath: string, exists: (path: string) => boolean): Resolution {
  for (const c of candidatePaths(decodedPath)) {
    if (!exists(c.path)) continue;
    return c.redirect === undefined
      ? { kind: 'file', path: c.path }
      : { kind: 'redirect', location: c.redirect };
  }
  return null;
}

/** Characters that never need escaping in a path segment (RFC 3986 §3.3 pchar minus `%`). */
function isPlainPathChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || // a-z
    (c >= 0x41 && c <= 0x5a) || // A-Z
    (c >= 0x30 && c <= 0x39) || // 0-9
    c === 0x2d || // -
    c === 0x2e || // .
    c === 0x5f || // _
    c === 0x7e || // ~
    c === SLASH
  );
}

/** Re-encodes a decoded path for a `Location` header; returns the input when nothing needs escaping. */
function encodePath(decoded: string): string {
  for (let i = 0; i < decoded.length; i++) {
    if (!isPlainPathChar(decoded.charCodeAt(i))) {
      return decoded.split('/').map(encodeURIComponent).join('/');
    }
  }
  return decoded;
}
