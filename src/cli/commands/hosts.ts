// `slipway hosts add | list | delete`: the hosts a site's proxy may call (exact names, HTTPS only).

import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { action } from '../session.js';

export function registerHosts(program: Command): void {
  const hosts = program.command('hosts').description("manage the hosts a site's proxy may reach");

  hosts
    .command('add')
    .description('approve hosts (exact host names, no wildcards)')
    .argument('<slug>')
    .argument('<hosts...>')
    .addHelpText('after', '\nExamples:\n  slipway hosts add bright-fox-42 api.stripe.com api.openai.com')
    .action(
      action(async (session, [slug, ...names]) => {
        const { out } = session;
        const res = await (await session.authed()).setProxyHosts(slug!, names);
        out.result(res, () => out.line(`Approved for ${slug}: ${names.join(', ')}.`));
      }),
    );

  hosts
    .command('list')
    .description('list approved hosts')
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway hosts list bright-fox-42 --json')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const res = await (await session.authed()).listProxyHosts(slug!);
        out.result(res, () => {
          if (res.hosts.length === 0) return out.line(`${slug} has no approved hosts.`);
          out.table(
            ['HOST', 'UPDATED'],
            res.hosts.map((h) => [h.hostname, formatDate(h.updatedAt)]),
          );
        });
      }),
    );

  hosts
    .command('delete')
    .description('remove approved hosts')
    .argument('<slug>')
    .argument('<hosts...>')
    .addHelpText('after', '\nExamples:\n  slipway hosts delete bright-fox-42 api.openai.com')
    .action(
      action(async (session, [slug, ...names]) => {
        const { out } = session;
        const client = await session.authed();
        const deleted: string[] = [];
        for (const name of names) {
          await client.deleteProxyHost(slug!, name);
          deleted.push(name);
        }
        out.result({ ok: true, deleted }, () => out.line(`Removed from ${slug}: ${deleted.join(', ')}.`));
      }),
    );
}
