// The publish workflow the CLI and the MCP server share (DESIGN 13): local files (skip rules,
// .slipwayignore, streamed SHA-256 in parallel) -> manifest -> create or update -> upload what the
// server does not hold yet (largest first, bounded parallelism, jittered retries on 5xx and network
// errors, fresh addresses when they expired) -> finalize -> metadata. It reports progress as events and
// prints nothing; the state of a published folder (.slipway/: the site, the remembered file hashes) is the
// CLI's business, handed in as `KnownHashes`.

import { createHash } from 'node:crypto';
import { type BigIntStats, createReadStream, statSync } from 'node:fs';
import { open, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, extname, join } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import pLimit from 'p-limit';
import type { PublishReply, UploadEntry } from '../api/sites.js';
import { type ApiClient, ApiClientError, DEFAULT_UPLOAD_CONCURRENCY, NetworkError } from './api.js';

/** A file to publish: its manifest entry and a way to read its bytes (again, for a retry). */
export interface LocalFile {
  /** Path within the site, `/`-separated, no leading `/`. */
  path: string;
  size: number;
  contentType: string;
  /** SHA-256, 64 lowercase hex characters. */
  hash: string;
  /** The bytes: a fresh stream on every call, or a Buffer. */
  open(): NodeJS.ReadableStream | Buffer;
  /** The file on disk holding the bytes, if any: uploads read it with one reused buffer (memory flat). */
  diskPath?: string;
  /** Its stamp when `hash` may be remembered for it (see hashFile). */
  stamp?: FileStamp;
}

export type PublishEvent =
  | {
      kind: 'plan';
      uploads: number;
      skipped: number;
      /** Bytes to upload. */
      bytes: number;
      /** The site and its pending version (beyond the base shape: lets a caller remember a new slug early). */
      slug?: string;
      versionId?: string;
    }
  | { kind: 'uploaded'; path: string; bytes: number }
  /** `path` is empty for a retried API call (update, finalize). */
  | { kind: 'retry'; path: string; attempt: number; reason: string }
  | { kind: 'finalizing' };

export interface PublishOptions {
  /** Update this site (needs the owner's key); without it a new site is created. */
  slug?: string;
  /** The version the update is based on; the server answers 409 VERSION_CONFLICT if the live one differs. */
  baseVersionId?: string | null;
  title?: string;
  /** Expiry in seconds from now (owned sites only; anonymous sites expire after 24 h). */
  ttlSeconds?: number;
  /** Parallel uploads (default DEFAULT_UPLOAD_CONCURRENCY). */
  concurrency?: number;
  /** false: a preview (finalize with `live: false`; the live version stays). Default true. */
  live?: boolean;
  /** An alias of the site to point at the new version (owned sites). */
  alias?: string;
  onEvent?: (e: PublishEvent) => void;
}

export interface PublishOutcome {
  slug: string;
  siteUrl: string;
  versionId: string;
  /** The site's: `pending` after a preview of a site that has never been live. */
  status: 'active' | 'pending';
  /** The version's own permanent URL (`<slug>--<label>`). */
  previewUrl: string;
  /** Whether the version is now the live one (false for a preview). */
  live: boolean;
  /** Files whose bytes this run sent. */
  uploaded: number;
  /** Files the server already held (manifest files not uploaded). */
  skipped: number;
  anonymous: boolean;
  claimUrl?: string;
  claimToken?: string;
  expiresAt?: string;
}

/** Files hashed at once while collecting a folder. */
const HASH_CONCURRENCY = 16;
/** Tries of one upload or API call on 5xx and network errors (uploads: 408 and 429 too; the first one included). */
const MAX_ATTEMPTS = 5;
/** Backoff before retry n: up to BACKOFF_BASE_MS * 2^(n-1), capped, with jitter. */
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 8_000;
/** How often expired upload addresses are replaced before giving up. */
const MAX_REPLANS = 3;
/** Bytes looked at to tell text from binary when the name gives no content type. */
const SNIFF_BYTES = 8192;
const READ_CHUNK_BYTES = 256 * 1024;

