// Runs the `slipway` CLI as a real subprocess (node + the tsx loader on src/cli/main.ts) with its own
// config folder and home, so no test reads or writes the user's credentials.

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const MAIN = resolve('src/cli/main.ts');
/** The tsx loader by absolute URL: the CLI runs with cwd in temp folders, where `tsx` does not resolve. */
const TSX = import.meta.resolve('tsx');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: the --json document, inspected field by field.
  json: any;
}

export interface CliEnv {
  /** Temp folder holding HOME and XDG_CONFIG_HOME. */
  home: string;
  /** The credentials file login writes here. */
  credentials: string;
  env: Record<string, string>;
  /** Runs `slipway ...args` to the end; `input` is written to stdin, which is then closed. */
  run(
    args: string[],
    options?: { cwd?: string; input?: string; env?: Record<string, string> },
  ): Promise<CliResult>;
  /** Starts `slipway ...args` and returns the live child (stdin open). */
  spawn(
    args: string[],
    options?: { cwd?: string; env?: Record<string, string> },
  ): ChildProcessWithoutNullStreams;
  dispose(): Promise<void>;
}

/** A CLI environment pointed at `serverUrl` (SLIPWAY_URL), with no key unless `env` sets one. */
export async function cliEnv(serverUrl: string, extra: Record<string, string> = {}): Promise<CliEnv> {
  const home = await mkdtemp(join(tmpdir(), 'slipway-cli-'));
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('SLIPWAY_')) base[k] = v;
  }
  const env = {
    ...base,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    SLIPWAY_URL: serverUrl,
    ...extra,
  };
  const start = (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) =>
    spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
      cwd: options.cwd ?? home,
      env: { ...env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  return {
    home,
    credentials: join(home, 'config', 'slipway', 'credentials'),
    env,
    spawn: start,
    run(args, options = {}) {
      const child = start(args, options);
      const result = collect(child);
      child.stdin.end(options.input ?? '');
      return result;
    },
    dispose: () => rm(home, { recursive: true, force: true }),
  };
}

/** Collects a child's output until it exits (stdin is left to the caller); stdout parsed when it is JSON. */
export function collect(child: ChildProcessWithoutNullStreams): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}
