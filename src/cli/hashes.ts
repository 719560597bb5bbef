// The hashes `slipway publish` remembers for a folder's files, as git's index does: .slipway/hashes.json
// (for a single file, .slipway/hashes-<file name>.json next to it) maps each relative path to its size,
// mtime, ctime, inode, SHA-256 and content type, so the next publish reads only the files whose stamp
// changed. The cache is trusted as much as the folder it lives in; beyond that:
// - racy git: an entry whose mtime or ctime is not older than the cache file's own write time is not
//   used (a write in the same clock tick keeps the stamp), and hashFile remembers no file whose mtime
//   was within 2 s of the moment it was read;
// - a damaged, truncated, foreign (another format) or hand-edited file (its checksum no longer matches)
//   is ignored whole: every file is hashed again;
// - the service verifies every uploaded hash anyway, and `publish` answers INVALID_HASH by forgetting
//   the cache and hashing every file again.

import { createHash } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { type FileStamp, isContentTypeFor, type KnownHashes, type LocalFile } from '../client/publish.js';
import { slipwayFile, writePrivate } from './state.js';

/** Bumped when the file's shape changes: a file of another format is ignored. */
const FORMAT = 1;

interface Entry extends FileStamp {
  hash: string;
  contentType: string;
}

interface CacheFile {
  format: number;
  /** SHA-256 of JSON.stringify(files): a file edited by anything but this module does not match. */
  sum: string;
  files: Record<string, Entry>;
}

export interface RememberedHashes {
  known: KnownHashes;
  /** The cache file was there but could not be used (every file is hashed again). */
  damaged: boolean;
}

/** The hash cache of a published folder, or of a single published file. */
export function hashesPath(target: { dir: string } | { file: string }): string {
  return slipwayFile(target, 'hashes');
}

const NOTHING: KnownHashes = { get: () => undefined };

/** The hashes remembered at `path`; none when the file is missing, unreadable or unusable. */
export async function readHashes(path: string): Promise<RememberedHashes> {
  let text: string;
  let writtenNs: bigint;
  try {
    const handle = await open(path, 'r');
    try {
      writtenNs = (await handle.stat({ bigint: true })).mtimeNs;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    // Unreadable (a folder, no permission) is as good as damaged: it never stops a publish.
    return { known: NOTHING, damaged: (err as NodeJS.ErrnoException).code !== 'ENOENT' };
  }
  const entries = parse(text);
  if (!entries) return { known: NOTHING, damaged: true };
  return {
    damaged: false,
    known: {
      get(file, stamp) {
        const e = entries.get(file);
        if (!e || e.size !== stamp.size || e.ino !== stamp.ino) return undefined;
        if (e.mtimeNs !== stamp.mtimeNs || e.ctimeNs !== stamp.ctimeNs) return undefined;
        if (BigInt(stamp.mtimeNs) >= writtenNs || BigInt(stamp.ctimeNs) >= writtenNs) return undefined;
        return { hash: e.hash, contentType: e.contentType };
      },
    },
  };
}

const sumOf = (files: Record<string, Entry>) =>
  createHash('sha256').update(JSON.stringify(files)).digest('hex');

const DECIMAL = /^\d{1,30}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** The entries of a cache file, or undefined if any part of it is not what writeHashes writes. */
function parse(text: string): Map<string, Entry> | undefined {
  let doc: CacheFile;
  try {
    doc = JSON.parse(text) as CacheFile;
  } catch {
    return undefined;
  }
  if (doc === null || typeof doc !== 'object' || doc.format !== FORMAT) return undefined;
  if (doc.files === null || typeof doc.files !== 'object' || doc.sum !== sumOf(doc.files)) return undefined;
  const entries = new Map<string, Entry>();
  for (const [path, e] of Object.entries(doc.files)) {
    const valid =
      e !== null &&
      typeof e === 'object' &&
      Number.isSafeInteger(e.size) &&
      e.size >= 0 &&
      DECIMAL.test(e.mtimeNs) &&
      DECIMAL.test(e.ctimeNs) &&
      DECIMAL.test(e.ino) &&
      SHA256.test(e.hash) &&
      typeof e.contentType === 'string' &&
      isContentTypeFor(path, e.contentType);
    if (!valid) return undefined;
    entries.set(path, e);
  }
  return entries;
}

/** Remembers the hashes of `files` that carry a stamp (and only those: the cache holds what is present). */
export async function writeHashes(path: string, files: LocalFile[]): Promise<void> {
  // No prototype: a file named `__proto__` is an entry like any other.
  const entries: Record<string, Entry> = Object.create(null);
  for (const f of files) {
    if (f.stamp) entries[f.path] = { ...f.stamp, hash: f.hash, contentType: f.contentType };
  }
  const doc: CacheFile = { format: FORMAT, sum: sumOf(entries), files: entries };
  await writePrivate(path, `${JSON.stringify(doc)}\n`);
}

export async function forgetHashes(path: string): Promise<void> {
  await rm(path, { force: true });
}
