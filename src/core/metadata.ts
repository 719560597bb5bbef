// Viewer metadata (create request) and the metadata patch (PATCH .../metadata): titles, descriptions,
// Open Graph image, password and expiry, each checked with a message naming the field.

import { invalid } from './errors.js';
import { MAX_PASSWORD_CHARS } from './password.js';

export const MAX_TITLE_CHARS = 200;
export const MAX_DESCRIPTION_CHARS = 1000;
/** Longest ttlSeconds accepted: 10 years. */
export const MAX_TTL_S = 10 * 365 * 86_400;

export interface ViewerMetadata {
  title?: string;
  description?: string;
  ogImagePath?: string;
}

interface FileLike {
  path: string;
  contentType: string;
}

function text(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} is ${value.length} characters; at most ${max} are allowed`);
  // Control characters other than tab and newline would corrupt HTML heads and headers.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is exactly what this refuses.
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(value)) throw invalid(`${field} contains control characters`);
  return value;
}

/** ogImagePath must name an image file of the manifest. */
export function checkOgImagePath(value: unknown, files: FileLike[]): string {
  const path = text('ogImagePath', value, 500);
  const file = files.find((f) => f.path === path);
  if (!file) throw invalid(`ogImagePath "${path}" is not a file of the site`);
  if (!file.contentType.toLowerCase().startsWith('image/')) {
    throw invalid(`ogImagePath "${path}" is ${file.contentType}, not an image`);
  }
  return path;
}

/** The `viewer` object of a create request (all fields optional strings). */
export function validateViewer(viewer: unknown, files: FileLike[]): ViewerMetadata {
  if (viewer === undefined || viewer === null) return {};
  if (typeof viewer !== 'object' || Array.isArray(viewer)) throw invalid('viewer must be an object');
  const v = viewer as Record<string, unknown>;
  const out: ViewerMetadata = {};
  if (v.title !== undefined && v.title !== null) out.title = text('viewer.title', v.title, MAX_TITLE_CHARS);
  if (v.description !== undefined && v.description !== null) {
    out.description = text('viewer.description', v.description, MAX_DESCRIPTION_CHARS);
  }
  if (v.ogImagePath !== undefined && v.ogImagePath !== null)
    out.ogImagePath = checkOgImagePath(v.ogImagePath, files);
  return out;
}

/** A validated metadata patch: a field that is absent stays, `null` clears. */
export interface MetadataPatch {
  title?: string | null;
  description?: string | null;
  ogImagePath?: string | null;
  password?: string | null;
  ttlSeconds?: number | null;
  /** Visitor counting on (true) or off (false) for the site (issue 25). */
  analytics?: boolean;
}

export function validateMetadataPatch(body: unknown, files: FileLike[]): MetadataPatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('The body must be a JSON object of the fields to change');
  }
  const b = body as Record<string, unknown>;
  const out: MetadataPatch = {};
  if ('title' in b) out.title = b.title === null ? null : text('title', b.title, MAX_TITLE_CHARS);
  if ('description' in b) {
    out.description =
      b.description === null ? null : text('description', b.description, MAX_DESCRIPTION_CHARS);
  }
  if ('ogImagePath' in b)
    out.ogImagePath = b.ogImagePath === null ? null : checkOgImagePath(b.ogImagePath, files);
  if ('password' in b) {
    if (b.password === null) out.password = null;
    else {
      const pw = b.password;
      if (typeof pw !== 'string' || pw.length === 0 || pw.length > MAX_PASSWORD_CHARS) {
        throw invalid(
          `password must be a string of 1 to ${MAX_PASSWORD_CHARS} characters, or null to remove it`,
        );
      }
      out.password = pw;
    }
  }
  if ('ttlSeconds' in b) {
    const ttl = b.ttlSeconds;
    if (ttl === null) out.ttlSeconds = null;
    else if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl <= 0 || ttl > MAX_TTL_S) {
      throw invalid(`ttlSeconds must be a positive whole number of seconds (at most ${MAX_TTL_S}), or null`);
    } else out.ttlSeconds = ttl;
  }
  if ('analytics' in b) {
    if (typeof b.analytics !== 'boolean') throw invalid('analytics must be true or false');
    out.analytics = b.analytics;
  }
  if ('analytics' in b) {
    if (typeof b.analytics !== 'boolean') throw invalid('analytics must be true or false');
    out.analytics = b.analytics;
  }
  return out;
}
