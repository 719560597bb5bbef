// Content-Type rules: validate stored media types (RFC 9110 §8.3.1) and build the header value with a charset
// (which types are text: the media-type table, media-types.ts).

import { isTextualMediaType } from './media-types.js';

/** RFC 9110 §5.6.2 tchar: "!#$%&'*+-.^_`|~", DIGIT, ALPHA. Indexed by char code < 128. */
const TCHAR = new Uint8Array(128);
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;
for (const ch of "!#$%&'*+-.^_`|~") TCHAR[ch.charCodeAt(0)] = 1;

/** True when `c` (a char code) is an RFC 9110 tchar. Shared with the `_headers` parser. */
export function isTchar(c: number): boolean {
  return c < 128 && TCHAR[c] === 1;
}

/** Longest media type accepted (RFC 6838 §4.2 caps type and subtype names at 127 chars each). */
export const MAX_MIME_LENGTH = 255;

/**
 * Whether `s` is a well-formed media type: `type "/" subtype *( OWS ";" OWS [ parameter ] )` with
 * `parameter = token "=" ( token / quoted-string )` (RFC 9110 §8.3.1, §5.6.6), at most 255 chars.
 * Stricter than the grammar in one way: obs-text (bytes 0x80–0xFF) is refused, so every accepted value
 * is plain ASCII and safe to put in a header. No leading or trailing whitespace is allowed.
 *
 * Ours rather than the `content-type` package's, for a measured reason (the 31 cases of
 * test/shared/rules/content-type.test.ts): content-type@1.0.5 answers 6 of them otherwise (refuses
 * `text/html;`, `text/html; ; a=b` and HTAB as OWS, which RFC 9110 allows; accepts obs-text, which must
 * not reach a header); content-type@2.1.0 parses without validating and answers 18 otherwise (`text`,
 * `text/html\r\nx: y`, ... accepted).
 */
export function isWellFormedMime(s: string): boolean {
  const len = s.length;
  if (len === 0 || len > MAX_MIME_LENGTH) return false;
  let i = skipToken(s, 0);
  if (i === 0 || s.charCodeAt(i) !== 0x2f /* / */) return false;
  const subStart = i + 1;
  i = skipToken(s, subStart);
  if (i === subStart) return false;
  while (i < len) {
    i = skipOws(s, i);
    if (s.charCodeAt(i) !== 0x3b /* ; */) return false;
    i = skipOws(s, i + 1);
    if (i === len || s.charCodeAt(i) === 0x3b) continue; // empty parameter (allowed by §5.6.6)
    const nameEnd = skipToken(s, i);
    if (nameEnd === i || s.charCodeAt(nameEnd) !== 0x3d /* = */) return false;
    i = nameEnd + 1;
    if (s.charCodeAt(i) === 0x22 /* " */) {
      i = skipQuotedString(s, i);
      if (i < 0) return false;
    } else {
      const valueEnd = skipToken(s, i);
      if (valueEnd === i) return false;
      i = valueEnd;
    }
  }
  return true;
}

function skipToken(s: string, i: number): number {
  while (i < s.length && isTchar(s.charCodeAt(i))) i++;
  return i;
}

function skipOws(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `i` is at the opening DQUOTE; returns the index after the closing one, or -1 (RFC 9110 §5.6.4). */
function skipQuotedString(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c === 0x5c /* \ */) {
      i++;
      const e = s.charCodeAt(i); // quoted-pair: HTAB / SP / VCHAR
      if (!(e === 0x09 || (e >= 0x20 && e <= 0x7e))) return -1;
      continue;
    }
    // qdtext: HTAB / SP / %x21 / %x23-5B / %x5D-7E
    if (!(c === 0x09 || (c >= 0x20 && c <= 0x7e))) return -1;
  }
  return -1;
}

const FALLBACK_TYPE = 'application/octet-stream';
const headerCache = new Map<string, string>();
const HEADER_CACHE_MAX = 512;

/**
 * The Content-Type header value for a manifest's stored type: appends `; charset=utf-8` to the text types
 * of the media-type table (text/*, JS, JSON, XML, SVG, `+json`/`+xml`) unless a charset parameter is
 * already present (then the value is returned unchanged). A value that is not a well-formed media type
 * becomes `application/octet-stream` (never echo unvalidated text into a header; with
 * `X-Content-Type-Options: nosniff` an unknown type is then downloaded, not rendered).
 */
export function contentTypeHeader(manifestType: string): string {
  const cached = headerCache.get(manifestType);
  if (cached !== undefined) return cached;
  const result = computeHeader(manifestType);
  if (headerCache.size >= HEADER_CACHE_MAX) headerCache.clear();
  headerCache.set(manifestType, result);
  return result;
}

function computeHeader(type: string): string {
  if (!isWellFormedMime(type)) return FALLBACK_TYPE;
  const semi = type.indexOf(';');
  if (!isTextualMediaType(type) || (semi >= 0 && hasCharsetParam(type, semi))) return type;
  return type + '; charset=utf-8';
}

/** Whether the parameters (from the first `;`) include a `charset` parameter (name case-insensitive). */
function hasCharsetParam(type: string, semi: number): boolean {
  for (const p of type.slice(semi + 1).split(';')) {
    const eq = p.indexOf('=');
    if (eq >= 0 && p.slice(0, eq).trim().toLowerCase() === 'charset') return true;
  }
  return false;
}
