// What every command starts from: the server (--server, SLIPWAY_URL, default http://localhost:8080), the
// key (SLIPWAY_API_KEY, else the credentials file, else a deploy token from SLIPWAY_TOKEN: CONTRACT "CLI"),
// an API client and the output mode; and the wrapper
// that turns a command's failure into the right output and exit code.

import type { Command } from 'commander';
import { ApiClient } from '../client/api.js';
import { otherServers, readSavedKey } from './credentials.js';
import { Output, reportFailure, UserError } from './output.js';
import { closePrompts } from './prompt.js';

export const DEFAULT_SERVER = 'http://localhost:8080';

export interface Session {
  out: Output;
  /** The server's base URL, without a trailing slash. */
  server: string;
  /** A client with the key (or deploy token) if there is one, else anonymous. */
  client: ApiClient;
  /** The client's credential is a deploy token (SLIPWAY_TOKEN): it may publish its own site only. */
  deployToken: boolean;
  /** A client with the key; a UserError (exit 1) when there is none. */
  authed(): Promise<ApiClient>;
}

interface GlobalOptions {
  json?: boolean;
  server?: string;
}

/** The session of `command` (its own and the program's options). */
export async function sessionOf(command: Command): Promise<Session> {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const out = new Output(opts.json === true);
  const server = (opts.server ?? process.env.SLIPWAY_URL ?? DEFAULT_SERVER).replace(/\/+$/, '');
  try {
    const url = new URL(server);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new UserError(`--server/SLIPWAY_URL must be an http(s) URL; got "${server}"`, {
      code: 'INVALID_SERVER',
    });
  }
  const envKey = process.env.SLIPWAY_API_KEY;
  const savedOrEnvKey = envKey && envKey !== '' ? envKey : (await readSavedKey(server))?.apiKey;
  // A deploy token is used only where no key is (a CI job has the token and nothing else).
  const envToken = process.env.SLIPWAY_TOKEN;
  const deployToken = !savedOrEnvKey && envToken !== undefined && envToken !== '';
  const apiKey = deployToken ? envToken : savedOrEnvKey;
  const client = new ApiClient({ server, ...(apiKey ? { apiKey } : {}) });
  return {
    out,
    server,
    client,
    deployToken,
    async authed() {
      if (client.apiKey) return client;
      const others = await otherServers(server);
      throw new UserError(`not logged in to ${server}`, {
        code: 'NOT_LOGGED_IN',
        hint:
          others.length > 0
            ? `You are logged in to ${others.join(', ')}; run \`slipway login --server ${server}\` (or set SLIPWAY_API_KEY).`
            : 'Run `slipway login` (or set SLIPWAY_API_KEY; in CI, SLIPWAY_TOKEN with a deploy token).',
      });
    },
  };
}

/**
 * A commander action that builds the session, runs `body` and reports a failure (JSON or human, exit
 * code by kind). `body` receives the session, the positional arguments and the command's options.
 */
export function action<O = Record<string, unknown>>(
  body: (session: Session, args: string[], options: O) => Promise<void>,
): (...params: unknown[]) => Promise<void> {
  return async (...params: unknown[]) => {
    const command = params[params.length - 1] as Command;
    const options = params[params.length - 2] as O;
    const args = params.slice(0, -2).flatMap((a) => (Array.isArray(a) ? a : a === undefined ? [] : [a]));
    const out = new Output(command.optsWithGlobals<GlobalOptions>().json === true);
    try {
      await body(await sessionOf(command), args as string[], options);
    } catch (err) {
      process.exitCode = reportFailure(out, err);
    } finally {
      closePrompts();
    }
  };
}
