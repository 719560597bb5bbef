// `_headers` rules: parse a Netlify / Cloudflare Pages custom-headers file once and list the headers for a path.
//
// Format (https://docs.netlify.com/routing/headers/, https://developers.cloudflare.com/pages/configuration/headers/):
// a line that starts at column 0 is a path pattern (see pattern.ts: `:name` placeholders, trailing `*`);
// the indented lines under it are `Name: value` headers for it. `#` lines are comments. Every matching
// rule applies, in file order; a header set by several rules (or twice in one rule) is combined into one
// comma-separated value, which is how HTTP defines repeated fields (RFC 9110 §5.3).
//
// Refused with a warning (the server computes these, or they would let one site harm the protocol or
// other sites):
// - hop-by-hop fields (RFC 9110 §7.6.1): Connection, Keep-Alive, Proxy-Connection, TE, Trailer,
//   Transfer-Encoding, Upgrade;
// - framing and representation metadata the server derives from the bytes it sends: Content-Length,
//   Content-Encoding, Content-Range, and the validators/range support its 304/206 logic relies on:
//   ETag, Last-Modified, Accept-Ranges; and Date, the server's clock (RFC 9110 §6.6.1);
// - Set-Cookie: sites share a parent domain, so a cookie could be scoped to it and leak into, or fixate
//   sessions on, other sites (cookie tossing).
// Content-Type and Cache-Control may be overridden (common, and harmless to framing).
// Header names must be RFC 9110 tokens; values must be printable ASCII plus SP/HTAB (no CR, LF, NUL or
// other control characters, which would allow response splitting or make Node reject the header).
// Not supported (warning): full-URL path lines, Cloudflare's `! Name` detach lines, placeholder
// substitution inside values. At most 2000 path rules.

import { isTchar } from './content-type.js';
import {
  compilePattern,
  firstLiteralSegment,
  firstSegment,
  matchPattern,
  normalizeRequestPath,
  type PathPattern,
} from './pattern.js';

export const MAX_HEADER_RULES = 2000;

/** Lower-case names `_headers` may not set (see the policy above). */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-encoding',
  'content-range',
  'etag',
  'last-modified',
  'accept-ranges',
  'date',
  'set-cookie',
]);

export interface HeaderEntry {
  /** As written in the file. */
  readonly name: string;
  /** Lower-case, for combining. */
  readonly key: string;
  readonly value: string;
}

export interface HeaderRule {
  /** 1-based line number of the path line. */
  readonly line: number;
  readonly path: string;
  /** `path`, compiled at parse time. */
  readonly pattern: PathPattern;
  readonly headers: readonly HeaderEntry[];
}

/** Parses a `_headers` file. Invalid lines are skipped with a warning `line N: why`. */
export function parseHeaders(text: string): { rules: HeaderRule[]; warnings: string[] } {
  const rules: HeaderRule[] = [];
  const warnings: string[] = [];
  const lines = text.split('\n');
  // The section being filled; null after an invalid path line (its header lines are skipped quietly,
  // the path line already produced a warning) and before the first path line.
  let current: { line: number; path: string; pattern: PathPattern; headers: HeaderEntry[] } | null = null;
  let sectionInvalid = false;
  const flush = (): void => {
    if (current === null) return;
    if (current.headers.length === 0)
      warnings.push(`line ${current.line}: ${current.path} has no valid headers`);
    else rules.push(current);
    current = null;
  };

  for (let idx = 0; idx < lines.length; idx++) {
    const line = idx + 1;
    let raw = lines[idx]!;
    if (raw.endsWith('\r')) raw = raw.slice(0, -1);
    const content = raw.trim();
    if (content === '' || content.charCodeAt(0) === 0x23 /* # */) continue;

    const indented = raw.charCodeAt(0) === 0x20 || raw.charCodeAt(0) === 0x09;
    if (!indented) {
      flush();
      if (rules.length >= MAX_HEADER_RULES) {
        warnings.push(
          `line ${line}: more than ${MAX_HEADER_RULES} path rules; this line and all later ones are ignored`,
        );
        return { rules, warnings };
      }
      sectionInvalid = true;
      if (content.startsWith('http://') || content.startsWith('https://')) {
        warnings.push(`line ${line}: full URLs are not supported as paths; use a path starting with /`);
        continue;
      }
      const pattern = compilePattern(content);
      if (typeof pattern === 'string') {
        warnings.push(`line ${line}: invalid path "${content}": ${pattern}`);
        continue;
      }
      sectionInvalid = false;
      current = { line, path: content, pattern, headers: [] };
      continue;
    }

    if (current === null) {
      if (!sectionInvalid) warnings.push(`line ${line}: header line before any path line`);
      continue;
    }
    const entry = parseHeaderLine(content);
    if (typeof entry === 'string') warnings.push(`line ${line}: ${entry}`);
    else current.headers.push(entry);
  }
  flush();
  return { rules, warnings };
}

