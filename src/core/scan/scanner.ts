// The secret scanner (issue 10): which files are scanned, and a streaming scan of their bytes in bounded
// windows through our rule table (rules.ts) and @secretlint's recommended preset. Findings carry a type,
// a 1-based line and remediation hints, never the secret itself.

import { createHash } from 'node:crypto';
import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { rules as presetRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { SecretLintCoreConfig } from '@secretlint/types';
import { isTextualMediaType } from '../../shared/rules/media-types.js';
import {
  anySecretlintTriggered,
  DETECTION_RULES,
  type DetectionRule,
  isPlaceholder,
  isPublicValue,
  SECRETLINT_TRIGGERS,
  type SecretKind,
  secretlintKind,
  secretlintRuleName,
  secretlintTriggered,
} from './rules.js';

/**
 * secretlint's profiler is a process-wide singleton that records every mark and measure it is given and
 * never drops them: in a long-running service each scan would get slower than the last. We never read
 * its figures, so its `mark` becomes a no-op.
 */
secretLintProfiler.mark = () => {};

/** The preset's rules we run (rules.ts SECRETLINT_TRIGGERS says which, and why not the others). */
const PRESET_RULES = presetRules.filter((rule) => secretlintRuleName(rule.meta.id) in SECRETLINT_TRIGGERS);

/** The preset's config for one window: only the rules whose trigger occurs in it (configs are reused). */
const presetConfigs = new Map<string, SecretLintCoreConfig>();
function presetConfigFor(text: string): SecretLintCoreConfig | null {
  if (!anySecretlintTriggered(text)) return null;
  const active = PRESET_RULES.filter((rule) => secretlintTriggered(secretlintRuleName(rule.meta.id), text));
  if (active.length === 0) return null;
  const key = active.map((rule) => rule.meta.id).join(',');
  let config = presetConfigs.get(key);
  if (!config) {
    config = { rules: active.map((rule) => ({ id: rule.meta.id, rule })) };
    presetConfigs.set(key, config);
  }
  return config;
}

/** Bump when a check function changes meaning (pattern changes bump the version by themselves). */
const RULES_REVISION = 4;

/**
 * Identifies the rules a cached result was computed with: a blob's result is reused only by the same
 * scanner version, so changing a rule rescans every file at its next finalize.
 */
export const SCANNER_VERSION = `${RULES_REVISION}-${createHash('sha256')
  .update(
    JSON.stringify([
      DETECTION_RULES.map((r) => [r.type, r.pattern.source, r.pattern.flags, r.trigger?.source ?? '']),
      PRESET_RULES.map((r) => r.meta.id),
      Object.entries(SECRETLINT_TRIGGERS).map(([k, v]) => [k, v instanceof RegExp ? v.source : v]),
    ]),
  )
  .digest('hex')
  .slice(0, 12)}`;

export interface Finding extends SecretKind {
  /** 1-based line of the start of the secret. */
  line: number;
}

/** Text is scanned in windows of this many characters, so memory stays bounded whatever the file size. */
const WINDOW_CHARS = 1 << 20;
/**
 * A window reports the findings that start before its last OVERLAP_CHARS characters, which is longer than
 * any rule's longest match (a PEM key, ~20 KB) and the text its check reads after it (4 KB): those findings
 * are whole in it. The next window reports the rest.
 */
const OVERLAP_CHARS = 1 << 15;
/**
 * The next window starts this many characters before the first offset it reports, so a check that reads
 * the text before a match (a service account's `"type"` line up to 4 KB back, a Twilio account SID, the
 * name a value is assigned to) sees what it would see in the previous window.
 */
const CONTEXT_CHARS = 1 << 13;

// Browser-delivered text: the list, and the text files a site may publish by mistake (.env, ...).
const TEXT_EXTENSIONS = new Set([
  'html', 'htm', 'xhtml', 'shtml', 'js', 'mjs', 'cjs', 'jsx', 'ts', 'tsx', 'mts', 'cts', 'vue', 'svelte',
  'css', 'scss', 'less', 'json', 'jsonld', 'map', 'txt', 'xml', 'svg', 'webmanifest', 'md', 'markdown',
  'csv', 'tsv', 'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'env', 'properties', 'npmrc', 'netrc',
  'pgpass', 'htpasswd', 'log', 'sh', 'py', 'rb', 'php', 'pem', 'key', 'rss', 'atom', 'ics', 'vcf',
]); // biome-ignore format: a word list

/** Whether a file is browser-delivered text, by its extension or its content type. */
export function isScannable(path: string, contentType: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1).toLowerCase();
  const dot = base.lastIndexOf('.');
  const ext = dot >= 0 ? base.slice(dot + 1) : '';
  return TEXT_EXTENSIONS.has(ext) || isTextualMediaType(contentType);
}

