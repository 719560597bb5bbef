// The API keys `slipway login` saves: $XDG_CONFIG_HOME/slipway/credentials (default
// ~/.config/slipway/credentials), mode 0600, JSON with one entry per server origin so that a key is only
// ever sent to the server that issued it.

import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UserError } from './output.js';

export interface SavedKey {
  apiKey: string;
  email: string;
  /** ISO 8601 time of the login. */
  savedAt: string;
}

interface CredentialsFile {
  servers: Record<string, SavedKey>;
}

/** Where the keys live: $XDG_CONFIG_HOME/slipway/credentials, or ~/.config/slipway/credentials. */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'slipway', 'credentials');
}

/** The key of a server: its origin (`http://localhost:8080`), so trailing slashes or paths do not matter. */
export function serverId(server: string): string {
  try {
    return new URL(server).origin;
  } catch {
    return server.replace(/\/+$/, '');
  }
}

async function load(path: string): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { servers: {} };
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<CredentialsFile>;
    if (parsed && typeof parsed.servers === 'object' && parsed.servers !== null) {
      return { servers: parsed.servers };
    }
  } catch {}
  throw new UserError(`${path} is not a credentials file written by slipway.`, {
    code: 'BAD_CREDENTIALS_FILE',
    hint: 'Delete it and run `slipway login` again.',
  });
}

/** Writes the file atomically (temp file + rename) with mode 0600 in a 0700 folder. */
async function store(path: string, data: CredentialsFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  // The mode given at creation is filtered by the umask; make it exact.
  await chmod(temp, 0o600);
  await rename(temp, path);
}

export async function readSavedKey(server: string, path = credentialsPath()): Promise<SavedKey | undefined> {
  return (await load(path)).servers[serverId(server)];
}

/** Servers other than `server` that have a saved key (to explain a missing one). */
export async function otherServers(server: string, path = credentialsPath()): Promise<string[]> {
  return Object.keys((await load(path)).servers).filter((s) => s !== serverId(server));
}

export async function saveKey(server: string, key: Omit<SavedKey, 'savedAt'>, path = credentialsPath()) {
  const data = await load(path);
  data.servers[serverId(server)] = { ...key, savedAt: new Date().toISOString() };
  await store(path, data);
}

/** Forgets the key of `server`; true if there was one. Removes the file when no key is left. */
export async function removeKey(server: string, path = credentialsPath()): Promise<boolean> {
  const data = await load(path);
  const id = serverId(server);
  if (!data.servers[id]) return false;
  delete data.servers[id];
  if (Object.keys(data.servers).length === 0) await rm(path, { force: true });
  else await store(path, data);
  return true;
}
