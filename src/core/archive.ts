// Deploying a site in one request from a gzip-compressed tar (CONTRACT "Archive deploys"). The body streams
// through gunzip and the tar reader (core/tar.ts); each regular file's bytes go straight to the blob store,
// hashed (and scanned for secrets when they are browser-delivered text) as they pass, with the limits of the
// manifest checked per entry before its bytes are read. Then the ordinary publish runs with the computed
// hashes: createSite/updateSite (every manifest rule, plan limits, dedup against the site's stored blobs),
// the files are recorded as stored, and finalizeSite (secret scan, checks). A refusal at any step leaves no
// live change, no new version and no new site; the blobs already written are unreferenced, indexed with a
// fresh time, and left to the collector (which spares them BLOB_MIN_AGE_MS, as it does an upload's).

import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import mime from 'mime-types';
import type { FinalizeReply } from '../api/sites.js';
import { sitePathKey } from '../shared/rules/paths.js';
import type { BlobBatch } from '../store/blob/types.js';
import type { BlobScanTable } from '../store/db/schema.js';
import { type AccountRow, accountUsage } from '../store/db/tables/account.js';
import { findLiveSite, tombstoneSite } from '../store/db/tables/site.js';
import { abandonVersion, findVersion, markExpectedStored, touchBlobs } from '../store/db/tables/version.js';
import { checkAliasName } from './aliases.js';
import { recordAudit } from './audit.js';
import { ApiError, invalid } from './errors.js';
import { formatBytes } from './format.js';
import { MAX_MANIFEST_FILES, MAX_PATH_CHARS, type ManifestFile, pathProblem } from './manifest.js';
import {
  ANONYMOUS_ALIAS,
  checkSiteLimit,
  createSite,
  type FinalizeOptions,
  finalizeSite,
  limitsFor,
  ownedSite,
  type PublishDeps,
  type PublishResult,
  storageExceeded,
  updateSite,
} from './publish.js';
import { isScannable, ScanSession } from './scan/scanner.js';
import { scanRecord } from './scan/site-scan.js';
import { badArchive, type TarEntry, TarReader } from './tar.js';

/**
 * What an archive may carry besides its files' bytes: a header (and pax or long-name records) per entry,
 * padding to 512 bytes, the end blocks, gzip's framing (5 bytes per 64 KiB of incompressible data). 16 MiB
 * is far above what 1000 files and their folders need (~3 MB with long names).
 */
export const ARCHIVE_OVERHEAD_BYTES = 16 * 1024 * 1024;
/** Entries of any kind: the files, their folders, and pax records, with room to spare. */
export const MAX_ARCHIVE_ENTRIES = 10 * MAX_MANIFEST_FILES;
/** Header, pax and long-name bytes in all (bounds a gzip bomb of empty headers). */
const MAX_META_BYTES = 8 * 1024 * 1024;
/** What may follow the end-of-archive block (tar pads to its 10,240-byte record; some writers more). */
const MAX_TRAILING_BYTES = 1024 * 1024;
/** The media types an archive body may be sent with. */
export const ARCHIVE_MEDIA_TYPES = ['application/gzip', 'application/x-gzip'];
/** Bytes kept from a file's start to tell text from binary when its name gives no type. */
const SNIFF_BYTES = 8192;

/** The largest archive body (compressed) a caller on these limits may send. */
export const archiveByteLimit = (maxStorageBytes: number) => maxStorageBytes + ARCHIVE_OVERHEAD_BYTES;

export interface ArchiveRequest {
  body: AsyncIterable<Uint8Array | string>;
  /** Content-Length header, when the body is not chunked. */
  contentLength: string | undefined;
  /**
   * Asked again once the archive has been read, before anything is published: the caller's key or deploy
   * token must still be valid (a token revoked, or a key regenerated, during a long upload stops it then).
   */
  stillAuthorized?: () => Promise<void>;
}

