// `slipway list | info | delete | duplicate | claim | meta | versions | rollback | promote`: managing sites.

import type { Command } from 'commander';
import type { SiteSummary } from '../../api/sites.js';
import { serverId } from '../credentials.js';
import { formatBytes, formatDate, UserError } from '../output.js';
import { ask, confirmOrRefuse, interactive, readStdin } from '../prompt.js';
import { action, type Session } from '../session.js';
import { removeState, type SiteState, statesIn, writeState } from '../state.js';
import { positiveInt } from './publish.js';

/** Sites per page when listing (the whole list is fetched page by page). */
const LIST_PAGE = 100;
/** Files `info` shows before summing up the rest. */
const INFO_FILES_SHOWN = 50;

export function registerSites(program: Command): void {
  program
    .command('list')
    .description('list your sites')
    .addHelpText('after', '\nExamples:\n  slipway list\n  slipway list --json')
    .action(
      action(async (session) => {
        const { out } = session;
        const client = await session.authed();
        const sites: SiteSummary[] = [];
        let total = 0;
        let cursor: string | undefined;
        do {
          const page = await client.listSites({ limit: LIST_PAGE, ...(cursor ? { cursor } : {}) });
          sites.push(...page.sites);
          total = page.total;
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        out.result({ sites, total }, () => {
          if (sites.length === 0)
            return out.line('No sites yet: publish one with `slipway publish <folder>`.');
          out.table(
            ['SLUG', 'STATUS', 'FILES', 'SIZE', 'EXPIRES', 'URL'],
            sites.map((s) => [
              s.slug,
              s.status,
              String(s.fileCount),
              formatBytes(s.totalSize),
              formatDate(s.expiresAt),
              s.siteUrl,
            ]),
          );
        });
      }),
    );

  program
    .command('info')
    .description('show a site: status, metadata and files')
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway info bright-fox-42\n  slipway info bright-fox-42 --json')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const site = await (await session.authed()).getSite(slug!);
        out.result(site, () => {
          const rows: Array<[string, string]> = [
            ['slug', site.slug],
            ['url', site.siteUrl],
            ['status', site.status],
            ['version', site.versionId ?? '-'],
            ['title', site.title ?? '-'],
            ['description', site.description ?? '-'],
            ['og:image', site.ogImagePath ?? '-'],
            ['password', site.hasPassword ? 'yes' : 'no'],
            ['expires', site.expiresAt ? formatDate(site.expiresAt) : 'never'],
            ['created', formatDate(site.createdAt)],
            ['updated', formatDate(site.updatedAt)],
          ];
          for (const [k, v] of rows) out.line(`${k.padEnd(12)}${v}`);
          const files = site.files ?? [];
          const size = files.reduce((sum, f) => sum + f.size, 0);
          out.line(`files       ${files.length} (${formatBytes(size)})`);
          out.line();
          out.table(
            ['PATH', 'SIZE', 'TYPE'],
            files.slice(0, INFO_FILES_SHOWN).map((f) => [f.path, formatBytes(f.size), f.contentType]),
          );
          if (files.length > INFO_FILES_SHOWN) out.line(`... and ${files.length - INFO_FILES_SHOWN} more`);
        });
      }),
    );

  program
    .command('delete')
    .description('delete a site for good (its slug is never reused)')
    .argument('<slug>')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway delete bright-fox-42\n  slipway delete bright-fox-42 --yes --json',
    )
    .action(
      action<{ yes?: boolean }>(async (session, [slug], flags) => {
        const { out } = session;
        const client = await session.authed();
        await confirmOrRefuse(
          flags.yes,
          `delete ${slug}`,
          `Delete ${slug} and all its versions permanently?`,
        );
        const res = await client.deleteSite(slug!);
        for (const { path } of await statesHere(session, slug!)) await removeState(path);
        out.result(res, () => out.line(`Deleted ${slug}.`));
      }),
    );

  program
    .command('duplicate')
    .description('copy a site into a new site (files copied on the server)')
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway duplicate bright-fox-42')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const res = await (await session.authed()).duplicateSite(slug!);
        out.result(res, () => out.line(String(res.siteUrl)));
      }),
    );

  program
    .command('claim')
    .description('claim an anonymous site into your account (default: the one published from this folder)')
    .argument('[slug]')
    .option('--token <token>', 'the claim token (default: from .slipway/ in the current folder)')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway claim                       # the site this folder published anonymously\n  slipway claim bright-fox-42 --token clm_...',
    )
    .action(action<{ token?: string }>(claim));

  program
    .command('meta')
    .description('change title, description, og:image, password or expiry')
    .argument('<slug>')
    .option('--title <title>', 'title ("" clears it)')
    .option('--description <text>', 'description ("" clears it)')
    .option('--og-image <path>', 'path of an image in the site for link previews ("" clears it)')
    .option('--password-stdin', 'protect the site with a password read from stdin')
    .option('--password-prompt', 'protect the site with a password typed at a prompt')
    .option('--no-password', 'remove the password')
    .option('--ttl <seconds>', 'expire this many seconds from now', positiveInt)
    .option('--no-ttl', 'never expire')
    .addHelpText(
      'after',
      `
The password is never taken from the command line (it would end up in the shell history).

Examples:
  slipway meta bright-fox-42 --title "Q3 report" --description "Numbers"
  printf '%s' "$PASSWORD" | slipway meta bright-fox-42 --password-stdin
  slipway meta bright-fox-42 --no-password --no-ttl`,
    )
    .action(action<MetaFlags>(meta));

  program
    .command('versions')
    .description('list the finalized versions of a site, newest first')
    .argument('<slug>')
    .addHelpText('after', '\nExamples:\n  slipway versions bright-fox-42')
    .action(
      action(async (session, [slug]) => {
        const { out } = session;
        const res = await (await session.authed()).versions(slug!);
        out.result(res, () =>
          out.table(
            ['VERSION', 'FINALIZED', 'FILES', 'SIZE', '', 'PREVIEW', 'ALIASES'],
            res.versions.map((v) => [
              v.versionId,
              formatDate(v.finalizedAt),
              String(v.fileCount),
              formatBytes(v.totalSize),
              v.current ? 'current' : '',
              v.previewUrl,
              v.aliases.join(', '),
            ]),
          ),
        );
      }),
    );

  program
    .command('promote')
    .description('make a version live: a preview, by its versionId, alias or label (the restore endpoint)')
    .argument('<slug>')
    .argument('<version>', 'versionId, alias name (e.g. staging) or preview label')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway promote bright-fox-42 staging\n  slipway promote bright-fox-42 ver_...',
    )
    .action(action(promote));

  program
    .command('rollback')
    .description('make an earlier version current (default: the one before the current version)')
    .argument('<slug>')
    .argument('[versionId]')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway rollback bright-fox-42\n  slipway rollback bright-fox-42 ver_...',
    )
    .action(
      action(async (session, [slug, wanted]) => {
        const { out } = session;
        const client = await session.authed();
        let versionId = wanted;
        if (versionId === undefined) {
          const { versions } = await client.versions(slug!);
          const current = versions.findIndex((v) => v.current);
          versionId = versions[current + 1]?.versionId;
          if (current === -1 || versionId === undefined) {
            throw new UserError(`${slug} has no version before the current one`, {
              code: 'NO_PREVIOUS_VERSION',
            });
          }
        }
        const res = await client.restoreVersion(slug!, versionId);
        // The folder that published the site now bases its next publish on the restored version.
        for (const { path, state } of await statesHere(session, slug!)) {
          await writeState(path, { ...state, versionId: res.versionId });
        }
        out.result(res, () => out.line(`${slug} now serves ${res.versionId}: ${res.siteUrl}`));
      }),
    );
}

