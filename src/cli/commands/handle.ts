// `slipway handle [show] | set NAME | delete`: the account's vanity handle (<handle>.<site domain>, Hobby).

import type { Command } from 'commander';
import { confirmOrRefuse } from '../prompt.js';
import { action } from '../session.js';

export function registerHandle(program: Command): void {
  const handle = program.command('handle').description('show, set or release your handle (Hobby plan)');

  handle
    .command('show', { isDefault: true })
    .description('show your handle (the default)')
    .addHelpText('after', '\nExamples:\n  slipway handle\n  slipway handle --json')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).getHandle();
        out.result(res, () => out.line(res.handle ? `${res.handle}  ${res.url}` : 'No handle.'));
      }),
    );

  handle
    .command('set')
    .description('claim a handle (or change it: the old one is released)')
    .argument('<name>', '3 to 30 lowercase letters, digits and single hyphens (no "--")')
    .addHelpText('after', '\nExamples:\n  slipway handle set jane')
    .action(
      action(async (session, [name]) => {
        const { out } = session;
        const res = await (await session.authed()).setHandle(name!);
        out.result(res, () => out.line(`${String(res.handle)}  ${String(res.url)}`));
      }),
    );

  handle
    .command('delete')
    .description('release your handle (and remove its links)')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText('after', '\nExamples:\n  slipway handle delete\n  slipway handle delete --yes --json')
    .action(
      action<{ yes?: boolean }>(async (session, _args, flags) => {
        const { out } = session;
        await confirmOrRefuse(
          flags.yes,
          'release your handle',
          'Release your handle and remove its links? Anyone may take it afterwards.',
        );
        const res = await (await session.authed()).deleteHandle();
        out.result(res, () => out.line(String(res.message)));
      }),
    );
}