interface WindowFinding extends SecretKind {
  start: number;
  end: number;
}

/** A rule's pattern as a sticky regex: tried at one offset only (where one of the rule's prefixes occurs). */
const STICKY = DETECTION_RULES.map((rule) => {
  if (!rule.prefixes) return null;
  if (rule.pattern.ignoreCase)
    throw new Error(`${rule.type}: prefixes are case-sensitive, its pattern is not`);
  return new RegExp(rule.pattern.source, `${rule.pattern.flags.replace('g', '')}y`);
});

/**
 * Every rule's prefixes by their first two characters (as `c0 << 8 | c1`): the prefix pass reads each
 * character once and looks further only where two characters open some prefix. Finding each prefix with
 * indexOf instead made a pass over the window per prefix (37 of them): 3x the time on a 1 MiB bundle.
 */
const PREFIXES_BY_PAIR = new Map<number, Array<{ prefix: string; rule: number }>>();
const OPENS_PREFIX = new Uint8Array(1 << 16);
DETECTION_RULES.forEach((rule, index) => {
  for (const prefix of rule.prefixes ?? []) {
    const pair = (prefix.charCodeAt(0) << 8) | prefix.charCodeAt(1);
    if (prefix.length < 2 || /[^\x20-\x7e]/.test(prefix)) throw new Error(`${rule.type}: prefix ${prefix}`);
    const list = PREFIXES_BY_PAIR.get(pair) ?? [];
    list.push({ prefix, rule: index });
    PREFIXES_BY_PAIR.set(pair, list);
    OPENS_PREFIX[pair] = 1;
  }
});

/** For each rule (by index in DETECTION_RULES), the ascending offsets in `text` where one of its prefixes occurs. */
export function prefixOffsets(text: string): number[][] {
  const offsets: number[][] = DETECTION_RULES.map(() => []);
  const last = text.length - 1;
  let c1 = text.charCodeAt(0);
  for (let i = 0; i < last; i++) {
    const c0 = c1;
    c1 = text.charCodeAt(i + 1);
    if ((c0 | c1) > 0xff || OPENS_PREFIX[(c0 << 8) | c1] === 0) continue;
    for (const { prefix, rule } of PREFIXES_BY_PAIR.get((c0 << 8) | c1) ?? []) {
      const list = offsets[rule] as number[];
      if (text.startsWith(prefix, i) && list[list.length - 1] !== i) list.push(i);
    }
  }
  return offsets;
}

/**
 * The matches of rule `index`'s pattern in `text`, left to right and not overlapping, as its global regex
 * finds them: a rule with prefixes runs its pattern only at their offsets (from prefixOffsets), which is
 * the same, since every match starts with one.
 */
export function* ruleMatches(index: number, text: string, offsets: number[][]): Generator<RegExpExecArray> {
  const sticky = STICKY[index];
  if (!sticky) {
    const re = (DETECTION_RULES[index] as DetectionRule).pattern;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) yield m;
    return;
  }
  let from = 0;
  for (const at of offsets[index] ?? []) {
    if (at < from) continue;
    sticky.lastIndex = at;
    const m = sticky.exec(text);
    if (m === null) continue;
    yield m;
    from = at + m[0].length;
  }
}

