// `slipway links add | list | delete`: mount a site at a location of your handle or of a custom domain.

import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { action } from '../session.js';

export function registerLinks(program: Command): void {
  const links = program.command('links').description('mount sites on your handle or custom domains');

  links
    .command('add')
    .description('mount a site at a location (default /) of your handle, or of --domain')
    .argument('<slug>')
    .option('--domain <domain>', 'an active custom domain (default: your handle)')
    .option('--location <path>', 'where the site appears, e.g. /blog', '/')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway links add bright-fox-42 --location /blog\n  slipway links add bright-fox-42 --domain www.example.com',
    )
    .action(
      action<{ domain?: string; location: string }>(async (session, [slug], flags) => {
        const { out } = session;
        const res = await (await session.authed()).createLink({
          slug: slug!,
          location: flags.location,
          ...(flags.domain ? { domain: flags.domain } : {}),
        });
        out.result(res, () => out.line(`${res.id}  ${res.url}`));
      }),
    );

  links
    .command('list')
    .description('list your links')
    .addHelpText('after', '\nExamples:\n  slipway links list')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).listLinks();
        out.result(res, () => {
          if (res.links.length === 0) return out.line('No links.');
          out.table(
            ['ID', 'SITE', 'ON', 'LOCATION', 'URL', 'CREATED'],
            res.links.map((l) => [
              l.id,
              l.slug,
              l.domain ?? l.handle ?? '-',
              l.location,
              l.url,
              formatDate(l.createdAt),
            ]),
          );
        });
      }),
    );

  links
    .command('delete')
    .description('remove a link')
    .argument('<id>')
    .addHelpText('after', '\nExamples:\n  slipway links delete lnk_...')
    .action(
      action(async (session, [id]) => {
        const { out } = session;
        const res = await (await session.authed()).deleteLink(id!);
        out.result(res, () => out.line(`Removed link ${id}.`));
      }),
    );
}