/** Folders never published, at any depth (VCS data, dependencies, this tool's state). */
const ALWAYS_SKIPPED = new Set(['.git', 'node_modules', '.slipway']);
/**
 * Rules applied before `.slipwayignore` (which can undo them with `!name`): hidden files and folders
 * (`.env`, `.DS_Store`, `.slipwayignore` itself) stay private, except `.well-known` (RFC 8615).
 */
const DEFAULT_IGNORE_RULES = ['.*', '!.well-known', 'Thumbs.db'];
export const IGNORE_FILE = '.slipwayignore';

// ---- collecting files -------------------------------------------------------------------------

/**
 * What the file system says about a file, as git's index keeps it: writing a file changes its size,
 * mtime or ctime (utimes can put an mtime back, never a ctime), replacing it its inode. Nanoseconds and
 * inode numbers as decimal strings (they exceed 2^53).
 */
export interface FileStamp {
  size: number;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
}

/** Hashes remembered from an earlier collect (the CLI keeps them in `.slipway/`), asked before a file is read. */
export interface KnownHashes {
  /** The hash and content type of `path` if it still has `stamp`, else undefined (the file is read). */
  get(path: string, stamp: FileStamp): { hash: string; contentType: string } | undefined;
}

export interface CollectOptions {
  known?: KnownHashes;
  /** Called with each file read and hashed (not taken from `known`). */
  onHashed?: (path: string) => void;
}

/**
 * A file is remembered (given a `stamp`) only if its mtime is this much older than the moment it was read:
 * a write in the same clock tick as an earlier one leaves the mtime as it was, and a file system's tick
 * can be as coarse as 2 s (FAT).
 */
const RACY_MARGIN_NS = 2_000_000_000n;

/**
 * Every file under `dir` that is published: skips `.git`, `node_modules`, `.slipway`, hidden files
 * (but not `.well-known`) and what `.slipwayignore` (gitignore syntax) names; follows symbolic links.
 * Each file is hashed (streamed, in parallel) as soon as the walk finds it, unless `known` still has
 * its hash. Sorted by path.
 */