export type ArchiveResult = FinalizeReply & {
  /** Files whose bytes this archive brought (not held by the site before). */
  uploaded: number;
  /** Files the site already held (the spec's hash_match). */
  skipped: number;
  claimToken?: string;
  claimUrl?: string;
  expiresAt?: string;
  anonymous?: true;
};

/**
 * POST /api/v1/publish/:slug/archive (`slug`: a new version of an owned site) and POST
 * /api/v1/publish/archive (`slug` null: a new site, anonymous when `account` is null).
 */
export async function deployArchive(
  deps: PublishDeps,
  account: AccountRow | null,
  slug: string | null,
  req: ArchiveRequest,
  options: FinalizeOptions = {},
): Promise<ArchiveResult> {
  const limits = limitsFor(deps, account);
  // What can be refused before a byte is read, is: an unknown site, the site limit, a body too large, an
  // alias finalize would refuse (otherwise a whole archive is stored, and a site made and tombstoned, first).
  if (options.alias !== undefined) {
    if (slug !== null) checkAliasName(slug, options.alias);
    else if (account === null) throw invalid(ANONYMOUS_ALIAS);
  }
  let replacedBytes = 0;
  if (slug !== null) {
    const site = await ownedSite(deps, account!, slug);
    const current = site.current_version_id
      ? await findVersion(deps.db.kysely, site.current_version_id)
      : undefined;
    replacedBytes = current?.total_size ?? 0;
  } else if (account) {
    await checkSiteLimit(deps, account);
  }
  const maxBody = archiveByteLimit(limits.maxStorageBytes);
  if (req.contentLength !== undefined && Number(req.contentLength) > maxBody) {
    throw tooLarge(Number(req.contentLength), maxBody);
  }
  const used = account ? (await accountUsage(deps.db.kysely, account.id)).storageBytes : 0;
  const storageLeft = limits.maxStorageBytes - (used - replacedBytes);

  const files = await storeEntries(deps, req.body, {
    maxBody,
    maxFileSizeBytes: limits.maxFileSizeBytes,
    storageLeft,
    storageLimit: limits.maxStorageBytes,
    storageUsedElsewhere: used - replacedBytes,
  });
  await req.stillAuthorized?.();

  // The ordinary publish, with the hashes just computed: every manifest rule, limit and the dedup apply.
  const body = {
    files: files.map(({ path, size, contentType, hash }) => ({ path, size, contentType, hash })),
  };
  const created = slug === null;
  const published: PublishResult = created
    ? await createSite(deps, account, body)
    : await updateSite(deps, account!, slug, body);
  const versionId = published.upload.versionId;
  let reply: FinalizeReply;
  try {
    await markExpectedStored(deps.db.kysely, versionId);
    reply = await finalizeSite(deps, account, published.slug, versionId, options);
  } catch (err) {
    await discard(deps, published.slug, versionId, created).catch(() => {});
    throw err;
  }
  const result: ArchiveResult = {
    ...reply,
    uploaded: published.upload.uploads.length,
    skipped: published.upload.skipped.length,
  };
  if (published.anonymous) {
    Object.assign(result, { ...published.anonymous, anonymous: true as const });
  }
  return result;
}

/** A refused deploy leaves nothing: the version it made is abandoned, a site it made is deleted. */
async function discard(deps: PublishDeps, slug: string, versionId: string, created: boolean): Promise<void> {
  // A failure after the finalize committed (announcing the change) leaves what it published in place.
  if ((await findVersion(deps.db.kysely, versionId))?.status === 'finalized') return;
  if (created) {
    await deps.db.transaction(async (trx) => {
      const owner = (await findLiveSite(trx, slug))?.owner_id ?? null;
      const now = deps.clock.now();
      await tombstoneSite(trx, slug, now);
      if (owner !== null) {
        await recordAudit(trx, {
          accountId: owner,
          action: 'site.delete',
          target: slug,
          details: { reason: 'archive deploy refused' },
          at: now,
        });
      }
    });
    await deps.changes.publish({ kind: 'site', slug });
  } else {
    await abandonVersion(deps.db.kysely, versionId);
  }
}

