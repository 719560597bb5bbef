// `slipway tokens create | list | revoke`: deploy tokens of a site (CONTRACT "Deploy tokens"), for CI. A
// token publishes its own site and nothing else; it is printed once, at creation, and never again.

import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { action } from '../session.js';
import { positiveInt } from './publish.js';

interface CreateFlags {
  name: string;
  expires?: number;
}

export function registerTokens(program: Command): void {
  const tokens = program
    .command('tokens')
    .description("manage a site's deploy tokens (for CI: they can publish that site and nothing else)");

  tokens
    .command('create')
    .description('create a deploy token; it is printed once: store it as a CI secret (SLIPWAY_TOKEN)')
    .argument('<slug>')
    .requiredOption('--name <name>', 'what it is for, e.g. "GitHub Actions"')
    .option('--expires <days>', 'days until it stops working: 1 to 365 (default 90)', positiveInt)
    .addHelpText(
      'after',
      `
Examples:
  slipway tokens create bright-fox-42 --name "GitHub Actions"
  slipway tokens create bright-fox-42 --name gitlab --expires 365 --json   # {"id", "token", ...}

Then, in the CI job:
  SLIPWAY_TOKEN=<the token> slipway publish ./dist --slug bright-fox-42`,
    )
    .action(
      action<CreateFlags>(async (session, [slug], flags) => {
        const { out } = session;
        const client = await session.authed();
        const res = await client.createToken(slug!, {
          name: flags.name,
          ...(flags.expires !== undefined ? { expiresInDays: flags.expires } : {}),
        });
        // The token alone on stdout (so `$(slipway tokens create ...)` captures it); the rest on stderr.
        out.result(res, () => out.line(res.token));
        if (!out.json) {
          out.note(
            `deploy token "${res.name}" (${res.id}) for ${slug}, valid until ${formatDate(res.expiresAt)}`,
          );
        }
        out.note(
          'warning: the token is shown only this once. Store it as a CI secret (SLIPWAY_TOKEN); never commit it.',
        );
      }),
    );

  tokens
    .command('list')
    .description("list a site's deploy tokens (never their secrets)")
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway tokens list bright-fox-42')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const res = await (await session.authed()).listTokens(slug!);
        out.result(res, () => {
          if (res.tokens.length === 0) return out.line(`${slug} has no deploy tokens.`);
          out.table(
            ['ID', 'NAME', 'EXPIRES', 'LAST USED'],
            res.tokens.map((t) => [t.id, t.name, formatDate(t.expiresAt), formatDate(t.lastUsedAt)]),
          );
        });
      }),
    );

  tokens
    .command('revoke')
    .description('revoke a deploy token: it stops working at once')
    .argument('<slug>')
    .argument('<id>', 'the id `slipway tokens list` shows (dtk_...)')
    .addHelpText('after', '\nExamples:\n  slipway tokens revoke bright-fox-42 dtk_Vr3dG0m6Q2yk3PA1xXwPqg')
    .action(
      action(async (session, [slug, id]) => {
        const { out } = session;
        const res = await (await session.authed()).revokeToken(slug!, id!);
        out.result(res, () => out.line(`Revoked ${id} of ${slug}.`));
      }),
    );
}
