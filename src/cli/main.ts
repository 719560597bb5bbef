#!/usr/bin/env node
// `slipway`: the command-line client of a Slipway service, a thin shell over src/client (DESIGN 18).
// Every command takes --server (else SLIPWAY_URL, else http://localhost:8080) and --json; the key
// comes from SLIPWAY_API_KEY or the credentials file `slipway login` writes, else a deploy token from
// SLIPWAY_TOKEN (it may publish its own site only). docs/cli.md has the rest.

import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerAdmin } from './commands/admin.js';
import { registerAdminBackup } from './commands/admin-backup.js';
import { registerAuth } from './commands/auth.js';
import { registerBilling } from './commands/billing.js';
import { registerDomains } from './commands/domains.js';
import { registerHandle } from './commands/handle.js';
import { registerHosts } from './commands/hosts.js';
import { registerLinks } from './commands/links.js';
import { registerPublish } from './commands/publish.js';
import { registerSites } from './commands/sites.js';
import { registerStats } from './commands/stats.js';
import { registerTokens } from './commands/tokens.js';
import { registerVars } from './commands/vars.js';
import { registerWebhooks } from './commands/webhooks.js';
import { EXIT, Output, reportFailure, restoreTerminal, UserError } from './output.js';
import { action } from './session.js';

/** The package version (package.json is two levels up from both src/cli/ and dist/bundle/). */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function buildProgram(): Command {
  const program = new Command('slipway')
    .description('Publish static sites to a Slipway service and manage them.')
    .version(packageVersion(), '-V, --version')
    .option('--server <url>', 'service address (default: $SLIPWAY_URL, else http://localhost:8080)')
    .option('--json', 'print exactly one JSON document on stdout (the result, or the error body)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showHelpAfterError('(add --help for usage)')
    // Usage errors throw instead of exiting, so main() can answer them in JSON too; subcommands inherit it.
    .exitOverride();

  registerAuth(program);
  registerPublish(program);
  registerSites(program);
  registerVars(program);
  registerHosts(program);
  registerDomains(program);
  registerHandle(program);
  registerLinks(program);
  registerTokens(program);
  registerStats(program);
  registerBilling(program);
  registerWebhooks(program);
  // One `admin` command: the operators' API commands, and backup/restore on the service's machine.
  registerAdminBackup(registerAdmin(program));

  program
    .command('mcp')
    .description('run a Model Context Protocol server on stdio with the same operations as tools')
    .addHelpText(
      'after',
      '\nExample (an MCP client configuration):\n  {"command": "slipway", "args": ["mcp"]}',
    )
    .action(
      action(async ({ server, client }) => {
        const { runMcpServer } = await import('./mcp.js');
        await runMcpServer({ server, ...(client.apiKey ? { apiKey: client.apiKey } : {}) });
      }),
    );
  return program;
}

/**
 * The folder the user ran the command from. `npm run cli -- ...` runs this file in the checkout (npm
 * moves to the package root) and keeps the user's folder in INIT_CWD; only our own `cli` script is
 * trusted for that: a `slipway` called from another package's npm script keeps npm's folder, as that
 * script's relative paths expect.
 */
function userDirectory(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.npm_lifecycle_event !== 'cli' || env.npm_package_name !== 'slipway') return undefined;
  const dir = env.INIT_CWD;
  return dir && isAbsolute(dir) ? dir : undefined;
}

/**
 * A closed stdout or stderr (`slipway publish --help | head -3`) ends the command quietly: the reader
 * has what it wanted, and a stack trace about EPIPE helps nobody.
 */
function quietOnClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') {
        restoreTerminal();
        process.exit(process.exitCode ?? EXIT.OK);
      }
      throw err;
    });
  }
}

async function main(argv: string[]): Promise<void> {
  quietOnClosedOutput();
  const here = userDirectory();
  if (here !== undefined && here !== process.cwd()) {
    try {
      process.chdir(here);
    } catch {
      // The folder is gone or closed to us: paths stay relative to npm's folder.
    }
  }
  const json = argv.includes('--json');
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage errors were already printed on stderr.
      if (err.exitCode !== 0 && json) {
        process.stdout.write(
          `${JSON.stringify({ error: err.message.replace(/^error: /, ''), code: 'INVALID_USAGE' }, null, 2)}\n`,
        );
      }
      process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USER;
      return;
    }
    process.exitCode = reportFailure(
      new Output(json),
      err instanceof Error ? err : new UserError(String(err)),
    );
  }
}

await main(process.argv);