const tooLarge = (bytes: number, max: number) =>
  invalid(
    `The archive is ${formatBytes(bytes)} (${bytes} bytes); this account may send at most ${formatBytes(max)} (${max} bytes): its plan's storage and the archive's overhead.`,
    { status: 413 },
  );

interface StreamLimits {
  maxBody: number;
  maxFileSizeBytes: number;
  storageLeft: number;
  storageLimit: number;
  storageUsedElsewhere: number;
}

interface StoredFile extends ManifestFile {
  hash: string;
  /** When its bytes were stored, and its scan result (browser-delivered text): for the blob index. */
  now: number;
  scan?: BlobScanTable;
}

/**
 * Files whose bytes are being finished (closing the temp file; on S3 the last multipart part and the blob
 * index) while the next entries are read: the archive arrives in order, but one file's finish need not
 * hold up the next file's bytes.
 */
const COMMITS_IN_FLIGHT = 16;
/**
 * Files stored without a batch (S3: each PUT is durable) are indexed this many at a time, one statement
 * for them all rather than one round trip each; a crash can leave at most this many (plus those in flight)
 * stored but unindexed: space, never a broken site.
 */
const INDEX_GROUP = 64;

/** Reads the archive to its end, storing each file's bytes; the manifest entries of the files. */
async function storeEntries(
  deps: PublishDeps,
  body: AsyncIterable<Uint8Array | string>,
  limits: StreamLimits,
): Promise<StoredFile[]> {
  const gunzip = createGunzip();
  // Errors of the body (too slow, the client gone, too large) reach the reader through gunzip.
  pipeline(countBytes(body, limits.maxBody), gunzip, () => {});
  const reader = new TarReader(gunzip, { maxEntries: MAX_ARCHIVE_ENTRIES, maxMetaBytes: MAX_META_BYTES });
  /** In archive order (commits end in any order). */
  const files: StoredFile[] = [];
  let count = 0;
  const seen = new Map<string, string>();
  const commits = new Set<Promise<void>>();
  let failed: { err: unknown } | undefined;
  let total = 0;
  // One flush for every file of the archive where the store has it (the disk store: one syncfs instead of
  // four fsyncs per file); each file's put otherwise.
  const batch = deps.blobs.batch?.();
  /** Without a batch: files stored but not yet in the blob index, and the index writes under way. */
  const unindexed: StoredFile[] = [];
  let indexing: Promise<void> = Promise.resolve();
  const indexStored = async () => {
    const group = unindexed.splice(0);
    if (group.length > 0) await touchBlobs(deps.db, group);
  };
  const indexNow = (): Promise<void> => {
    indexing = indexing.then(indexStored);
    return indexing;
  };
  let committed = false;
  try {
    for (let entry = await reader.next(); entry !== null; entry = await reader.next()) {
      if (failed) throw failed.err;
      if (entry.type === 'directory') {
        directoryPath(entry);
        continue;
      }
      if (entry.type !== 'file') throw refusedType(entry);
      const path = filePath(entry);
      const key = sitePathKey(path);
      const earlier = seen.get(key);
      if (earlier !== undefined) {
        throw new ApiError(
          'INVALID_PATH',
          `Archive entry ${JSON.stringify(entry.name)}: ${JSON.stringify(path)} appears twice in the archive${earlier === path ? '' : ` (as ${JSON.stringify(earlier)}, the same name in another Unicode normalization)`}; each path may appear once.`,
          { extra: { entry: entry.name } },
        );
      }
      seen.set(key, path);
      if (entry.size > limits.maxFileSizeBytes) {
        throw new ApiError(
          'FILE_TOO_LARGE',
          `Archive entry ${JSON.stringify(entry.name)}: ${formatBytes(entry.size)} (${entry.size} bytes) is over the per-file limit of ${formatBytes(limits.maxFileSizeBytes)} (${limits.maxFileSizeBytes} bytes).`,
          { extra: { entry: entry.name } },
        );
      }
      // The service stores no empty file (the CLI leaves them out of a publish too).
      if (entry.size === 0) continue;
      if (count >= MAX_MANIFEST_FILES) {
        throw invalid(
          `The archive holds more than ${MAX_MANIFEST_FILES} files (the limit of files per site); refused at ${JSON.stringify(entry.name)}.`,
          { extra: { entry: entry.name } },
        );
      }
      total += entry.size;
      if (total > limits.storageLeft) {
        throw storageExceeded(limits.storageLimit, limits.storageUsedElsewhere + total);
      }
      const slot = count++;
      const { read, stored } = storeFile(deps, batch, reader, path, entry.size);
      // The entry's bytes are read before the next entry is; its commit may go on meanwhile.
      await read;
      const commit = stored.then(
        (file) => {
          files[slot] = file;
          if (!batch) {
            // Stored for good already (each put is): indexed in groups, so the collector can find them.
            unindexed.push(file);
            if (unindexed.length >= INDEX_GROUP) void indexNow().catch(() => {});
          }
        },
        (err: unknown) => {
          failed ??= { err };
        },
      );
      commits.add(commit);
      void commit.finally(() => commits.delete(commit));
      if (commits.size >= COMMITS_IN_FLIGHT) await Promise.race(commits);
    }
    await reader.finish(MAX_TRAILING_BYTES);
    await Promise.all(commits);
    if (failed) throw failed.err;
    await indexNow();
    if (batch) {
      // Indexed before they are visible, in one transaction: the collector walks the index, so no stored
      // blob is left out of it (an indexed hash whose bytes never arrive is collected harmlessly).
      await touchBlobs(deps.db, files);
      await batch.commit();
    }
    committed = true;
  } catch (err) {
    throw asArchiveError(err);
  } finally {
    // Stops reading the body: the rest is drained or the connection closed after the answer.
    gunzip.destroy();
    // Nothing is left running after the answer (a refusal waits for the commits under way).
    await Promise.all(commits);
    if (!committed) await batch?.discard();
    // A refused or broken-off archive's stored files are indexed too: unreferenced, they are collected.
    if (!batch) await indexNow().catch(() => {});
  }
  if (count === 0) {
    throw invalid('The archive holds no file with content: nothing to publish.', {
      hint: 'Directories and empty files are left out; archive the site folder, e.g. `tar -czf site.tar.gz -C dist .`.',
    });
  }
  return files;
}

