// The site's serving configuration files, `_redirects` and `_headers` at the root of a version: parsed
// once per version for serving, and checked at finalize so publishers see their bad lines as warnings.

import { type HeaderRule, parseHeaders } from './headers.js';
import { parseRedirects, type RedirectRule } from './redirects.js';

export const REDIRECTS_FILE = '_redirects';
export const HEADERS_FILE = '_headers';
/** Larger configuration files are ignored (with a warning at finalize). */
export const SERVE_FILE_MAX_BYTES = 1024 * 1024;

export interface ServeRules {
  redirects: RedirectRule[];
  headers: HeaderRule[];
  /** `<file> line N: why` for every skipped line. */
  warnings: string[];
}

/** Parses whichever of `_redirects` / `_headers` is among `files` (other paths are ignored). */
export function parseServeFiles(files: ReadonlyArray<{ path: string; text: string }>): ServeRules {
  const out: ServeRules = { redirects: [], headers: [], warnings: [] };
  for (const { path, text } of files) {
    if (path === REDIRECTS_FILE) {
      const parsed = parseRedirects(text);
      out.redirects = parsed.rules;
      for (const w of parsed.warnings) out.warnings.push(`${REDIRECTS_FILE} ${w}`);
    } else if (path === HEADERS_FILE) {
      const parsed = parseHeaders(text);
      out.headers = parsed.rules;
      for (const w of parsed.warnings) out.warnings.push(`${HEADERS_FILE} ${w}`);
    }
  }
  return out;
}

export const oversizedServeFileWarning = (path: string) =>
  `${path} is larger than ${SERVE_FILE_MAX_BYTES / 1024 / 1024} MB and is ignored`;

/**
 * Warnings for the serving configuration files of a version about to be finalized (`_redirects line 3:
 * status "999" is not one of ...`). Files other than `_redirects` and `_headers` are ignored; a file over
 * SERVE_FILE_MAX_BYTES gets one warning saying it is ignored.
 */
export function checkServeFiles(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  const warnings: string[] = [];
  const small: { path: string; text: string }[] = [];
  for (const file of files) {
    if (file.path !== REDIRECTS_FILE && file.path !== HEADERS_FILE) continue;
    if (Buffer.byteLength(file.text) > SERVE_FILE_MAX_BYTES) {
      warnings.push(oversizedServeFileWarning(file.path));
    } else {
      small.push(file);
    }
  }
  warnings.push(...parseServeFiles(small).warnings);
  return warnings;
}
