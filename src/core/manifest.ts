// Manifest validation: turns the `files` of a publish/update request into checked, normalized file entries.

import { isWellFormedMime } from '../shared/rules/content-type.js';
import { sitePathKey } from '../shared/rules/paths.js';
import { ApiError } from './errors.js';
import { formatBytes } from './format.js';

/** One file of a version, as the spec's "File entry" (manifest and details). */
export interface ManifestFile {
  /** Relative path within the site, `/`-separated, case-sensitive. */
  path: string;
  /** Bytes; a positive safe integer. */
  size: number;
  /** `type/subtype` lowercased, parameters kept as sent (e.g. `text/html; charset=UTF-8`). */
  contentType: string;
  /** SHA-256 as 64 lowercase hex characters; only present when the client sent one (enables dedup). */
  hash?: string;
}

export interface ManifestLimits {
  /** Entries per manifest; the spec's "Files per site", 1000. */
  maxFiles: number;
  /** Path length in characters (Unicode code points); the spec's 500. */
  maxPathChars: number;
  /** Largest single file, from the caller's plan (Free: 209715200). */
  maxFileSizeBytes: number;
}

/** The spec's "Limits" table: files per site. */
export const MAX_MANIFEST_FILES = 1000;
/** The spec's "Limits" table: path length, in characters. */
export const MAX_PATH_CHARS = 500;
/** Longest accepted `contentType` (after trimming); longer is never a real media type. */
export const MAX_CONTENT_TYPE_CHARS = 255;

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** C0 controls (U+0000-U+001F), DEL and C1 controls (U+0080-U+009F): never part of a sane file name. */
const CONTROL_CHAR = /\p{Cc}/u;
/** A lone UTF-16 surrogate: not encodable as UTF-8, so it could not be stored or served. */
const LONE_SURROGATE = /\p{Cs}/u;
/** How much of a client-sent value an error message quotes. */
const QUOTE_CHARS = 80;

/**
 * Checks a manifest against the spec's "File entry" rules and the given limits, and returns the
 * normalized entries in the order sent (unknown extra fields dropped, `contentType` trimmed with its
 * type/subtype lowercased, `hash` only when given; a `null` hash counts as absent).
 * Throws ApiError on the first problem, naming the entry's index and path:
 * 400 INVALID_REQUEST (shape, size, contentType), 400 INVALID_PATH (path rules, exact duplicates;
 * paths are case-sensitive), 400 INVALID_HASH, 413 FILE_TOO_LARGE (size over `maxFileSizeBytes`).
 */
export function validateManifest(files: unknown, limits: ManifestLimits): ManifestFile[] {
  if (!Array.isArray(files)) {
    throw new ApiError(
      'INVALID_REQUEST',
      `files must be an array of 1 to ${limits.maxFiles} file entries; got ${describe(files)}`,
    );
  }
  if (files.length < 1 || files.length > limits.maxFiles) {
    throw new ApiError(
      'INVALID_REQUEST',
      `files must hold 1 to ${limits.maxFiles} entries; got ${files.length}`,
    );
  }
  const firstIndexOfPath = new Map<string, number>();
  return files.map((entry: unknown, index) => {
    const file = validateEntry(entry, index, limits);
    // Served under one Unicode normalization (sitePathKey): `café` composed and decomposed are one name.
    const key = sitePathKey(file.path);
    const earlier = firstIndexOfPath.get(key);
    if (earlier !== undefined) {
      throw new ApiError(
        'INVALID_PATH',
        `${label(index, file.path)}: path duplicates files[${earlier}]${key === file.path && files[earlier]?.path === file.path ? '' : ' (the same name in another Unicode normalization)'}; each path may appear once`,
      );
    }
    firstIndexOfPath.set(key, index);
    return file;
  });
}

/** Sum of the entries' sizes in bytes (checked against the plan's storage by the caller). */
export function totalSize(files: readonly Pick<ManifestFile, 'size'>[]): number {
  let sum = 0;
  for (const file of files) sum += file.size;
  return sum;
}

function validateEntry(entry: unknown, index: number, limits: ManifestLimits): ManifestFile {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new ApiError(
      'INVALID_REQUEST',
      `files[${index}] must be an object with path, size and contentType; got ${describe(entry)}`,
    );
  }
  const fields = entry as Record<string, unknown>;
  const path = validatePath(fields['path'], index, limits.maxPathChars);
  const where = label(index, path);
  const size = validateSize(fields['size'], where, limits.maxFileSizeBytes);
  const contentType = normalizeContentType(fields['contentType'], where);
  const hash = validateHash(fields['hash'], where);
  return hash === undefined ? { path, size, contentType } : { path, size, contentType, hash };
}