/**
 * One file's bytes into the blob store, hashed and (browser-delivered text) scanned as they pass: `read`
 * settles once its bytes have been read from the archive (or the store failed), `stored` once they are
 * committed and indexed.
 */
function storeFile(
  deps: PublishDeps,
  batch: BlobBatch | undefined,
  reader: TarReader,
  path: string,
  size: number,
): { read: Promise<void>; stored: Promise<StoredFile> } {
  const named = typeByName(path);
  const scan = isScannable(path, named || 'application/octet-stream') ? new ScanSession() : null;
  const head: Uint8Array[] = [];
  let headBytes = 0;
  let markRead!: () => void;
  const read = new Promise<void>((resolve) => {
    markRead = resolve;
  });
  async function* passing(): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of reader.body()) {
        if (!named && headBytes < SNIFF_BYTES) {
          const part = chunk.subarray(0, SNIFF_BYTES - headBytes);
          head.push(Uint8Array.from(part));
          headBytes += part.length;
        }
        if (scan) await scan.push(chunk);
        yield chunk;
      }
    } finally {
      markRead();
    }
  }
  const stored = (async () => {
    try {
      const put = await (batch ?? deps.blobs).put(passing(), { expectedSize: size });
      const now = deps.clock.now();
      const record = scan ? scanRecord(put.hash, await scan.finish(), now) : undefined;
      const contentType = named || (looksLikeText(Buffer.concat(head)) ? SNIFFED_TEXT : SNIFFED_BINARY);
      return { path, size, contentType, hash: put.hash, now, ...(record ? { scan: record } : {}) };
    } finally {
      markRead();
    }
  })();
  return { read, stored };
}

