// `slipway admin backup|restore` (issue 26, docs/operations.md): a consistent copy of the embedded default's
// DATA_DIR while the service keeps serving and publishing, and its restore into an empty DATA_DIR.
//
// A backup is: SQLite's online backup of `slipway.db` (one read of every page: later commits are not in it),
// then every blob that snapshot references, each hashed while copied and checked against its name and size,
// then `secrets.key` (site variables, webhook secrets and certificate keys are sealed with it), and last
// `backup.json`, whose presence marks a finished backup. A blob finalized after the snapshot is not needed;
// one the snapshot needs but the sweeper removes during the copy would break the backup, so the backup holds
// blob deletion off (BACKUP_HOLD_FILE, read by src/store/blob/disk.ts) from before the snapshot to the end.
// A referenced blob that is missing anyway fails the backup loudly.
//
// The CLI talks to the service over HTTP only (test/layering.test.ts), so the DATA_DIR layout this reads
// (the database file name, `blobs/ab/cd/<sha256>`, the hold file) is restated here; test/cli/backup.test.ts
// runs it against a real service's DATA_DIR.

import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import SQLite from 'better-sqlite3';

export const DB_FILE = 'slipway.db';
export const SECRETS_KEY_FILE = 'secrets.key';
export const MANIFEST_FILE = 'backup.json';
/** In DATA_DIR while a backup runs: its mtime is refreshed every HOLD_REFRESH_MS (disk.ts: BACKUP_HOLD_FILE). */
export const BACKUP_HOLD_FILE = 'backup.hold';
const HOLD_REFRESH_MS = 10_000;
/** disk.ts BACKUP_HOLD_STALE_MS: a hold older than this was left by a backup that died. */
const HOLD_STALE_MS = 2 * 60 * 1000;
const FORMAT = 'slipway-backup-1';
const SHA256_HEX = /^[0-9a-f]{64}$/;

export class BackupError extends Error {
  override name = 'BackupError';
}

export interface BackupManifest {
  format: string;
  createdAt: string;
  database: { file: string; bytes: number };
  blobs: { count: number; bytes: number };
  /** `file`: DATA_DIR's generated secrets.key is in the backup; `env`: none in DATA_DIR (SECRETS_KEY is set). */
  secretsKey: 'file' | 'env';
}

export type Progress = (line: string) => void;

const blobPath = (root: string, hash: string) =>
  join(root, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash);

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/**
 * Copies `from` to `to` (0600, parents 0700), hashing the bytes on the way; fails unless they are the blob
 * `hash` of `size` bytes. A missing source fails naming the blob.
 */
async function copyBlob(from: string, to: string, hash: string, size: number | undefined): Promise<number> {
  await mkdir(dirname(to), { recursive: true, mode: 0o700 });
  const digest = createHash('sha256');
  let bytes = 0;
  const tmp = `${to}.partial`;
  try {
    await pipeline(
      createReadStream(from),
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          digest.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(tmp, { mode: 0o600, flush: true }),
    );
  } catch (err) {
    await rm(tmp, { force: true });
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new BackupError(`blob ${hash} is referenced by the database but missing from ${from}`);
    throw err;
  }
  const got = digest.digest('hex');
  if (got !== hash || (size !== undefined && bytes !== size)) {
    await rm(tmp, { force: true });
    throw new BackupError(
      `blob ${hash} is damaged: ${bytes} bytes hashing to ${got}` +
        (size !== undefined ? ` (expected ${size} bytes)` : ''),
    );
  }
  await rename(tmp, to);
  return bytes;
}

/**
 * The blobs a database references: every version file's stored bytes (must exist), and the expected bytes
 * of files still waiting for their upload (copied if present: an unfinished version needs them only if it
 * is finished later).
 */
function referencedBlobs(dbFile: string): { required: Map<string, number>; optional: Set<string> } {
  const db = new SQLite(dbFile, { readonly: true, fileMustExist: true });
  try {
    const required = new Map<string, number>();
    for (const row of db
      .prepare('SELECT DISTINCT hash, size FROM version_files WHERE hash IS NOT NULL')
      .iterate() as Iterable<{ hash: string; size: number }>) {
      required.set(row.hash, Number(row.size));
    }
    const optional = new Set<string>();
    for (const row of db
      .prepare(
        'SELECT DISTINCT expected_hash AS hash FROM version_files WHERE hash IS NULL AND expected_hash IS NOT NULL',
      )
      .iterate() as Iterable<{ hash: string }>) {
      if (!required.has(row.hash)) optional.add(row.hash);
    }
    for (const hash of [...required.keys(), ...optional])
      if (!SHA256_HEX.test(hash))
        throw new BackupError(`the database names a blob "${hash}" that is no SHA-256`);
    return { required, optional };
  } finally {
    db.close();
  }
}

