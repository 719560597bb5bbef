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
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { type FileStamp, isContentTypeFor, type KnownHashes, type LocalFile } from '../client/publish.js';
import { slipwayFile, writePrivate } from './state.js';

/** Bumped when the file's shape changes: a file of another format is ignored. */
const FORMAT = 1;

interface Entry extends FileStamp {
  hash: string;
  contentType: string;
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
  // Synchronous, as the walk's stats are: three thread-pool round trips cost more than the read.
  try {
    const fd = openSync(path, 'r');
    try {
      writtenNs = fstatSync(fd, { bigint: true }).mtimeNs;
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
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

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The file as writeHashes lays it out, `{"format":1,"sum":"<sha256>","files":{<path>: Entry, ...}}`: the
 * sum is the SHA-256 of the `files` text exactly as it stands (a file edited by anything but this module
 * does not match), so a reader hashes that slice instead of serialising 1000 parsed entries again (a
 * one-file republish of 1000 files spent ~5 ms in that JSON.stringify, each way). Any other layout is not
 * ours.
 */
const LAYOUT = new RegExp(`^\\{"format":${FORMAT},"sum":"([0-9a-f]{64})","files":(\\{.*\\})\\}\\n?$`, 's');

const DECIMAL = /^\d{1,30}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** The entries of a cache file, or undefined if any part of it is not what writeHashes writes. */
function parse(text: string): Map<string, Entry> | undefined {
  const layout = LAYOUT.exec(text);
  if (!layout || sha256(layout[2]!) !== layout[1]) return undefined;
  let files: Record<string, Entry>;
  try {
    files = JSON.parse(layout[2]!) as Record<string, Entry>;
  } catch {
    return undefined;
  }
  const entries = new Map<string, Entry>();
  for (const [path, e] of Object.entries(files)) {
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
  // JSON.stringify({format, sum, files}) with the files' text made once (LAYOUT).
  const text = JSON.stringify(entries);
  await writePrivate(path, `{"format":${FORMAT},"sum":"${sha256(text)}","files":${text}}\n`);
}

export async function forgetHashes(path: string): Promise<void> {
  await rm(path, { force: true });
}
