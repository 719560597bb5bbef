// What `slipway publish` remembers about a published folder: .slipway/state.json inside it (for a single
// file, .slipway/state-<file name>.json next to it), so the next publish updates the same site (with the
// live version as `baseVersionId`) and `slipway claim` finds the claim token of an anonymous publish.
// The hashes of the folder's files are kept beside it (src/cli/hashes.ts).

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export const STATE_DIR = '.slipway';

export interface SiteState {
  slug: string;
  /** The live version after the last publish (null while the first publish has not finalized). */
  versionId: string | null;
  /** The server the site lives on (origin). */
  server: string;
  /** Anonymous publishes only, until claimed: the token `slipway claim` sends. */
  claimToken?: string;
  claimUrl?: string;
  expiresAt?: string;
}

/** The state file for a published folder, or for a single published file. */
export function statePath(target: { dir: string } | { file: string }): string {
  return slipwayFile(target, 'state');
}

/** `.slipway/<stem>.json` in a published folder; `.slipway/<stem>-<name>.json` beside a single published file. */
export function slipwayFile(target: { dir: string } | { file: string }, stem: string): string {
  if ('dir' in target) return join(target.dir, STATE_DIR, `${stem}.json`);
  return join(dirname(target.file), STATE_DIR, `${stem}-${basename(target.file)}.json`);
}

export async function readState(path: string): Promise<SiteState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const state = JSON.parse(text) as SiteState;
    return typeof state?.slug === 'string' && typeof state.server === 'string' ? state : undefined;
  } catch {
    // A damaged state file is as good as none: the next publish creates a site and rewrites it.
    return undefined;
  }
}

/** Writes the state (through writePrivate: it may hold a claim token). */
export async function writeState(path: string, state: SiteState): Promise<void> {
  await writePrivate(path, `${JSON.stringify(state, null, 2)}\n`);
}

/**
 * Writes a file of `.slipway/` atomically (a temp file renamed over it) with mode 0600, and the
 * `.gitignore` that keeps the folder out of version control.
 */
export async function writePrivate(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, '.gitignore'), '*\n');
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, path);
}

export async function removeState(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** Every state file of the folder `dir` (its own and those of single files published from it). */
export async function statesIn(dir: string): Promise<Array<{ path: string; state: SiteState }>> {
  const folder = join(dir, STATE_DIR);
  const names = await readdir(folder).catch(() => [] as string[]);
  const out: Array<{ path: string; state: SiteState }> = [];
  for (const name of names.sort()) {
    if (!/^state(?:-.+)?\.json$/.test(name)) continue;
    const state = await readState(join(folder, name));
    if (state) out.push({ path: join(folder, name), state });
  }
  return out;
}
