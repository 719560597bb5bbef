// `slipway admin backup <DIR>` and `slipway admin restore <DIR>` (CONTRACT "Operators, reports and the audit
// log", docs/operations.md): run on the service's machine, on the embedded default's DATA_DIR, while the
// service runs (backup) or before it starts (restore). They read files, not the API: no key is needed.

import type { Command } from 'commander';
import { EXIT, Output, reportFailure, UserError } from '../output.js';

/**
 * backup.ts, loaded by these two commands only: it opens SQLite (better-sqlite3's native addon), which
 * every other command's start would pay for.
 */
const backupModule = () => import('../backup.js');

interface Flags {
  dataDir?: string;
}

/** DATA_DIR as the service reads it: --data-dir, else $DATA_DIR, else ./data. */
function dataDirOf(flags: Flags): string {
  return flags.dataDir ?? process.env.DATA_DIR ?? './data';
}

/** Only the embedded default lives in DATA_DIR; the scale-out set is backed up with its own tools. */
function refuseScaleOut(): void {
  const set = ['DATABASE_URL', 'S3_BUCKET'].filter((v) => (process.env[v] ?? '') !== '');
  if (set.length > 0)
    throw new UserError(
      `${set.join(' and ')} set: this backs up the embedded default (SQLite and blobs in DATA_DIR) only`,
      { hint: 'back up PostgreSQL, the bucket and SECRETS_KEY as docs/operations.md says' },
    );
}

function run(body: (out: Output, dir: string, flags: Flags) => Promise<void>) {
  return async (dir: string, flags: Flags, command: Command) => {
    const out = new Output(command.optsWithGlobals<{ json?: boolean }>().json === true);
    try {
      refuseScaleOut();
      await body(out, dir, flags);
    } catch (err) {
      const { BackupError } = await backupModule();
      const code = reportFailure(
        out,
        err instanceof BackupError ? new UserError(err.message, { code: 'BACKUP_FAILED' }) : err,
      );
      process.exitCode = code === EXIT.OK ? EXIT.USER : code;
    }
  };
}

export function registerAdminBackup(admin: Command): void {
  admin
    .command('backup')
    .description("copy DATA_DIR's database, blobs and secrets key into DIR while the service runs")
    .argument('<dir>', 'a new or empty directory (best on another disk or machine)')
    .option('--data-dir <dir>', "the service's DATA_DIR (default: $DATA_DIR, else ./data)")
    .action(
      run(async (out, dir, flags) => {
        const { backupDataDir } = await backupModule();
        const manifest = await backupDataDir(dataDirOf(flags), dir, (line) => out.note(line));
        out.result({ dir, ...manifest }, () => {
          out.line(`backup written to ${dir}: ${manifest.blobs.count} blobs, ${manifest.blobs.bytes} bytes`);
          if (manifest.secretsKey === 'env')
            out.note('SECRETS_KEY is set, so no key file was copied: keep SECRETS_KEY with this backup');
        });
      }),
    );
  admin
    .command('restore')
    .description('restore a backup from DIR into an empty DATA_DIR (stop the service first)')
    .argument('<dir>', 'a directory written by `slipway admin backup`')
    .option('--data-dir <dir>', 'the DATA_DIR to fill: missing or empty (default: $DATA_DIR, else ./data)')
    .action(
      run(async (out, dir, flags) => {
        const dataDir = dataDirOf(flags);
        const { restoreDataDir } = await backupModule();
        const manifest = await restoreDataDir(dir, dataDir, (line) => out.note(line));
        out.result({ dataDir, ...manifest }, () => {
          out.line(`restored ${dir} into ${dataDir}; start the service on it`);
          if (manifest.secretsKey === 'env')
            out.note('the backup has no key file: start the service with the same SECRETS_KEY as before');
        });
      }),
    );
}