/** Every finding in one window of text, overlapping findings resolved in favour of the earlier rule. */
async function scanWindow(text: string): Promise<WindowFinding[]> {
  const found: WindowFinding[] = [];
  const offsets = prefixOffsets(text);
  for (const [index, rule] of DETECTION_RULES.entries()) {
    if (rule.trigger && !rule.trigger.test(text)) continue;
    for (const m of ruleMatches(index, text, offsets)) {
      const groups = m.groups ?? {};
      const secret = groups.secret ?? groups.quoted ?? groups.bare ?? m[0];
      if (isPlaceholder(secret)) continue;
      const ctx = { text, start: m.index, end: m.index + m[0].length, groups };
      const verdict = rule.check ? rule.check(secret, ctx) : true;
      if (verdict === false) continue;
      const { type, variableName, proxyHosts } = rule;
      found.push({
        type,
        variableName,
        proxyHosts,
        ...(verdict === true ? {} : verdict),
        start: ctx.start,
        end: ctx.end,
      });
    }
  }
  const config = presetConfigFor(text);
  const linted = config
    ? await lintSource({
        source: { filePath: 'site-file', content: text, ext: '', contentType: 'text' },
        options: { config, maskSecrets: true, noPhysicFilePath: true },
      })
    : { messages: [] };
  for (const message of linted.messages) {
    const kind = secretlintKind(message.ruleId, message.messageId);
    if (!kind) continue;
    const [start, end] = message.range;
    const value = text.slice(start, end);
    if (isPlaceholder(value) || isPublicValue(value)) continue;
    found.push({ ...kind, start, end });
  }
  const kept: WindowFinding[] = [];
  for (const f of found) if (!kept.some((k) => f.start < k.end && k.start < f.end)) kept.push(f);
  return kept;
}

/**
 * An inline source map (`//# sourceMappingURL=data:application/json;base64,...`, what webpack's
 * inline-source-map and esbuild's `--sourcemap=inline` write): its base64 hides the sources from every
 * rule, so it is decoded and scanned as a file of its own, its findings reported at the comment's line.
 */
const INLINE_MAP_MARKER = 'sourceMappingURL=data:';
/** The rest of an inline map's comment, at `lastIndex` (after INLINE_MAP_MARKER, found by indexOf: faster). */
const INLINE_MAP_RE = /application\/json[^,\s]{0,64};base64,/y;
const BASE64_RUN_RE = /[A-Za-z0-9+/=]*/y;

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * An incremental scan of one file: feed its bytes in any chunking, then `finish()`. Holds at most one
 * window (about 1 MiB of text) whatever the file size.
 */
export class ScanSession {
  private readonly decoder = new TextDecoder('utf-8');
  private pending = '';
  /** Line number of `pending[0]` in the whole file. */
  private line = 1;
  /** Findings starting before this index of `pending` were reported by the previous window. */
  private reportFrom = 0;
  private readonly findings: Finding[] = [];
  /** The inline source map being decoded: its own session, its comment's line, base64 not yet decoded. */
  private inlineMap: { session: ScanSession; line: number; carry: string } | null = null;
  /** Index of `pending` from which inline source maps are looked for (those before it were handled). */
  private inlineFrom = 0;

  async push(chunk: Uint8Array): Promise<void> {
    this.pending += this.decoder.decode(chunk, { stream: true });
    if (this.pending.length > WINDOW_CHARS) await this.drain(false);
  }

  async finish(): Promise<Finding[]> {
    this.pending += this.decoder.decode();
    await this.drain(true);
    return this.findings.sort((a, b) => a.line - b.line || a.type.localeCompare(b.type));
  }