/**
 * `slipway promote <slug> <versionId|alias|label>`: the version becomes live (the restore endpoint). An
 * alias name or a preview label is looked up first.
 */
async function promote(session: Session, [slug, wanted]: string[]): Promise<void> {
  const { out } = session;
  const client = await session.authed();
  let versionId = wanted!;
  if (!versionId.startsWith('ver_')) {
    const { aliases } = await client.listAliases(slug!);
    const alias = aliases.find((a) => a.name === wanted);
    const byLabel = alias
      ? undefined
      : (await client.versions(slug!)).versions.find((v) => v.previewUrl.includes(`//${slug}--${wanted}.`));
    const found = alias?.versionId ?? byLabel?.versionId;
    if (found === undefined) {
      throw new UserError(`${slug} has no alias or version ${wanted}`, {
        code: 'NOT_FOUND',
        hint: `\`slipway versions ${slug}\` lists its versions and aliases.`,
      });
    }
    versionId = found;
  }
  const res = await client.restoreVersion(slug!, versionId);
  // The folder that published the site now bases its next publish on the promoted version.
  for (const { path, state } of await statesHere(session, slug!)) {
    await writeState(path, { ...state, versionId: res.versionId });
  }
  out.result(res, () => out.line(`${slug} now serves ${res.versionId}: ${res.siteUrl}`));
}

