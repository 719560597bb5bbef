// DATA_DIR holds the embedded database (accounts, API key hashes, sessions), the blobs (password-protected
// and unpublished files too), the secrets key and the dev outbox (sign-in codes): it is the service user's
// alone. Everything Slipway creates there is 0700 (directories) or 0600 (files), whatever the umask; the
// SQLite -wal and -shm files take the database file's mode. A DATA_DIR left looser (by an older release,
// or created by hand or by systemd's StateDirectory= at 0755) is tightened at start-up: the directory and
// its direct entries, which covers every file of ours but the blobs, unreachable through a 0700 DATA_DIR.

import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
const PERMISSION_BITS = 0o777;

export interface ModeChange {
  path: string;
  /** Octal permission bits before and after (`"755"` -> `"700"`). */
  from: string;
  to: string;
  /** Set when the mode could not be changed (another owner): the warning says so. */
  error?: string;
}

/** Creates `dir` (and missing parents) as 0700. */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `file` empty as 0600 unless it exists (before a library opens it with the umask's mode). */
export function touchPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
}

/**
 * Creates DATA_DIR as 0700, or takes away group and other permissions from it and its direct entries.
 * Returns what it changed (or failed to), for one warning at start-up.
 */
export function securePrivateDir(dir: string): ModeChange[] {
  makePrivateDir(dir);
  const changes: ModeChange[] = [];
  const tighten = (path: string, isDir: boolean) => {
    const mode = statSync(path).mode & PERMISSION_BITS;
    const wanted = isDir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
    // Only ever remove bits: an owner-only mode the operator chose (0500, 0400) is left as it is.
    if ((mode & ~wanted) === 0) return;
    const to = mode & wanted;
    const change: ModeChange = { path, from: mode.toString(8), to: to.toString(8) };
    try {
      chmodSync(path, to);
    } catch (err) {
      change.error = (err as NodeJS.ErrnoException).code ?? String(err);
    }
    changes.push(change);
  };
  tighten(dir, true);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() || entry.isFile()) tighten(join(dir, entry.name), entry.isDirectory());
  }
  return changes;
}
