// `_redirects` rules: parse a Netlify / Cloudflare Pages redirects file once and match requests against it.
//
// Format (https://docs.netlify.com/routing/redirects/): one rule per line, `from to [status][!]`, fields
// separated by spaces or tabs, `#` lines are comments. `from` is a path pattern (see pattern.ts: `:name`
// placeholders, trailing `*` splat); `to` is a path or an absolute http(s) URL in which `:splat` and the
// `:name`s of `from` are substituted (unknown `:words` stay literal, as on Netlify). Status defaults to
// 301. 200 and 404 are rewrites: the server serves the content of `to` (a site path) with that status
// and the browser URL does not change. A trailing `!` (force) is accepted and recorded on the rule; the
// matcher does not act on it — the server decides shadowing (Netlify applies non-forced rules only when
// no file exists at the path; Cloudflare always applies them).
// Not supported, reported as warnings and skipped: query-parameter matching (`/store id=:id /b 301`,
// `/a?x=1`), conditions (`Country=`, `Language=`, `Role=`, `Cookie=`), domain-level `from` URLs, and
// proxying (a 200 rewrite to an external URL). At most 2000 rules (Cloudflare Pages' static-rule limit).
// First matching rule in file order wins.

import {
  compilePattern,
  encodeNonAscii,
  firstLiteralSegment,
  firstSegment,
  matchPattern,
  normalizeRequestPath,
  type PathPattern,
} from './pattern.js';

export const MAX_REDIRECT_RULES = 2000;

export type RedirectStatus = 200 | 301 | 302 | 303 | 307 | 308 | 404;
const STATUSES: ReadonlySet<number> = new Set([200, 301, 302, 303, 307, 308, 404]);

export interface RedirectRule {
  /** 1-based line number in `_redirects`. */
  readonly line: number;
  readonly from: string;
  /** As written, except that an absolute URL is normalised (URL.href) and non-ASCII is percent-encoded. */
  readonly to: string;
  readonly status: RedirectStatus;
  /** The status carried a `!` suffix. */
  readonly force: boolean;
  /** 200/404: serve `to` in place (its content, this status) instead of sending a Location. */
  readonly rewrite: boolean;
  /** `from`, compiled at parse time. */
  readonly pattern: PathPattern;
  /** `to`, compiled at parse time: literal chunks and capture indexes into `pattern.names`. */
  readonly target: ReadonlyArray<string | number>;
}

export interface RedirectMatch {
  readonly rule: RedirectRule;
  /**
   * Substituted `to`. For redirects, the `Location` value (a path that starts with exactly one `/`, or
   * an absolute URL); the caller may append the request's query string when it has none. For rewrites,
   * the site path to serve (cut it at `?`/`#` and pass it through decodeRequestPath).
   */
  readonly location: string;
  readonly status: RedirectStatus;
}

/** Parses a `_redirects` file. Invalid lines are skipped with a warning `line N: why`. */
export function parseRedirects(text: string): { rules: RedirectRule[]; warnings: string[] } {
  const rules: RedirectRule[] = [];
  const warnings: string[] = [];
  const lines = text.split('\n');
  for (let idx = 0; idx < lines.length; idx++) {
    const line = idx + 1;
    const content = lines[idx]!.trim();
    if (content === '' || content.charCodeAt(0) === 0x23 /* # */) continue;
    if (rules.length >= MAX_REDIRECT_RULES) {
      warnings.push(
        `line ${line}: more than ${MAX_REDIRECT_RULES} rules; this line and all later ones are ignored`,
      );
      break;
    }
    const result = parseLine(content, line);
    if (typeof result === 'string') warnings.push(`line ${line}: ${result}`);
    else rules.push(result);
  }
  return { rules, warnings };
}

function isAbsoluteUrl(s: string): boolean {
  return s.startsWith('https://') || s.startsWith('http://');
}

function parseLine(content: string, line: number): RedirectRule | string {
  const fields = content.split(/[ \t]+/);
  if (fields.length < 2) return 'expected "from to [status]"';
  const from = fields[0]!;
  let to = fields[1]!;

  if (from.includes('?')) return 'query-parameter matching in "from" is not supported';
  if (isAbsoluteUrl(from)) return 'domain-level redirects ("from" as a URL) are not supported';
  if (from.charCodeAt(0) !== 0x2f) return `"from" must start with / (got "${from}")`;
  if (to.includes('=') && !to.startsWith('/') && !isAbsoluteUrl(to)) {
    return `query-parameter matching ("${to}") is not supported`;
  }

  let status: RedirectStatus = 301;
  let force = false;
  if (fields.length >= 3) {
    let s = fields[2]!;
    if (s.includes('=')) return `conditions ("${s}") are not supported`;
    if (s.endsWith('!')) {
      force = true;
      s = s.slice(0, -1);
    }
    const n = s.length === 3 ? Number(s) : Number.NaN;
    if (!STATUSES.has(n)) return `status "${fields[2]}" is not one of 200, 301, 302, 303, 307, 308, 404`;
    status = n as RedirectStatus;
  }
  if (fields.length >= 4) {
    return fields[3]!.includes('=')
      ? `conditions ("${fields[3]}") are not supported`
      : `unexpected field "${fields[3]}" after the status`;
  }
  const rewrite = status === 200 || status === 404;

  for (let i = 0; i < to.length; i++) {
    const c = to.charCodeAt(i);
    if (c < 0x21 || c === 0x7f) return '"to" contains control characters';
  }
  if (isAbsoluteUrl(to)) {
    if (rewrite) return `a ${status} rewrite to an external URL (proxying) is not supported`;
    let url: URL;
    try {
      url = new URL(to);
    } catch {
      return `"to" is not a valid URL ("${to}")`;
    }
    to = url.href; // punycode host, percent-encoded non-ASCII path
  } else if (to.charCodeAt(0) !== 0x2f) {
    return `"to" must be a path starting with / or an http(s) URL (got "${to}")`;
  } else if (to.charCodeAt(1) === 0x2f || to.charCodeAt(1) === 0x5c) {
    return '"to" must not start with // (a protocol-relative URL); write the full https:// URL';
  } else {
    to = encodeNonAscii(to);
  }

  const pattern = compilePattern(from);
  if (typeof pattern === 'string') return `invalid "from": ${pattern}`;
  return { line, from, to, status, force, rewrite, pattern, target: compileTarget(to, pattern.names) };
}

