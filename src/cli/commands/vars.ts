// `slipway vars set | list | delete`: a site's secret variables (encrypted on the server, used by the
// site proxy as `{{NAME}}`). Values are never taken from the command line.

import type { Command } from 'commander';
import { formatDate, UserError } from '../output.js';
import { ask, interactive, readStdin } from '../prompt.js';
import { action } from '../session.js';

export function registerVars(program: Command): void {
  const vars = program.command('vars').description("manage a site's secret variables");

  vars
    .command('set')
    .description('store a variable; the value is typed at a hidden prompt or read from stdin')
    .argument('<slug>')
    .argument('<name>', 'letters, digits and underscores, starting with a letter (e.g. STRIPE_SECRET_KEY)')
    .addHelpText(
      'after',
      `
Examples:
  slipway vars set bright-fox-42 STRIPE_SECRET_KEY
  printf '%s' "$STRIPE_SECRET_KEY" | slipway vars set bright-fox-42 STRIPE_SECRET_KEY --json`,
    )
    .action(
      action(async (session, [slug, name]) => {
        const { out } = session;
        const client = await session.authed();
        const value = interactive()
          ? await ask(`Value of ${name}: `, { hidden: true, what: 'the value' })
          : await readStdin();
        if (value === '') throw new UserError(`the value of ${name} is empty`, { code: 'MISSING_INPUT' });
        const res = await client.setVariables(slug!, { [name!]: value });
        out.result(res, () => out.line(`Stored ${name} for ${slug}.`));
      }),
    );

  vars
    .command('list')
    .description('list variable names (values are never shown)')
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway vars list bright-fox-42')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const res = await (await session.authed()).listVariables(slug!);
        out.result(res, () => {
          if (res.variables.length === 0) return out.line(`${slug} has no variables.`);
          out.table(
            ['NAME', 'UPDATED'],
            res.variables.map((v) => [v.name, formatDate(v.updatedAt)]),
          );
        });
      }),
    );

  vars
    .command('delete')
    .description('delete a variable')
    .argument('<slug>')
    .argument('<name>')
    .addHelpText('after', '\nExamples:\n  slipway vars delete bright-fox-42 STRIPE_SECRET_KEY')
    .action(
      action(async (session, [slug, name]) => {
        const { out } = session;
        const res = await (await session.authed()).deleteVariable(slug!, name!);
        out.result(res, () => out.line(`Deleted ${name} of ${slug}.`));
      }),
    );
}
