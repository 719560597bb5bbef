// Local-disk BlobStore: `<root>/blobs/ab/cd/<sha256>`, written via fsynced temp files and atomic commits.

import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as fsConstants, readFile as readFileCallback, readFileSync } from 'node:fs';
import { access, type FileHandle, link, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { type Clock, systemClock } from '../../shared/clock.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../data-dir.js';
import { assertPutOptions, assertValidRange, readVerified } from './body.js';
import {
  assertSha256Hex,
  type BlobBatch,
  BlobNotFoundError,
  type BlobStat,
  type BlobStore,
  type GetOptions,
  isSha256Hex,
  type PutOptions,
  type PutResult,
} from './types.js';

/** The file a running backup keeps fresh in DATA_DIR (src/cli/backup.ts BACKUP_HOLD_FILE). */
export const BACKUP_HOLD_FILE = 'backup.hold';
/** A hold not refreshed for this long is a dead backup's. */
export const BACKUP_HOLD_STALE_MS = 2 * 60 * 1000;

/** Temp files older than this are leftovers of a crash and are removed by init(). */
export const STALE_TMP_AGE_MS = 60 * 60 * 1000;

const TMP_DIR_NAME = 'tmp';
const TMP_NAME_RANDOM_BYTES = 16;
const FAN_OUT_RE = /^[0-9a-f]{2}$/;
/** link(2) failures meaning "this filesystem has no hard links": fall back to rename(2). */
const LINK_UNSUPPORTED_CODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

export interface DiskBlobStoreOptions {
  /** Time source for the stale-temp-file rule (tests move it instead of aging files). */
  clock?: Clock;
}

export class DiskBlobStore implements BlobStore {
  readonly rootDir: string;
  private readonly blobsDir: string;
  private readonly tmpDir: string;
  private readonly clock: Clock;
  private dirsReady: Promise<void> | undefined;
  /** Fan-out dirs whose entries this process has created or fsynced (so a commit can skip mkdir/fsync). */
  private readonly durableFanOutDirs = new Set<string>();

  constructor(rootDir: string, options: DiskBlobStoreOptions = {}) {
    this.rootDir = resolve(rootDir);
    this.blobsDir = join(this.rootDir, 'blobs');
    this.tmpDir = join(this.blobsDir, TMP_DIR_NAME);
    this.clock = options.clock ?? systemClock;
  }

  /** Creates the directories and removes temp files left by a crash (older than STALE_TMP_AGE_MS). */
  async init(): Promise<void> {
    await this.ensureDirs();
    const cutoffMs = this.clock.now() - STALE_TMP_AGE_MS;
    for (const name of await readdirOrEmpty(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      try {
        const s = await stat(path);
        if (s.isFile() && s.mtimeMs < cutoffMs) await rm(path, { force: true });
      } catch (err) {
        if (errCode(err) !== 'ENOENT') throw err;
      }
    }
  }

  localPath(hash: string): string {
    assertSha256Hex(hash);
    return join(this.blobsDir, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  async has(hash: string): Promise<boolean> {
    return (await this.stat(hash)) !== null;
  }

  async stat(hash: string): Promise<BlobStat | null> {
    const path = this.localPath(hash);
    try {
      const s = await stat(path);
      return { size: s.size };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async put(
    body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
    options: PutOptions,
  ): Promise<PutResult> {
    const { tmpPath, put } = await this.writeTemp(body, options, true);
    try {
      await this.commit(tmpPath, put.hash);
    } catch (err) {
      await rm(tmpPath, { force: true }).catch(() => {});
      throw err;
    }
    return put;
  }

  /** Puts made durable by one filesystem flush at commit (see BlobBatch). */
  batch(): BlobBatch {
    const written: Array<{ tmpPath: string; hash: string }> = [];
    let state: 'open' | 'committing' | 'done' = 'open';
    const removeTemps = () =>
      Promise.all(written.map(({ tmpPath }) => rm(tmpPath, { force: true }).catch(() => {})));
    return {
      put: async (body, options) => {
        if (state !== 'open') throw new Error('BlobBatch.put after commit or discard');
        const { tmpPath, put } = await this.writeTemp(body, options, false);
        written.push({ tmpPath, hash: put.hash });
        return put;
      },
      commit: async () => {
        if (state !== 'open') throw new Error('BlobBatch.commit twice or after discard');
        state = 'committing';
        // The bytes first: a name must never point at bytes a crash could still lose.
        await this.flush(written.map((w) => ({ file: w.tmpPath })));
        const dirs = new Set<string>();
        await inPool(written, LINKS_IN_FLIGHT, async ({ tmpPath, hash }) => {
          dirs.add(dirname(this.localPath(hash)));
          await this.link(tmpPath, hash, false);
        });
        // Then the names (the fan-out dirs' entries, new dirs' entries in their parents).
        await this.flush([...dirs].map((dir) => ({ dir })));
        for (const dir of dirs) this.durableFanOutDirs.add(dir);
        state = 'done';
        await removeTemps();
      },
      discard: async () => {
        if (state === 'done') return;
        state = 'done';
        await removeTemps();
      },
    };
  }

  /** Streams `body` to a new temp file, verified (and fsynced when `durable`); the caller commits or removes it. */
  private async writeTemp(
    body: NodeJS.ReadableStream | AsyncIterable<Uint8Array>,
    options: PutOptions,
    durable: boolean,
  ): Promise<{ tmpPath: string; put: PutResult }> {
    assertPutOptions(options);
    await this.ensureDirs();

    const tmpPath = join(this.tmpDir, `${randomBytes(TMP_NAME_RANDOM_BYTES).toString('hex')}.tmp`);
    // 0600 (the blob keeps the temp file's inode): unpublished and password-protected files are private.
    const fh = await open(tmpPath, 'wx', PRIVATE_FILE_MODE);
    let fhOpen = true;
    try {
      const put = await readVerified(body, options, (chunk) => writeAll(fh, chunk));
      if (durable) await fh.sync();
      fhOpen = false;
      await fh.close();
      return { tmpPath, put };
    } catch (err) {
      if (fhOpen) await fh.close().catch(() => {});
      await rm(tmpPath, { force: true }).catch(() => {});
      throw err;
    }
  }

  /**
   * Makes written files and directory entries durable: one syncfs(2) of the filesystem (through `sync -f`,
   * which Node has no call for) when there are many, else (or where that fails) an fsync of each file,
   * and of each dir with its parents.
   */
  private async flush(items: Array<{ file: string } | { dir: string }>): Promise<void> {
    if (items.length === 0) return;
    if (items.length >= SYNCFS_MIN_ITEMS && (await syncFilesystem(this.rootDir))) return;
    const dirs = new Set<string>();
    const files: string[] = [];
    for (const item of items) {
      if ('file' in item) files.push(item.file);
      else {
        dirs.add(item.dir);
        dirs.add(dirname(item.dir));
      }
    }
    if (dirs.size > 0) dirs.add(this.blobsDir);
    await inPool([...files, ...dirs], LINKS_IN_FLIGHT, fsyncPath);
  }

  async get(hash: string, options: GetOptions = {}): Promise<NodeJS.ReadableStream> {
    const path = this.localPath(hash);
    const { start: wantStart, end: wantEnd } = options;
    assertValidRange(options);

    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) throw new BlobNotFoundError(hash);
      throw err;
    }
    try {
      // Size from the open handle: a concurrent delete cannot pull the bytes away from under us.
      const { size } = await fh.stat();
      const start = wantStart ?? 0;
      if (size === 0 && start === 0) {
        await fh.close();
        return Readable.from([]);
      }
      if (start >= size) throw new RangeError(`Range start ${start} is past the end of a ${size}-byte blob`);
      const end = Math.min(wantEnd ?? size - 1, size - 1);
      return fh.createReadStream({ start, end, autoClose: true });
    } catch (err) {
      await fh.close().catch(() => {});
      throw err;
    }
  }

  async read(hash: string, size?: number): Promise<Buffer> {
    const path = this.localPath(hash);
    try {
      // A small blob is read at once, as nginx reads files without aio: a thread-pool round trip cost more
      // than the read itself (issue 23: a cold site's first request, on a busy machine).
      if (size !== undefined && size <= SYNC_READ_MAX_BYTES) return readFileSync(path);
      return await readWhole(path);
    } catch (err) {
      if (isMissing(err)) throw new BlobNotFoundError(hash);
      throw err;
    }
  }

  async delete(hash: string): Promise<void> {
    // Fan-out dirs are kept: removing them would race with a concurrent commit into them.
    await rm(this.localPath(hash), { force: true });
  }

  /**
   * A backup puts DATA_DIR/backup.hold up before its database snapshot and refreshes its mtime every 10 s
   * until it has copied every blob the snapshot references; one older than BACKUP_HOLD_STALE_MS was left by
   * a backup that died, and holds nothing.
   */
  async deletionHeld(): Promise<boolean> {
    try {
      const s = await stat(join(this.rootDir, BACKUP_HOLD_FILE));
      // Wall time, as the file's mtime is (a test's movable clock ages blobs, not the backup's file).
      return Date.now() - s.mtimeMs < BACKUP_HOLD_STALE_MS;
    } catch (err) {
      if (errCode(err) === 'ENOENT') return false;
      throw err;
    }
  }

  async *list(): AsyncIterable<string> {
    for (const a of await readdirOrEmpty(this.blobsDir)) {
      if (!FAN_OUT_RE.test(a)) continue;
      for (const b of await readdirOrEmpty(join(this.blobsDir, a))) {
        if (!FAN_OUT_RE.test(b)) continue;
        for (const name of await readdirOrEmpty(join(this.blobsDir, a, b))) {
          if (isSha256Hex(name) && name.startsWith(a + b)) yield name;
        }
      }
    }
  }

  async ping(): Promise<void> {
    const mode = fsConstants.R_OK | fsConstants.W_OK;
    await access(this.blobsDir, mode);
    await access(this.tmpDir, mode);
  }

  /** Makes the fsynced temp file visible under its hash (a no-op when the blob already exists). */
  private async commit(tmpPath: string, hash: string): Promise<void> {
    await this.link(tmpPath, hash, true);
    // Also when the blob existed: a concurrent put may have linked it without having fsynced the dir yet.
    await fsyncDir(dirname(this.localPath(hash)));
    await rm(tmpPath, { force: true });
  }

  /** Links the temp file under its hash (an existing blob is left untouched); `durable` fsyncs new fan-out dirs. */
  private async link(tmpPath: string, hash: string, durable: boolean): Promise<void> {
    const finalPath = this.localPath(hash);
    const dir = dirname(finalPath);
    for (let attempt = 0; ; attempt++) {
      if (durable) await this.ensureFanOutDir(dir);
      else if (!this.durableFanOutDirs.has(dir))
        await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      try {
        // link(2), unlike rename(2), never replaces an existing name: an existing blob is left untouched.
        await link(tmpPath, finalPath);
        return;
      } catch (err) {
        const code = errCode(err);
        if (code === 'EEXIST') return;
        if (code === 'ENOENT' && attempt === 0) {
          this.durableFanOutDirs.delete(dir); // removed behind our back: recreate once
          continue;
        }
        if (code !== undefined && LINK_UNSUPPORTED_CODES.has(code)) {
          if (!(await pathExists(finalPath))) await rename(tmpPath, finalPath);
          return;
        }
        throw err;
      }
    }
  }

  private async ensureFanOutDir(dir: string): Promise<void> {
    if (this.durableFanOutDirs.has(dir)) return;
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // Make the entries `ab` (in blobs/) and `cd` (in ab/) durable, whoever created them.
    await fsyncDir(dirname(dir));
    await fsyncDir(this.blobsDir);
    this.durableFanOutDirs.add(dir);
  }

  private ensureDirs(): Promise<void> {
    this.dirsReady ??= (async () => {
      await mkdir(this.tmpDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      await fsyncDir(this.blobsDir);
      await fsyncDir(this.rootDir);
    })().catch((err: unknown) => {
      this.dirsReady = undefined;
      throw err;
    });
    return this.dirsReady;
  }
}

function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function isMissing(err: unknown): boolean {
  const code = errCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isMissing(err)) return [];
    throw err;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return; // directories cannot be opened for fsync there
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function fsyncPath(path: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** A batch flushes with one syncfs from this many items on (below it, fsyncs cost less than a process). */
const SYNCFS_MIN_ITEMS = 32;
/** Links and fsyncs a batch keeps under way at once (the thread pool has four threads). */
const LINKS_IN_FLIGHT = 16;
/** Whether `sync -f` worked here (undefined: not tried yet); a failure falls back to fsyncs for good. */
let syncfsWorks: boolean | undefined;

/** syncfs(2) of the filesystem holding `path`, through coreutils' `sync -f`; false where it is not available. */
async function syncFilesystem(path: string): Promise<boolean> {
  if (syncfsWorks === false || process.platform !== 'linux') return false;
  const ok = await new Promise<boolean>((resolve) => {
    execFile('sync', ['-f', path], { timeout: SYNCFS_TIMEOUT_MS }, (err) => resolve(err === null));
  });
  if (!ok && syncfsWorks === undefined) syncfsWorks = false;
  else if (ok) syncfsWorks = true;
  return ok;
}
const SYNCFS_TIMEOUT_MS = 60_000;

/** Runs `fn` over `items`, at most `limit` at once; the first failure rejects once all started have settled. */
async function inPool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && failure === undefined) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
}

async function writeAll(fh: FileHandle, chunk: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < chunk.byteLength) {
    const { bytesWritten } = await fh.write(chunk, offset, chunk.byteLength - offset);
    offset += bytesWritten;
  }
}

/** Blobs up to this size (known from a manifest) are read synchronously; larger ones in the thread pool. */
export const SYNC_READ_MAX_BYTES = 64 * 1024;

/**
 * The whole file, through fs.readFile's callback form: Node 20's fs/promises readFile takes several
 * thread-pool round trips per file and cost 3-4x the CPU for the small blobs a site's first request reads
 * (issue 23: 75 vs 22 us per 1 KB file on this machine).
 */
function readWhole(path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    readFileCallback(path, (err, bytes) => (err ? reject(err) : resolve(bytes)));
  });
}