/** Counts the (compressed) body's bytes, refusing past `max`; strings as UTF-8. */
async function* countBytes(
  body: AsyncIterable<Uint8Array | string>,
  max: number,
): AsyncGenerator<Uint8Array> {
  let seen = 0;
  for await (const raw of body) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    seen += chunk.length;
    if (seen > max) throw tooLarge(seen, max);
    yield chunk;
  }
}

/** zlib's and the connection's failures as the spec's error body; ApiErrors and body-pace errors as they are. */
function asArchiveError(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (code === 'Z_BUF_ERROR' || (err as Error).message === 'unexpected end of file') {
    return badArchive('The archive is truncated: the gzip stream ends early.');
  }
  if (code.startsWith('Z_')) {
    return badArchive(`The body is not valid gzip data (${(err as Error).message}).`);
  }
  if (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (err as Error).message === 'aborted'
  ) {
    return badArchive('The request body was cut off before the archive ended; nothing was published.');
  }
  return err;
}

const KINDS: Record<string, string> = {
  symlink: 'a symbolic link',
  hardlink: 'a hard link',
  'character-device': 'a character device',
  'block-device': 'a block device',
  fifo: 'a FIFO',
};

function refusedType(entry: TarEntry): ApiError {
  const kind = KINDS[entry.type] ?? `of an unsupported type (typeflag ${JSON.stringify(entry.typeflag)})`;
  return invalid(
    `Archive entry ${JSON.stringify(entry.name)} is ${kind}; an archive deploy takes regular files and folders only, so nothing was published.`,
    {
      extra: { entry: entry.name },
      hint: 'Archive the files themselves (GNU tar: --dereference / -h follows links).',
    },
  );
}

/** Refuses an absolute name or a `..` segment in any entry (a folder too: it shows what the archive is). */
function checkTraversal(entry: TarEntry, segments: string[]): void {
  const name = JSON.stringify(entry.name);
  if (entry.name.startsWith('/')) {
    throw new ApiError(
      'INVALID_PATH',
      `Archive entry ${name} is an absolute path; entries must be relative.`,
      {
        extra: { entry: entry.name },
      },
    );
  }
  if (segments.includes('..')) {
    throw new ApiError(
      'INVALID_PATH',
      `Archive entry ${name} has a ".." segment; entries must stay inside the site.`,
      {
        extra: { entry: entry.name },
      },
    );
  }
}

/** `./` prefixes (what `tar -C dir .` writes) dropped. */
const withoutDotPrefix = (name: string) => name.replace(/^(?:\.\/)+/, '');

function directoryPath(entry: TarEntry): void {
  checkTraversal(entry, entry.name.split('/'));
}

function filePath(entry: TarEntry): string {
  checkTraversal(entry, entry.name.split('/'));
  const path = withoutDotPrefix(entry.name);
  const problem = pathProblem(path, MAX_PATH_CHARS);
  if (problem !== undefined) {
    throw new ApiError('INVALID_PATH', `Archive entry ${JSON.stringify(entry.name)}: path ${problem}.`, {
      extra: { entry: entry.name },
    });
  }
  return path;
}

// ---- content types (the CLI's rule, src/client/publish.ts contentTypeOf: the same file gets the same type
// whichever way it is published) ----------------------------------------------------------------------

const SNIFFED_TEXT = 'text/plain; charset=utf-8';
const SNIFFED_BINARY = 'application/octet-stream';

/** By extension (mime-types, text types with `charset=utf-8`), false for a name without a known type. */
function typeByName(path: string): string | false {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  // mime-types' own reading: the extension of `x.<name>`, so `.htaccess` is "htaccess".
  const extension = dot === -1 ? base : base.slice(dot + 1);
  return mime.contentType(`.${extension.toLowerCase()}`);
}

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}