/** State files of the current folder that remember `slug` on this server. */
async function statesHere(
  session: Session,
  slug: string,
): Promise<Array<{ path: string; state: SiteState }>> {
  const states = await statesIn(process.cwd());
  return states.filter((s) => s.state.slug === slug && serverId(s.state.server) === serverId(session.server));
}

async function claim(session: Session, [given]: string[], flags: { token?: string }): Promise<void> {
  const { out } = session;
  const client = await session.authed();
  const here = (await statesIn(process.cwd())).filter(
    (s) => s.state.claimToken && serverId(s.state.server) === serverId(session.server),
  );
  const match = given === undefined ? here : here.filter((s) => s.state.slug === given);
  if (given === undefined && match.length > 1 && flags.token === undefined) {
    throw new UserError('this folder published several anonymous sites; name one', {
      code: 'AMBIGUOUS',
      hint: `slipway claim <slug> (one of ${match.map((s) => s.state.slug).join(', ')})`,
    });
  }
  const slug = given ?? match[0]?.state.slug;
  const token = flags.token ?? match.find((s) => s.state.slug === slug)?.state.claimToken;
  if (slug === undefined || token === undefined) {
    throw new UserError(
      given === undefined
        ? 'no anonymous publish to claim in this folder'
        : `no claim token for ${given} in this folder`,
      { code: 'MISSING_INPUT', hint: 'Run it in the published folder, or pass the slug and --token.' },
    );
  }
  const res = await client.claimSite(slug, token);
  for (const { path, state } of match.filter((s) => s.state.slug === slug)) {
    const { claimToken: _token, claimUrl: _url, expiresAt: _expires, ...kept } = state;
    await writeState(path, kept);
  }
  out.result(res, () => out.line(`Claimed ${slug} into ${String(res.owner)}: ${String(res.siteUrl)}`));
}

interface MetaFlags {
  title?: string;
  description?: string;
  ogImage?: string;
  passwordStdin?: boolean;
  passwordPrompt?: boolean;
  /** false with --no-password. */
  password?: boolean;
  /** A number with --ttl, false with --no-ttl. */
  ttl?: number | false;
}

async function meta(session: Session, [slug]: string[], flags: MetaFlags): Promise<void> {
  const { out } = session;
  const client = await session.authed();
  const cleared = (value: string) => (value === '' ? null : value);
  const patch: Record<string, unknown> = {};
  if (flags.title !== undefined) patch.title = cleared(flags.title);
  if (flags.description !== undefined) patch.description = cleared(flags.description);
  if (flags.ogImage !== undefined) patch.ogImagePath = cleared(flags.ogImage.replace(/^\/+/, ''));
  const passwordWays = [flags.passwordStdin, flags.passwordPrompt, flags.password === false].filter(Boolean);
  if (passwordWays.length > 1) {
    throw new UserError('use one of --password-stdin, --password-prompt and --no-password', {
      code: 'INVALID_USAGE',
    });
  }
  if (flags.password === false) patch.password = null;
  if (flags.passwordStdin) patch.password = await readStdin();
  if (flags.passwordPrompt) {
    if (!interactive()) {
      throw new UserError('--password-prompt needs a terminal', {
        code: 'INVALID_USAGE',
        hint: 'Use --password-stdin.',
      });
    }
    const first = await ask('Password: ', { hidden: true, what: 'the password' });
    const again = await ask('Repeat it: ', { hidden: true, what: 'the password' });
    if (first !== again) throw new UserError('the passwords differ', { code: 'INVALID_USAGE' });
    patch.password = first;
  }
  if (patch.password === '') throw new UserError('the password is empty', { code: 'INVALID_USAGE' });
  if (flags.ttl !== undefined) patch.ttlSeconds = flags.ttl === false ? null : flags.ttl;
  if (Object.keys(patch).length === 0) {
    throw new UserError('nothing to change', { code: 'INVALID_USAGE', hint: 'See `slipway meta --help`.' });
  }
  const res = await client.setMetadata(slug!, patch);
  const changed = Object.keys(patch).map((k) =>
    k === 'ogImagePath' ? 'og:image' : k === 'ttlSeconds' ? 'expiry' : k,
  );
  out.result(res, () => out.line(`Updated ${slug}: ${changed.join(', ')}.`));
}