/** Takes a backup of `dataDir` into `dir` (missing or empty). Returns the manifest written last. */
export async function backupDataDir(
  dataDir: string,
  dir: string,
  progress: Progress = () => {},
): Promise<BackupManifest> {
  dataDir = resolve(dataDir);
  dir = resolve(dir);
  const sourceDb = join(dataDir, DB_FILE);
  if (!(await exists(sourceDb)))
    throw new BackupError(`no database at ${sourceDb}: is DATA_DIR right (--data-dir)?`);
  if (!(await isEmptyOrMissing(dir)))
    throw new BackupError(`${dir} is not empty: back up into a new or empty directory`);
  await mkdir(dir, { recursive: true, mode: 0o700 });

  // The hold goes up before the snapshot: a blob the sweeper forgets after this stays on disk (disk.ts).
  const hold = join(dataDir, BACKUP_HOLD_FILE);
  const held = await stat(hold).catch(() => null);
  if (held !== null && Date.now() - held.mtimeMs < HOLD_STALE_MS)
    throw new BackupError(`another backup of ${dataDir} is running (${hold} is fresh)`);
  await writeFile(hold, `${process.pid}\n`, { mode: 0o600 });
  const refresh = setInterval(() => {
    const now = new Date();
    utimes(hold, now, now).catch(() => {});
  }, HOLD_REFRESH_MS);
  try {
    const dbCopy = join(dir, DB_FILE);
    const source = new SQLite(sourceDb, { readonly: true, fileMustExist: true });
    try {
      source.pragma('busy_timeout = 5000');
      // After the first step, the rest in one step: a step reads in one transaction, so the copy is one
      // moment of the database even while the service writes (a write between steps restarts the copy).
      await source.backup(dbCopy, { progress: () => 0x7fffffff });
    } finally {
      source.close();
    }
    await chmod(dbCopy, 0o600);
    const check = new SQLite(dbCopy, { readonly: true });
    try {
      const ok = check.pragma('quick_check', { simple: true });
      if (ok !== 'ok') throw new BackupError(`the database copy fails its check: ${String(ok)}`);
    } finally {
      check.close();
    }
    const dbBytes = (await stat(dbCopy)).size;
    progress(`database: ${dbBytes} bytes`);

    const { required, optional } = referencedBlobs(dbCopy);
    let count = 0;
    let bytes = 0;
    for (const [hash, size] of required) {
      bytes += await copyBlob(blobPath(dataDir, hash), blobPath(dir, hash), hash, size);
      if (++count % 1000 === 0) progress(`blobs: ${count} of ${required.size}`);
    }
    for (const hash of optional) {
      try {
        bytes += await copyBlob(blobPath(dataDir, hash), blobPath(dir, hash), hash, undefined);
        count++;
      } catch (err) {
        if (!(err instanceof BackupError && err.message.includes('missing'))) throw err;
      }
    }
    // Verify what is on the backup's disk, not what the copy loop believed.
    for (const [hash, size] of required) {
      const s = await stat(blobPath(dir, hash)).catch(() => null);
      if (s === null || s.size !== size)
        throw new BackupError(`blob ${hash} did not reach the backup intact`);
    }
    progress(`blobs: ${count} (${bytes} bytes)`);

    let secretsKey: BackupManifest['secretsKey'] = 'env';
    const keyFile = join(dataDir, SECRETS_KEY_FILE);
    if (await exists(keyFile)) {
      await writeFile(join(dir, SECRETS_KEY_FILE), await readFile(keyFile), { mode: 0o600 });
      secretsKey = 'file';
    }

    const manifest: BackupManifest = {
      format: FORMAT,
      createdAt: new Date().toISOString(),
      database: { file: DB_FILE, bytes: dbBytes },
      blobs: { count, bytes },
      secretsKey,
    };
    await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    return manifest;
  } finally {
    clearInterval(refresh);
    await rm(hold, { force: true });
  }
}

/** Restores the backup in `dir` into `dataDir`, which must be missing or empty. */
export async function restoreDataDir(
  dir: string,
  dataDir: string,
  progress: Progress = () => {},
): Promise<BackupManifest> {
  dir = resolve(dir);
  dataDir = resolve(dataDir);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as BackupManifest;
  } catch {
    throw new BackupError(`${dir} holds no finished backup (no readable ${MANIFEST_FILE})`);
  }
  if (manifest.format !== FORMAT) throw new BackupError(`${dir}: unknown backup format "${manifest.format}"`);
  if (!(await isEmptyOrMissing(dataDir)))
    throw new BackupError(
      `DATA_DIR ${dataDir} is not empty: restore only into a new or empty directory (nothing was changed)`,
    );
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  try {
    return await restoreInto(dir, dataDir, manifest, progress);
  } catch (err) {
    // DATA_DIR was empty: take back what this restore wrote, so no service starts on half of it.
    for (const name of ['blobs', SECRETS_KEY_FILE, DB_FILE, `${DB_FILE}.partial`])
      await rm(join(dataDir, name), { recursive: true, force: true });
    throw err;
  }
}

async function restoreInto(dir: string, dataDir: string, manifest: BackupManifest, progress: Progress) {
  const { required, optional } = referencedBlobs(join(dir, DB_FILE));
  let count = 0;
  for (const [hash, size] of required) {
    await copyBlob(blobPath(dir, hash), blobPath(dataDir, hash), hash, size);
    if (++count % 1000 === 0) progress(`blobs: ${count} of ${required.size}`);
  }
  for (const hash of optional) {
    if (await exists(blobPath(dir, hash)))
      await copyBlob(blobPath(dir, hash), blobPath(dataDir, hash), hash, undefined);
  }
  if (manifest.secretsKey === 'file')
    await writeFile(join(dataDir, SECRETS_KEY_FILE), await readFile(join(dir, SECRETS_KEY_FILE)), {
      mode: 0o600,
    });
  // The database last: a DATA_DIR with a database is one a service may start on.
  await writeFile(join(dataDir, `${DB_FILE}.partial`), await readFile(join(dir, DB_FILE)), { mode: 0o600 });
  await rename(join(dataDir, `${DB_FILE}.partial`), join(dataDir, DB_FILE));
  progress(`restored ${count} blobs and the database into ${dataDir}`);
  return manifest;
}
