// Version manifests as the hot path reads them: path -> file entry with its response headers computed once
// (DESIGN "House style" 8), plus the version's parsed `_redirects` / `_headers`.

import type { OutgoingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { cacheControlFor } from '../shared/rules/cache-control.js';
import { contentTypeHeader } from '../shared/rules/content-type.js';
import type { Encoding } from '../shared/rules/encoding.js';
import type { HeaderRule } from '../shared/rules/headers.js';
import { isCompressible } from '../shared/rules/media-types.js';
import { sitePathKey } from '../shared/rules/paths.js';
import { matchRedirect, type RedirectRule } from '../shared/rules/redirects.js';
import {
  HEADERS_FILE,
  parseServeFiles,
  REDIRECTS_FILE,
  SERVE_FILE_MAX_BYTES,
} from '../shared/rules/serve-files.js';
import { BlobNotFoundError, type BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { findVersion, manifestFiles } from '../store/db/tables/version.js';

/** One encoding of one file: its validator, length and ready-made header objects. */
export interface Representation {
  /** null = identity. */
  readonly encoding: Encoding | null;
  /** Strong ETag (RFC 9110 §8.8.3): `"<sha256>"`, or `"<sha256>-br"` / `"<sha256>-gzip"` for a variant. */
  readonly etag: string;
  /** Bytes of this representation (Content-Length). */
  readonly size: number;
  /** Key of the bytes in the body cache: the hash, or `<hash>:br` / `<hash>:gzip`. */
  readonly bodyKey: string;
  /** Headers of a 200. */
  readonly ok: OutgoingHttpHeaders;
  /** Headers of a 304: the validators and the fields that guide caches (RFC 9110 §15.4.5). */
  readonly notModified: OutgoingHttpHeaders;
}

/** `_headers` applied to a file for one request path (see site-server.ts). */
export interface CustomHeaders {
  readonly path: string;
  readonly extra: ReadonlyArray<readonly [string, string]>;
  /** Representations with `extra` merged in, built on first use per encoding (null when `extra` is empty). */
  readonly byEncoding: Map<Encoding | null, Representation> | null;
}

export interface FileEntry {
  readonly kind: 'file';
  /** Site-relative path as stored in the manifest. */
  readonly path: string;
  readonly hash: string;
  readonly size: number;
  /** Content-Type header value (charset added for text). */
  readonly contentType: string;
  /** Has br/gzip variants (text-like type, within the compression size bounds). */
  readonly compressible: boolean;
  /** The version's finalize time (Last-Modified). */
  readonly lastModifiedMs: number;
  readonly identity: Representation;
  /** undefined: not computed yet; null: compression does not pay (identity is served). */
  br: Representation | null | undefined;
  gzip: Representation | null | undefined;
  /** One-entry memo of the `_headers` for the last request path that served this file. */
  custom: CustomHeaders | null;
}

export interface VersionManifest {
  readonly versionId: string;
  readonly finalizedAt: number;
  /** Every servable file; `_redirects` and `_headers` are not in it (they are never served). */
  readonly files: ReadonlyMap<string, FileEntry>;
  readonly redirects: readonly RedirectRule[];
  /** The `!` (force) rules, which apply even when a file matches the path. */
  readonly forcedRedirects: readonly RedirectRule[];
  readonly headerRules: readonly HeaderRule[];
  /** The site's own `404.html`, served with status 404. */
  readonly notFoundPage: { readonly entry: FileEntry; readonly headers: OutgoingHttpHeaders } | null;
  readonly hasRootIndex: boolean;
  /** The one file of a site without index.html whose only file is at the root (viewer page at `/`). */
  readonly soleFile: FileEntry | null;
  /** Estimated memory held by this manifest (charged to the manifest cache). */
  readonly estimatedBytes: number;
}

/** Files up to this size are kept in memory whole; larger ones are streamed from the blob store. */
export const SMALL_BLOB_MAX_BYTES = 256 * 1024;
/** Compressing tiny files does not pay for the extra header bytes. */
export const COMPRESS_MIN_BYTES = 128;
/** Larger files are served uncompressed (compression would hold a large buffer and a CPU for long). */
export const COMPRESS_MAX_BYTES = 10 * 1024 * 1024;
/** Rough memory per file entry beyond its strings: objects, header objects, Map slot. */
const ENTRY_OVERHEAD_BYTES = 1200;
/** Parsed rules hold several objects per source character line; charge generously. */
const RULES_BYTES_PER_SOURCE_BYTE = 8;

const NOSNIFF = 'nosniff';
const VARY_ENCODING = 'Accept-Encoding';
/** Custom 404 pages: storable, but revalidated like HTML (RFC 9111 §5.2.2). */
const NOT_FOUND_CACHE_CONTROL = 'public, max-age=0, must-revalidate';

interface FileRow {
  path: string;
  size: number;
  content_type: string;
  hash: string | null;
}

/** A manifest row as the hot path serves it, with its identity headers computed once. */
export function buildFileEntry(
  row: FileRow & { hash: string },
  lastModifiedMs: number,
  lastModified: string,
): FileEntry {
  const size = row.size;
  const contentType = contentTypeHeader(row.content_type);
  const compressible =
    isCompressible(contentType) && size >= COMPRESS_MIN_BYTES && size <= COMPRESS_MAX_BYTES;
  const cacheControl = cacheControlFor(row.path, contentType);
  const etag = `"${row.hash}"`;
  const ok: OutgoingHttpHeaders = {
    'Content-Type': contentType,
    'Content-Length': String(size),
    ETag: etag,
    'Last-Modified': lastModified,
    'Cache-Control': cacheControl,
    'Accept-Ranges': 'bytes',
    'X-Content-Type-Options': NOSNIFF,
  };
  const notModified: OutgoingHttpHeaders = {
    ETag: etag,
    'Last-Modified': lastModified,
    'Cache-Control': cacheControl,
  };
  // RFC 9110 §12.5.5: a response chosen by Accept-Encoding says so, identity responses included
  // (DESIGN: always on compressible types, so caches never hand br bytes to a client without br).
  if (isCompressible(contentType)) {
    ok.Vary = VARY_ENCODING;
    notModified.Vary = VARY_ENCODING;
  }
  return {
    kind: 'file',
    path: row.path,
    hash: row.hash,
    size,
    contentType,
    compressible,
    lastModifiedMs,
    identity: { encoding: null, etag, size, bodyKey: row.hash, ok, notModified },
    br: compressible ? undefined : null,
    gzip: compressible ? undefined : null,
    custom: null,
  };
}

/** The representation of `entry` in `encoding` once its compressed length is known. */
export function variantRepresentation(entry: FileEntry, encoding: Encoding, size: number): Representation {
  const etag = `"${entry.hash}-${encoding}"`;
  const base = entry.identity.ok;
  const ok: OutgoingHttpHeaders = {
    'Content-Type': base['Content-Type'],
    'Content-Length': String(size),
    'Content-Encoding': encoding,
    ETag: etag,
    'Last-Modified': base['Last-Modified'],
    'Cache-Control': base['Cache-Control'],
    // No Accept-Ranges: ranges are served from the identity representation only.
    Vary: VARY_ENCODING,
    'X-Content-Type-Options': NOSNIFF,
  };
  const notModified: OutgoingHttpHeaders = {
    ETag: etag,
    'Last-Modified': base['Last-Modified'],
    'Cache-Control': base['Cache-Control'],
    Vary: VARY_ENCODING,
  };
  return { encoding, etag, size, bodyKey: `${entry.hash}:${encoding}`, ok, notModified };
}

/**
 * `headers` with `extra` merged in: an extra field replaces the same field (names compared without
 * case), other fields are kept. Used for `_headers` (which may override Content-Type and Cache-Control).
 */
export function mergeHeaders(
  headers: OutgoingHttpHeaders,
  extra: ReadonlyArray<readonly [string, string]>,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (!extra.some(([n]) => n.toLowerCase() === lower)) out[name] = headers[name];
  }
  for (const [name, value] of extra) out[name] = value;
  return out;
}

/** The redirect or rewrite for a path, honouring Netlify's shadowing: unforced rules yield to files. */
export function redirectFor(manifest: VersionManifest, rawPath: string, fileMatches: boolean) {
  if (fileMatches) {
    return manifest.forcedRedirects.length === 0 ? null : matchRedirect(manifest.forcedRedirects, rawPath);
  }
  return manifest.redirects.length === 0 ? null : matchRedirect(manifest.redirects, rawPath);
}

export interface ManifestDeps {
  db: Db;
  blobs: BlobStore;
  logger: Logger;
}

/**
 * Loads a finalized version's manifest; null when the version does not exist or is not finalized (a
 * pending version is never served). Reads `_redirects` and `_headers` from the blob store and parses
 * them here, once per version.
 */
export async function loadVersionManifest(
  deps: ManifestDeps,
  versionId: string,
): Promise<VersionManifest | null> {
  const version = await findVersion(deps.db.kysely, versionId);
  if (version === undefined || version.status !== 'finalized') return null;
  const rows = await manifestFiles(deps.db.kysely, versionId);

  const finalizedAt = version.finalized_at ?? 0;
  const lastModified = new Date(finalizedAt).toUTCString();
  const files = new Map<string, FileEntry>();
  const serveFiles: { path: string; text: string }[] = [];
  let estimatedBytes = 0;
  for (const row of rows) {
    if (row.hash === null) continue; // not uploaded: cannot happen in a finalized version
    if (row.path === REDIRECTS_FILE || row.path === HEADERS_FILE) {
      const text = await readServeFile(deps, row.path, row.hash, row.size);
      if (text !== null) {
        serveFiles.push({ path: row.path, text });
        estimatedBytes += text.length * RULES_BYTES_PER_SOURCE_BYTE;
      }
      continue;
    }
    files.set(sitePathKey(row.path), buildFileEntry({ ...row, hash: row.hash }, finalizedAt, lastModified));
    estimatedBytes += ENTRY_OVERHEAD_BYTES + row.path.length * 4 + row.content_type.length * 2;
  }

  const rules = parseServeFiles(serveFiles);
  const notFound = files.get('404.html');
  const hasRootIndex = files.has('index.html');
  let soleFile: FileEntry | null = null;
  if (!hasRootIndex && files.size === 1) {
    const only = files.values().next().value!;
    if (!only.path.includes('/')) soleFile = only;
  }
  return {
    versionId,
    finalizedAt,
    files,
    redirects: rules.redirects,
    forcedRedirects: rules.redirects.filter((r) => r.force),
    headerRules: rules.headers,
    notFoundPage:
      notFound === undefined
        ? null
        : {
            entry: notFound,
            headers: {
              'Content-Type': notFound.contentType,
              'Content-Length': String(notFound.size),
              'Cache-Control': NOT_FOUND_CACHE_CONTROL,
              'X-Content-Type-Options': NOSNIFF,
            },
          },
    hasRootIndex,
    soleFile,
    estimatedBytes,
  };
}

async function readServeFile(
  deps: ManifestDeps,
  path: string,
  hash: string,
  size: number,
): Promise<string | null> {
  if (size > SERVE_FILE_MAX_BYTES) {
    deps.logger.warn({ path, size }, 'serve config file too large; ignored');
    return null;
  }
  try {
    return (await deps.blobs.read(hash)).toString('utf8');
  } catch (err) {
    // A missing blob will not come back: serve without the rules. Anything else may be transient, so the
    // load fails (500) and the next request retries rather than caching a manifest without its rules.
    if (!(err instanceof BlobNotFoundError)) throw err;
    deps.logger.error({ path, hash }, 'serve config file missing from the blob store; ignored');
    return null;
  }
}