/** Splits `to` into literal chunks and capture indexes for each `:name` that `from` defines. */
function compileTarget(to: string, names: readonly string[]): Array<string | number> {
  const out: Array<string | number> = [];
  let literalStart = 0;
  let i = 0;
  while (i < to.length) {
    if (to.charCodeAt(i) !== 0x3a /* : */) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < to.length && isNameChar(to.charCodeAt(j), j === i + 1)) j++;
    const index = j > i + 1 ? names.indexOf(to.slice(i + 1, j)) : -1;
    if (index < 0) {
      i = j > i + 1 ? j : i + 1;
      continue;
    }
    if (i > literalStart) out.push(to.slice(literalStart, i));
    out.push(index);
    literalStart = i = j;
  }
  if (literalStart < to.length) out.push(to.slice(literalStart));
  return out;
}

function isNameChar(c: number, first: boolean): boolean {
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f) return true;
  return !first && c >= 0x30 && c <= 0x39;
}

/**
 * Built once per rules array: the first rule index of each exact path; pattern rules bucketed by their
 * literal first segment (`/news/:slug` → `news`); and the pattern rules that can match any first
 * segment (`/*`, `/:lang/...`, `/a*`). A request only tries its bucket and the wildcard list, merged
 * back into file order.
 */
interface RuleIndex {
  readonly exact: Map<string, number>;
  readonly byFirstSegment: Map<string, number[]>;
  readonly wild: number[];
}
const indexes = new WeakMap<readonly RedirectRule[], RuleIndex>();
const NO_RULES: readonly number[] = [];

function indexFor(rules: readonly RedirectRule[]): RuleIndex {
  let index = indexes.get(rules);
  if (index === undefined) {
    const exact = new Map<string, number>();
    const byFirstSegment = new Map<string, number[]>();
    const wild: number[] = [];
    for (const [i, r] of rules.entries()) {
      const e = r.pattern.exact;
      if (e !== null) {
        if (!exact.has(e)) exact.set(e, i);
        continue;
      }
      const first = firstLiteralSegment(r.pattern);
      if (first === null) wild.push(i);
      else {
        const bucket = byFirstSegment.get(first);
        if (bucket === undefined) byFirstSegment.set(first, [i]);
        else bucket.push(i);
      }
    }
    index = { exact, byFirstSegment, wild };
    indexes.set(rules, index);
  }
  return index;
}

// Reused capture buffer (matching is synchronous, so one buffer is enough).
const captures: string[] = [];

/**
 * The first rule (file order) that matches `pathWithLeadingSlash` — the raw, percent-encoded request
 * path without its query — or null. Exact-path rules are found through a Map; pattern rules through
 * the first-segment buckets of the index above, and only those that come before the exact hit.
 */
export function matchRedirect(
  rules: readonly RedirectRule[],
  pathWithLeadingSlash: string,
): RedirectMatch | null {
  if (rules.length === 0) return null;
  const path = normalizeRequestPath(pathWithLeadingSlash);
  const index = indexFor(rules);
  const exactAt = index.exact.get(path) ?? rules.length;
  const bucket =
    index.byFirstSegment.size === 0 ? NO_RULES : (index.byFirstSegment.get(firstSegment(path)) ?? NO_RULES);
  const wild = index.wild;
  let a = 0;
  let b = 0;
  for (;;) {
    // Next candidate in file order from the two sorted lists.
    const ia = a < bucket.length ? bucket[a]! : rules.length;
    const ib = b < wild.length ? wild[b]! : rules.length;
    const i = ia < ib ? ia : ib;
    if (i >= exactAt) break;
    if (ia < ib) a++;
    else b++;
    const rule = rules[i]!;
    captures.length = 0;
    if (matchPattern(rule.pattern, path, captures)) {
      return { rule, location: substitute(rule, captures), status: rule.status };
    }
  }
  if (exactAt < rules.length) {
    const rule = rules[exactAt]!;
    return { rule, location: rule.to, status: rule.status };
  }
  return null;
}

function substitute(rule: RedirectRule, values: readonly string[]): string {
  const target = rule.target;
  if (target.length === 1 && typeof target[0] === 'string') return target[0];
  let out = '';
  for (const t of target) out += typeof t === 'string' ? t : (values[t] ?? '');
  // A splat such as `/go//evil.com` must not turn `/:splat` into the protocol-relative `//evil.com`.
  if (out.charCodeAt(0) === 0x2f) {
    let k = 1;
    while (k < out.length && (out.charCodeAt(k) === 0x2f || out.charCodeAt(k) === 0x5c)) k++;
    if (k > 1) out = '/' + out.slice(k);
  }
  return out;
}