  private async drain(final: boolean): Promise<void> {
    while (this.pending.length > (final ? 0 : WINDOW_CHARS)) {
      const whole = this.pending.length <= WINDOW_CHARS;
      const window = whole ? this.pending : this.pending.slice(0, WINDOW_CHARS);
      // Each offset of the file is reported by exactly one window: this one up to OVERLAP_CHARS before its
      // end, where every match is whole in it; the next one from there on.
      const reportTo = whole ? window.length : window.length - OVERLAP_CHARS;
      this.record(window, await scanWindow(window), this.reportFrom, reportTo);
      await this.scanInlineMaps(window, whole);
      if (whole) {
        this.pending = '';
        return;
      }
      // The next window starts CONTEXT_CHARS before reportTo, at a line start when there is one nearby
      // (text mid-line could pass for a line start, or `\b`, to a rule). Overlapping matches there are
      // resolved as in this window, so one secret is never reported twice under two types.
      let cut = reportTo - CONTEXT_CHARS;
      const nl = window.lastIndexOf('\n', cut - 1);
      if (nl !== -1 && nl + 1 >= cut - CONTEXT_CHARS) cut = nl + 1;
      this.line += countNewlines(window, 0, cut);
      this.reportFrom = reportTo - cut;
      this.inlineFrom = Math.max(0, this.inlineFrom - cut);
      this.pending = this.pending.slice(cut);
    }
  }

  /**
   * Feeds the inline source maps of `window` (from `inlineFrom` on) to their own sessions, a map whose
   * base64 runs past the window's end carrying on in the next window; `last` is the file's last window.
   */
  private async scanInlineMaps(window: string, last: boolean): Promise<void> {
    let at = this.inlineFrom;
    for (;;) {
      if (!this.inlineMap) {
        const marker = window.indexOf(INLINE_MAP_MARKER, at);
        if (marker === -1) break;
        INLINE_MAP_RE.lastIndex = marker + INLINE_MAP_MARKER.length;
        if (!INLINE_MAP_RE.test(window)) {
          at = marker + INLINE_MAP_MARKER.length;
          continue;
        }
        const line = this.line + countNewlines(window, 0, marker);
        this.inlineMap = { session: new ScanSession(), line, carry: '' };
        at = INLINE_MAP_RE.lastIndex;
      }
      BASE64_RUN_RE.lastIndex = at;
      BASE64_RUN_RE.exec(window);
      const end = BASE64_RUN_RE.lastIndex;
      const base64 = this.inlineMap.carry + window.slice(at, end);
      const whole = base64.length - (base64.length % 4);
      await this.inlineMap.session.push(Buffer.from(base64.slice(0, whole), 'base64'));
      this.inlineMap.carry = base64.slice(whole);
      at = end;
      if (end === window.length && !last) break;
      const { session, line } = this.inlineMap;
      this.inlineMap = null;
      for (const f of await session.finish()) this.findings.push({ ...f, line });
    }
    this.inlineFrom = at;
  }

  /** Keeps the findings of `window` that start in `from`..`to`, with their line numbers. */
  private record(window: string, found: WindowFinding[], from: number, to: number): void {
    let lineAt = 0;
    let line = this.line;
    const inRange = found.filter((f) => f.start >= from && f.start < to);
    for (const f of inRange.sort((a, b) => a.start - b.start)) {
      line += countNewlines(window, lineAt, f.start);
      lineAt = f.start;
      this.findings.push({ type: f.type, line, variableName: f.variableName, proxyHosts: f.proxyHosts });
    }
  }
}

/** Scans a whole stream of bytes (a stored blob). */
export async function scanStream(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array>,
): Promise<Finding[]> {
  const session = new ScanSession();
  for await (const chunk of body) {
    await session.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return session.finish();
}

/** Scans text held in memory (tests, small inputs). */
export function scanText(text: string): Promise<Finding[]> {
  return scanStream([Buffer.from(text)]);
}