/** Path rules, as a table: the first rule a path breaks is the one reported. */
const PATH_RULES: ReadonlyArray<{ breaks: (path: string) => boolean; problem: string }> = [
  { breaks: (p) => p.length === 0, problem: 'must not be empty' },
  { breaks: (p) => p.includes('\0'), problem: 'must not contain a null byte' },
  { breaks: (p) => CONTROL_CHAR.test(p), problem: 'must not contain control characters' },
  { breaks: (p) => LONE_SURROGATE.test(p), problem: 'must be well-formed Unicode (it has a lone surrogate)' },
  { breaks: (p) => p.includes('\\'), problem: 'must not contain a backslash; separate directories with "/"' },
  { breaks: (p) => p.startsWith('/'), problem: 'must be relative (no leading "/")' },
  { breaks: (p) => hasSegment(p, '..'), problem: 'must not contain a ".." segment' },
  { breaks: (p) => hasSegment(p, '.'), problem: 'must not contain a "." segment' },
  { breaks: (p) => hasSegment(p, ''), problem: 'must not contain an empty segment ("//" or a trailing "/")' },
];

function validatePath(value: unknown, index: number, maxChars: number): string {
  if (typeof value !== 'string') {
    const problem = value === undefined ? 'is required' : `must be a string; got ${describe(value)}`;
    throw new ApiError('INVALID_PATH', `files[${index}]: path ${problem}`);
  }
  // UTF-16 length bounds the code-point count from above, so counting is only needed past the limit.
  if (value.length > maxChars) {
    const chars = [...value].length;
    if (chars > maxChars) {
      throw new ApiError(
        'INVALID_PATH',
        `${label(index, value)}: path is ${chars} characters long; the limit is ${maxChars}`,
      );
    }
  }
  for (const rule of PATH_RULES) {
    if (rule.breaks(value))
      throw new ApiError('INVALID_PATH', `${label(index, value)}: path ${rule.problem}`);
  }
  return value;
}

/**
 * The first path rule `path` breaks, as the words after "path" in a refusal (`must not contain a ".."
 * segment`), or undefined when it is a valid site path. The archive deploy (core/archive.ts) checks its
 * entry names with it.
 */
export function pathProblem(path: string, maxChars: number): string | undefined {
  if (path.length > maxChars) {
    const chars = [...path].length;
    if (chars > maxChars) return `is ${chars} characters long; the limit is ${maxChars}`;
  }
  return PATH_RULES.find((rule) => rule.breaks(path))?.problem;
}

function hasSegment(path: string, segment: string): boolean {
  return path.split('/').includes(segment);
}

function validateSize(value: unknown, where: string, maxBytes: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    const problem =
      value === undefined
        ? 'is required'
        : `must be a positive whole number of bytes; got ${describe(value)}`;
    throw new ApiError('INVALID_REQUEST', `${where}: size ${problem}`);
  }
  if (value > maxBytes) {
    throw new ApiError(
      'FILE_TOO_LARGE',
      `${where}: size ${formatBytes(value)} (${value} bytes) is over the per-file limit of ${formatBytes(maxBytes)} (${maxBytes} bytes)`,
    );
  }
  return value;
}

function normalizeContentType(value: unknown, where: string): string {
  if (typeof value !== 'string') {
    const problem = value === undefined ? 'is required' : `must be a string; got ${describe(value)}`;
    throw new ApiError('INVALID_REQUEST', `${where}: contentType ${problem}`);
  }
  const trimmed = value.trim();
  if (trimmed.length > MAX_CONTENT_TYPE_CHARS) {
    throw new ApiError(
      'INVALID_REQUEST',
      `${where}: contentType is ${trimmed.length} characters long; the limit is ${MAX_CONTENT_TYPE_CHARS}`,
    );
  }
  if (!isWellFormedMime(trimmed)) {
    throw new ApiError(
      'INVALID_REQUEST',
      `${where}: contentType must be a MIME type such as "text/html" or "text/html; charset=utf-8"; got ${quote(value)}`,
    );
  }
  // Type and subtype are case-insensitive (RFC 9110 §8.3.1): stored lower case, parameters as sent.
  const essenceEnd = trimmed.search(/[\t ;]/);
  const end = essenceEnd < 0 ? trimmed.length : essenceEnd;
  return trimmed.slice(0, end).toLowerCase() + trimmed.slice(end);
}

function validateHash(value: unknown, where: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !SHA256_HEX.test(value)) {
    throw new ApiError(
      'INVALID_HASH',
      `${where}: hash must be a SHA-256 of exactly 64 lowercase hex characters; got ${describe(value)}`,
    );
  }
  return value;
}

/** `files[3] ("assets/app.js")`: how every message names an entry. */
function label(index: number, path: string): string {
  return `files[${index}] (${quote(path)})`;
}

/** A client value as JSON (control characters escaped), shortened past QUOTE_CHARS code points. */
function quote(value: string): string {
  const chars = [...value.slice(0, QUOTE_CHARS * 2 + 1)];
  return chars.length > QUOTE_CHARS
    ? `${JSON.stringify(chars.slice(0, QUOTE_CHARS).join(''))}…`
    : JSON.stringify(value);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value;
}