export async function collectDirectory(dir: string, options: CollectOptions = {}): Promise<LocalFile[]> {
  const rules = ignore().add(DEFAULT_IGNORE_RULES);
  const ignoreText = await readFile(join(dir, IGNORE_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  rules.add(ignoreText);
  const limit = pLimit(HASH_CONCURRENCY);
  const pending: Array<LocalFile | Promise<LocalFile>> = [];
  await walk(dir, rules, (rel, abs) => {
    const file = collectOne(rel, abs, options);
    pending.push(typeof file === 'function' ? limit(file) : file);
  });
  const files = await Promise.all(pending);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A file to send in an archive: its path in the site, where it is, its size when listed. */
export interface ListedFile {
  path: string;
  abs: string;
  size: number;
}

/**
 * The files under `dir` that a publish would send (the same skip rules and .slipwayignore as
 * collectDirectory), without reading them: what `publish --archive` packs. Sorted by path.
 */
export async function listDirectory(dir: string): Promise<ListedFile[]> {
  const rules = ignore().add(DEFAULT_IGNORE_RULES);
  const ignoreText = await readFile(join(dir, IGNORE_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  rules.add(ignoreText);
  const files: ListedFile[] = [];
  await walk(dir, rules, (path, abs) => {
    files.push({ path, abs, size: statSync(abs).size });
  });
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** One file, published under its own name. */
export async function collectFile(file: string, options: CollectOptions = {}): Promise<LocalFile[]> {
  const info = await stat(file);
  if (!info.isFile()) throw new Error(`${file} is not a file`);
  const one = collectOne(basename(file), file, options);
  return [typeof one === 'function' ? await one() : one];
}

/** Files given as text or base64 (e.g. by an MCP client); a leading `./` or `/` is dropped from paths. */
export function inlineFiles(
  files: Array<{ path: string; content: string; encoding?: 'utf8' | 'base64' }>,
): LocalFile[] {
  return files.map((f) => {
    const bytes = Buffer.from(f.content, f.encoding === 'base64' ? 'base64' : 'utf8');
    const path = f.path.replace(/^(?:\.?\/)+/, '');
    return {
      path,
      size: bytes.length,
      contentType: contentTypeOf(path, bytes),
      hash: createHash('sha256').update(bytes).digest('hex'),
      open: () => bytes,
    };
  });
}

async function walk(root: string, rules: Ignore, onFile: (rel: string, abs: string) => void): Promise<void> {
  // Real paths of the folders visited, so a symbolic link cycle ends.
  const visited = new Set<string>();
  const visit = async (absDir: string, relDir: string): Promise<void> => {
    const real = await realpath(absDir);
    if (visited.has(real)) return;
    visited.add(real);
    const entries = await readdir(absDir, { withFileTypes: true });
    const subdirs: Array<Promise<void>> = [];
    for (const entry of entries) {
      const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      const abs = join(absDir, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const target = await stat(abs).catch(() => undefined);
        if (!target) continue; // a dangling link
        isDir = target.isDirectory();
        isFile = target.isFile();
      }
      if (isDir) {
        if (!ALWAYS_SKIPPED.has(entry.name) && !rules.ignores(`${rel}/`)) subdirs.push(visit(abs, rel));
      } else if (isFile && !rules.ignores(rel)) {
        onFile(rel, abs);
      }
    }
    await Promise.all(subdirs);
  };
  await visit(root, '');
}

const stampOf = (s: BigIntStats): FileStamp => ({
  size: Number(s.size),
  mtimeNs: String(s.mtimeNs),
  ctimeNs: String(s.ctimeNs),
  ino: String(s.ino),
});

const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs && a.ino === b.ino;

/**
 * A file on disk as a LocalFile if `known` still has the hash for its stamp, else the work that reads and
 * hashes it, for the caller to schedule. The stat is synchronous: a few microseconds, where 1000 stats
 * through promises and the thread pool took 25 ms.
 */
function collectOne(
  path: string,
  abs: string,
  options: CollectOptions,
): LocalFile | (() => Promise<LocalFile>) {
  const before = stampOf(statSync(abs, { bigint: true }));
  const known = options.known?.get(path, before);
  if (known) return { path, size: before.size, ...known, ...onDisk(abs), stamp: before };
  return () => hashFile(path, abs, before, options);
}

const onDisk = (abs: string) => ({
  open: () => createReadStream(abs, { highWaterMark: READ_CHUNK_BYTES }),
  diskPath: abs,
});

/**
 * Reads and hashes a file through one buffer (fresh chunks per read let a 190 MB file take 40 MB more RSS).
 * Its stamp is kept (to be remembered) only when the file did not change while it was read and its mtime
 * is older than the racy margin.
 */
async function hashFile(
  path: string,
  abs: string,
  before: FileStamp,
  options: CollectOptions,
): Promise<LocalFile> {
  const readAt = BigInt(Date.now()) * 1_000_000n;
  const hasher = createHash('sha256');
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let size = 0;
  let head: Buffer | undefined;
  const handle = await open(abs, 'r');
  let after: FileStamp;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      const bytes = buffer.subarray(0, bytesRead);
      if (head === undefined) head = Buffer.from(bytes.subarray(0, SNIFF_BYTES));
      hasher.update(bytes);
      size += bytesRead;
    }
    after = stampOf(await handle.stat({ bigint: true }));
  } finally {
    await handle.close();
  }
  options.onHashed?.(path);
  const file: LocalFile = {
    path,
    size,
    contentType: contentTypeOf(path, head ?? Buffer.alloc(0)),
    hash: hasher.digest('hex'),
    ...onDisk(abs),
  };
  const settled = sameStamp(before, after) && after.size === size;
  if (settled && BigInt(after.mtimeNs) + RACY_MARGIN_NS < readAt) file.stamp = after;
  return file;
}

/**
 * What mime-types' `contentType` gives the extensions sites are made of. A publish of only these never
 * loads mime-types, whose database costs ~25 ms of every command's start (a one-file republish is
 * ~250 ms in all); test/client/publish.test.ts holds each one equal to mime-types.
 */
export const COMMON_CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/vnd.microsoft.icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.pdf': 'application/pdf',
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.csv': 'text/csv; charset=utf-8',
  '.zip': 'application/zip',
  '.bin': 'application/octet-stream',
};

/** mime-types, loaded on the first extension COMMON_CONTENT_TYPES does not have. */
let mimeTypes: typeof import('mime-types') | undefined;

/** mime.contentType by extension (all it looks at), memoized: a folder has few, and a lookup costs ~15 µs. */
const typesByExtension = new Map<string, string | false>();

function typeByName(path: string): string | false {
  // mime-types' own reading of a name: `extname('x.' + name)`, lower case.
  const extension = extname(`x.${basename(path)}`).toLowerCase();
  let type = typesByExtension.get(extension);
  if (type === undefined) {
    type = COMMON_CONTENT_TYPES[extension] ?? mimeTypesModule().contentType(extension);
    typesByExtension.set(extension, type);
  }
  return type;
}

function mimeTypesModule(): typeof import('mime-types') {
  mimeTypes ??= createRequire(import.meta.url)('mime-types') as typeof import('mime-types');
  return mimeTypes;
}

/** The types of names without one, by their first bytes. */
const SNIFFED_TEXT = 'text/plain; charset=utf-8';
const SNIFFED_BINARY = 'application/octet-stream';

/**
 * The content type from the file name (text types with `charset=utf-8`); a name without a known type
 * (`_redirects`, `LICENSE`) is `text/plain; charset=utf-8` when its first bytes are UTF-8 text, else
 * `application/octet-stream`.
 */
export function contentTypeOf(path: string, head: Buffer): string {
  const byName = typeByName(path);
  if (byName) return byName;
  return looksLikeText(head) ? SNIFFED_TEXT : SNIFFED_BINARY;
}

/** Whether contentTypeOf gives `path` the type `type` for some bytes (checks a remembered type). */
export function isContentTypeFor(path: string, type: string): boolean {
  const byName = typeByName(path);
  return byName ? type === byName : type === SNIFFED_TEXT || type === SNIFFED_BINARY;
}

function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    // `stream: true` tolerates a character cut in half at the end of the sample.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * File names only a Slipway service's DATA_DIR holds (src/config.ts): the secrets key that decrypts
 * site variables, the embedded database (accounts, key hashes, sessions) and the dev outbox (sign-in
 * codes). Publishing one would hand them to the world.
 */
const SERVICE_DATA_FILES = new Set([
  'secrets.key',
  'slipway.db',
  'slipway.db-wal',
  'slipway.db-shm',
  'slipway.db-journal',
  'outbox.log',
]);

/** The files among `files` that belong to a Slipway service's DATA_DIR (empty when there are none). */
export function serviceDataFiles(files: Array<{ path: string }>): string[] {
  return files.filter((f) => SERVICE_DATA_FILES.has(f.path.split('/').pop() ?? '')).map((f) => f.path);
}

// ---- publishing -------------------------------------------------------------------------------

/**
 * Creates a site (no `slug`) or a new version of one, uploads what the server asks for, finalizes, then
 * sets `title` (on update) and `ttlSeconds` through the metadata endpoint. Empty files are left out (the
 * service stores none). Throws ApiClientError (e.g. SECRET_DETECTED from finalize, VERSION_CONFLICT)
 * or NetworkError; nothing goes live unless finalize succeeds.
 */
export async function publishFiles(
  client: ApiClient,
  files: LocalFile[],
  options: PublishOptions = {},
): Promise<PublishOutcome> {
  const emit = options.onEvent ?? (() => {});
  const manifestFiles = files.filter((f) => f.size > 0);
  if (manifestFiles.length === 0) throw new Error('Nothing to publish: every file is empty.');
  if (!client.apiKey && options.slug !== undefined) {
    throw new Error('Updating a site needs its owner\u2019s API key; sign in first.');
  }
  if (!client.apiKey && options.ttlSeconds !== undefined) {
    throw new Error('An expiry can only be set on an owned site; anonymous sites expire after 24 hours.');
  }
  const byPath = new Map(manifestFiles.map((f) => [f.path, f]));
  const manifest = manifestFiles.map(({ path, size, contentType, hash }) => ({
    path,
    size,
    contentType,
    hash,
  }));
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULT_UPLOAD_CONCURRENCY));

  const update = (slug: string, baseVersionId: string | null | undefined) =>
    withRetries(
      () =>
        client.updateSite(slug, manifest, {
          ...(baseVersionId !== undefined ? { baseVersionId } : {}),
        }),
      (attempt, reason) => emit({ kind: 'retry', path: '', attempt, reason: `update: ${reason}` }),
    );
  let answer: PublishReply;
  let baseVersionId = options.baseVersionId;
  if (options.slug !== undefined) {
    answer = await update(options.slug, baseVersionId);
  } else {
    // Only a 503 is retried: any other failure may have created the site, and a second one would be a twin.
    answer = await withRetries(
      () => client.createSite(manifest, options.title !== undefined ? { title: options.title } : undefined),
      (attempt, reason) => emit({ kind: 'retry', path: '', attempt, reason: `create: ${reason}` }),
      (err) => err instanceof ApiClientError && err.status === 503,
    );
    // A re-plan of a site this run created is an update of a site with no live version yet.
    baseVersionId = null;
  }
  const slug = answer.slug;
  emit({
    kind: 'plan',
    uploads: answer.upload.uploads.length,
    skipped: answer.upload.skipped.length,
    bytes: answer.upload.uploads.reduce((sum, u) => sum + (byPath.get(u.path)?.size ?? 0), 0),
    slug,
    versionId: answer.upload.versionId,
  });

  const uploaded = new Set<string>();
  for (let replans = 0; ; replans++) {
    const round = await uploadAll(client, answer.upload.uploads, byPath, concurrency, emit);
    for (const path of round.uploaded) uploaded.add(path);
    if (!round.expired) break;
    // The addresses expired mid-way (they live 3600 s): a new pending version whose plan skips what is
    // already stored, with fresh addresses for the rest. Anonymous sites cannot be updated.
    if (!client.apiKey || replans >= MAX_REPLANS) throw round.expired;
    emit({
      kind: 'retry',
      path: '',
      attempt: replans + 1,
      reason: 'upload addresses expired; asking for new ones',
    });
    answer = await update(slug, baseVersionId);
  }

  emit({ kind: 'finalizing' });
  const versionId = answer.upload.versionId;
  const finalizeOptions = {
    ...(options.live === false ? { live: false } : {}),
    ...(options.alias !== undefined ? { alias: options.alias } : {}),
  };
  const done = await withRetries(
    () => client.finalize(slug, versionId, finalizeOptions),
    (attempt, reason) => emit({ kind: 'retry', path: '', attempt, reason: `finalize: ${reason}` }),
  );

  const patch: Record<string, unknown> = {};
  if (options.slug !== undefined && options.title !== undefined) patch.title = options.title;
  if (options.ttlSeconds !== undefined) patch.ttlSeconds = options.ttlSeconds;
  if (Object.keys(patch).length > 0) await client.setMetadata(slug, patch);

  const outcome: PublishOutcome = {
    slug,
    siteUrl: done.siteUrl,
    versionId: done.versionId,
    status: done.status,
    previewUrl: done.previewUrl,
    live: done.live,
    uploaded: uploaded.size,
    skipped: manifest.length - uploaded.size,
    anonymous: answer.anonymous === true || answer.claimToken !== undefined,
  };
  if (answer.claimUrl !== undefined) outcome.claimUrl = answer.claimUrl;
  if (answer.claimToken !== undefined) outcome.claimToken = answer.claimToken;
  if (answer.expiresAt !== undefined) outcome.expiresAt = answer.expiresAt;
  if (options.ttlSeconds !== undefined) {
    const expiresAt = (await client.getSite(slug)).expiresAt;
    if (expiresAt) outcome.expiresAt = expiresAt;
  }
  return outcome;
}

interface UploadRound {
  uploaded: string[];
  /** The refusal of an expired address, if one was met (the round then stops early). */
  expired?: ApiClientError;
}

/** Uploads the entries, largest first, `concurrency` at a time; stops early on expiry or a fatal error. */
async function uploadAll(
  client: ApiClient,
  entries: UploadEntry[],
  byPath: Map<string, LocalFile>,
  concurrency: number,
  emit: (e: PublishEvent) => void,
): Promise<UploadRound> {
  const fileOf = (entry: UploadEntry): LocalFile => {
    const file = byPath.get(entry.path);
    if (!file) throw new Error(`The server asked for ${entry.path}, which is not in the manifest.`);
    return file;
  };
  const ordered = [...entries].sort((a, b) => fileOf(b).size - fileOf(a).size);
  const limit = pLimit(concurrency);
  const uploaded: string[] = [];
  let expired: ApiClientError | undefined;
  let failure: unknown;
  await Promise.all(
    ordered.map((entry) =>
      limit(async () => {
        if (expired || failure) return;
        const file = fileOf(entry);
        try {
          await withRetries(
            () =>
              client.upload(
                entry,
                file.diskPath !== undefined ? { file: file.diskPath } : file.open(),
                file.size,
              ),
            (attempt, reason) => emit({ kind: 'retry', path: entry.path, attempt, reason }),
            isUploadTransient,
          );
          uploaded.push(entry.path);
          emit({ kind: 'uploaded', path: entry.path, bytes: file.size });
        } catch (err) {
          if (isExpiredAddress(err)) expired ??= err;
          else failure ??= err;
        }
      }),
    ),
  );
  if (failure) throw failure;
  return expired ? { uploaded, expired } : { uploaded };
}

/** An expired upload address: 403 FORBIDDEN with `reason: "expired"` in the error body. */
export function isExpiredAddress(err: unknown): err is ApiClientError {
  return (
    err instanceof ApiClientError &&
    err.status === 403 &&
    err.code === 'FORBIDDEN' &&
    err.body.reason === 'expired'
  );
}

/** 5xx answers and network failures are worth another try; 4xx answers are not. */
function isTransient(err: unknown): boolean {
  return err instanceof NetworkError || (err instanceof ApiClientError && err.status >= 500);
}

/**
 * An upload may also be tried again after 408 (the server cut a body that stalled on a poor link) and 429
 * (more uploads at once from this address than the server takes; uploads are not rate limited otherwise).
 */
function isUploadTransient(err: unknown): boolean {
  return isTransient(err) || (err instanceof ApiClientError && (err.status === 408 || err.status === 429));
}

/** Runs `call`, retrying transient failures with exponential backoff and jitter. */
async function withRetries<T>(
  call: () => Promise<T>,
  onRetry: (attempt: number, reason: string) => void,
  retryable: (err: unknown) => boolean = isTransient,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !retryable(err)) throw err;
      onRetry(attempt, describeFailure(err));
      const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      // "Equal jitter": at least half the ceiling, so retries never bunch up at zero.
      await new Promise((resolve) => setTimeout(resolve, ceiling / 2 + Math.random() * (ceiling / 2)));
    }
  }
}

function describeFailure(err: unknown): string {
  if (err instanceof ApiClientError) return `HTTP ${err.status} ${err.code}: ${err.message}`;
  return (err as Error).message;
}