function parseHeaderLine(content: string): HeaderEntry | string {
  if (content.charCodeAt(0) === 0x21 /* ! */) return 'detaching headers with "!" is not supported';
  const colon = content.indexOf(':');
  if (colon < 0) return 'expected "Name: value"';
  const name = content.slice(0, colon);
  // RFC 9112 §5.1: no whitespace between the field name and the colon.
  if (name.length === 0 || !isToken(name)) return `invalid header name "${name}"`;
  const key = name.toLowerCase();
  if (FORBIDDEN_HEADERS.has(key)) return `header ${name} cannot be set from _headers`;
  const value = content.slice(colon + 1).trim();
  if (value === '') return `header ${name} has an empty value`;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c > 0x7e) {
      return `header ${name} value contains a control or non-ASCII character`;
    }
  }
  return { name, key, value };
}

function isToken(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isTchar(s.charCodeAt(i))) return false;
  return true;
}

/**
 * Built once per rules array: rules bucketed by their literal first segment (`/blog/*` → `blog`) and the
 * rules that can match any first segment (`/*`, `/:lang/...`, `/a*`, `/`), so a request only tests the
 * rules that can apply to it, merged back into file order.
 */
interface RuleIndex {
  readonly byFirstSegment: Map<string, number[]>;
  readonly wild: number[];
}
const indexes = new WeakMap<readonly HeaderRule[], RuleIndex>();
const NO_RULES: readonly number[] = [];

function indexFor(rules: readonly HeaderRule[]): RuleIndex {
  let index = indexes.get(rules);
  if (index === undefined) {
    const byFirstSegment = new Map<string, number[]>();
    const wild: number[] = [];
    for (const [i, r] of rules.entries()) {
      const first = firstLiteralSegment(r.pattern);
      if (first === null) wild.push(i);
      else {
        const bucket = byFirstSegment.get(first);
        if (bucket === undefined) byFirstSegment.set(first, [i]);
        else bucket.push(i);
      }
    }
    index = { byFirstSegment, wild };
    indexes.set(rules, index);
  }
  return index;
}

/**
 * The custom headers for a request path (raw, percent-encoded, without query), in first-seen order;
 * repeated names (case-insensitive) are joined with `, ` under the first spelling seen.
 */
export function headersFor(rules: readonly HeaderRule[], path: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (rules.length === 0) return out;
  const normalized = normalizeRequestPath(path);
  const index = indexFor(rules);
  const bucket =
    index.byFirstSegment.size === 0
      ? NO_RULES
      : (index.byFirstSegment.get(firstSegment(normalized)) ?? NO_RULES);
  const wild = index.wild;
  const n = rules.length;
  let keys: string[] | null = null;
  let a = 0;
  let b = 0;
  for (;;) {
    const ia = a < bucket.length ? bucket[a]! : n;
    const ib = b < wild.length ? wild[b]! : n;
    if (ia === n && ib === n) break;
    let i: number;
    if (ia < ib) {
      i = ia;
      a++;
    } else {
      i = ib;
      b++;
    }
    const rule = rules[i]!;
    if (!matchPattern(rule.pattern, normalized, null)) continue;
    for (const h of rule.headers) {
      keys ??= [];
      const at = keys.indexOf(h.key);
      if (at < 0) {
        keys.push(h.key);
        out.push([h.name, h.value]);
      } else {
        const entry = out[at]!;
        entry[1] = entry[1] + ', ' + h.value;
      }
    }
  }
  return out;
}
