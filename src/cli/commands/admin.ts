// `slipway admin ...` for operators (ADMIN_EMAILS; docs/admin.md): search, takedown / reinstate,
// delete-site, suspend / unsuspend, plan, block / blocks / unblock, audit, through /api/admin/ with the operator's
// own API key. For anyone else the server answers 404 (the admin API does not exist for them). Every action
// asks first on a terminal (or needs --yes).

import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { action, type Session } from '../session.js';

interface AccountView {
  id: string;
  email: string;
  plan: string;
  suspended: boolean;
  siteCount: number;
  createdAt: string;
}
interface SiteView {
  slug: string;
  accountId: string | null;
  status: string;
  takenDown: boolean;
}
interface AuditView {
  id: string;
  at: string;
  actor: { kind: string; id?: string };
  ip: string | null;
  action: string;
  target: string;
  accountId: string | null;
}
interface ReportView {
  id: string;
  url: string;
  category: string;
  createdAt: string;
  site: { slug: string } | null;
}

interface BlockView {
  id: string;
  kind: string;
  value: string;
  reason: string;
  createdAt: string;
}

const enc = encodeURIComponent;

/** An account argument: its id (acct_...) or its email (looked up with search). */
async function accountIdOf(session: Session, given: string): Promise<string> {
  if (!given.includes('@')) return given;
  const client = await session.authed();
  const res = await client.call<{ accounts: AccountView[] }>('GET', `/api/admin/search?q=${enc(given)}`);
  const exact = res.accounts.find((a) => a.email === given.trim().toLowerCase());
  if (!exact) throw new Error(`no account has the email ${given}`);
  return exact.id;
}

/** Adds the operators' subcommands to `admin` (the backup commands join the same `admin`). */
export function registerAdminCommands(admin: Command): void {
  admin
    .command('search')
    .description('find accounts and sites by email, slug, handle, domain, content hash or a site URL')
    .argument('<query>')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway admin search someone@example.com\n  slipway admin search https://bright-fox-42.example.net/login.html',
    )
    .action(
      action(async (session, [q]) => {
        const { out } = session;
        const res = await (await session.authed()).call<{ accounts: AccountView[]; sites: SiteView[] }>(
          'GET',
          `/api/admin/search?q=${enc(q!)}`,
        );
        out.result(res, () => {
          if (res.accounts.length === 0 && res.sites.length === 0) return out.line('Nothing found.');
          if (res.accounts.length > 0)
            out.table(
              ['ACCOUNT', 'EMAIL', 'PLAN', 'SITES', 'STATE', 'SINCE'],
              res.accounts.map((a) => [
                a.id,
                a.email,
                a.plan,
                String(a.siteCount),
                a.suspended ? 'suspended' : 'active',
                formatDate(a.createdAt),
              ]),
            );
          if (res.sites.length > 0)
            out.table(
              ['SITE', 'STATUS', 'OWNER'],
              res.sites.map((s) => [
                s.slug,
                s.takenDown ? 'taken down' : s.status,
                s.accountId ?? 'anonymous',
              ]),
            );
        });
      }),
    );

  admin
    .command('takedown')
    .description('take a site down: 451 on every address and node at once; its files are kept')
    .argument('<slug>')
    .requiredOption('--reason <text>', 'why (the owner sees it)')
    .option('--block-content', 'also block its files from being published again')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway admin takedown bright-fox-42 --reason "Phishing (report 12)" --block-content',
    )
    .action(
      action<{ reason: string; blockContent?: boolean; yes?: boolean }>(async (session, [slug], flags) => {
        const { out } = session;
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `take ${slug} down`, `Take ${slug} down on every address?`);
        const res = await client.call<{ slug: string; takenDown: true; blockedHashes: number }>(
          'POST',
          `/api/admin/sites/${enc(slug!)}/takedown`,
          { reason: flags.reason, blockContent: flags.blockContent === true },
        );
        out.result(res, () =>
          out.line(
            `Took ${slug} down.${res.blockedHashes > 0 ? ` Blocked ${res.blockedHashes} file hashes.` : ''}`,
          ),
        );
      }),
    );

  admin
    .command('reinstate')
    .description('undo a takedown: the site is served again')
    .argument('<slug>')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ yes?: boolean }>(async (session, [slug], flags) => {
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `reinstate ${slug}`, `Serve ${slug} again?`);
        const res = await client.call('DELETE', `/api/admin/sites/${enc(slug!)}/takedown`);
        session.out.result(res, () => session.out.line(`${slug} is served again.`));
      }),
    );

  admin
    .command('delete-site')
    .description('delete a site and its files for good')
    .argument('<slug>')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ yes?: boolean }>(async (session, [slug], flags) => {
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `delete ${slug}`, `Delete ${slug} and its files permanently?`);
        const res = await client.call('DELETE', `/api/admin/sites/${enc(slug!)}`);
        session.out.result(res, () => session.out.line(`Deleted ${slug}.`));
      }),
    );

  admin
    .command('suspend')
    .description('suspend an account: its key, tokens and sessions stop working, its sites answer 403')
    .argument('<account>', 'account id (acct_...) or email')
    .requiredOption('--reason <text>', 'why')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ reason: string; yes?: boolean }>(async (session, [account], flags) => {
        const id = await accountIdOf(session, account!);
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `suspend ${account}`, `Suspend ${account}?`);
        const res = await client.call('POST', `/api/admin/accounts/${enc(id)}/suspend`, {
          reason: flags.reason,
        });
        session.out.result(res, () => session.out.line(`Suspended ${account}.`));
      }),
    );

  admin
    .command('unsuspend')
    .description('lift a suspension')
    .argument('<account>', 'account id (acct_...) or email')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ yes?: boolean }>(async (session, [account], flags) => {
        const id = await accountIdOf(session, account!);
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `unsuspend ${account}`, `Lift the suspension of ${account}?`);
        const res = await client.call('DELETE', `/api/admin/accounts/${enc(id)}/suspend`);
        session.out.result(res, () => session.out.line(`Lifted the suspension of ${account}.`));
      }),
    );

  admin
    .command('plan')
    .description("set an account's plan by hand (no end date)")
    .argument('<account>', 'account id (acct_...) or email')
    .argument('<plan>', 'free or hobby')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ yes?: boolean }>(async (session, [account, plan], flags) => {
        const id = await accountIdOf(session, account!);
        const client = await session.authed();
        await confirmOrRefuse(flags.yes, `change the plan of ${account}`, `Set ${account} to ${plan}?`);
        const res = await client.call('PUT', `/api/admin/accounts/${enc(id)}/plan`, { plan });
        session.out.result(res, () => session.out.line(`${account} is on ${plan}.`));
      }),
    );

  admin
    .command('block')
    .description('block an email, email domain, client address or range, or file hash')
    .argument('<kind>', 'email | email_domain | ip | hash')
    .argument('<value>')
    .requiredOption('--reason <text>', 'why')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway admin block email_domain throwaway.example --reason "disposable addresses"\n  slipway admin block ip 203.0.113.0/24 --reason "anonymous spam"',
    )
    .action(
      action<{ reason: string }>(async (session, [kind, value], flags) => {
        const res = await (await session.authed()).call<BlockView>('POST', '/api/admin/blocks', {
          kind,
          value,
          reason: flags.reason,
        });
        session.out.result(res, () => session.out.line(`Blocked ${res.kind} ${res.value} (${res.id}).`));
      }),
    );

  admin
    .command('blocks')
    .description('list the blocks, newest first')
    .option('--kind <kind>', 'only this kind')
    .action(
      action<{ kind?: string }>(async (session, _args, flags) => {
        const { out } = session;
        const q = flags.kind ? `?kind=${enc(flags.kind)}` : '';
        const res = await (await session.authed()).call<{ blocks: BlockView[] }>(
          'GET',
          `/api/admin/blocks${q}`,
        );
        out.result(res, () => {
          if (res.blocks.length === 0) return out.line('Nothing is blocked.');
          out.table(
            ['ID', 'KIND', 'VALUE', 'REASON', 'SINCE'],
            res.blocks.map((b) => [b.id, b.kind, b.value, b.reason, formatDate(b.createdAt)]),
          );
        });
      }),
    );

  admin
    .command('unblock')
    .description('remove a block')
    .argument('<id>', 'the id `slipway admin blocks` shows (blk_...)')
    .action(
      action(async (session, [id]) => {
        const res = await (await session.authed()).call('DELETE', `/api/admin/blocks/${enc(id!)}`);
        session.out.result(res, () => session.out.line(`Removed block ${id}.`));
      }),
    );

  admin
    .command('reports')
    .description('abuse reports, newest first: open ones (or --closed), with the site each names')
    .option('--closed', 'closed reports instead of open ones')
    .action(
      action<{ closed?: boolean }>(async (session, _args, flags) => {
        const { out } = session;
        const res = await (await session.authed()).call<{ reports: ReportView[] }>(
          'GET',
          `/api/admin/reports${flags.closed ? '?status=closed' : ''}`,
        );
        out.result(res, () => {
          if (res.reports.length === 0) return out.line(`No ${flags.closed ? 'closed' : 'open'} reports.`);
          out.table(
            ['ID', 'CATEGORY', 'SITE', 'URL', 'REPORTED'],
            res.reports.map((r) => [r.id, r.category, r.site?.slug ?? '-', r.url, formatDate(r.createdAt)]),
          );
        });
      }),
    );

  admin
    .command('close-report')
    .description('close an abuse report without acting on the site (a takedown closes its reports itself)')
    .argument('<id>', 'the id `slipway admin reports` shows (rpt_...)')
    .requiredOption('--reason <text>', 'why (kept in the audit log)')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .action(
      action<{ reason: string; yes?: boolean }>(async (session, [id], flags) => {
        const client = await session.authed();
        await confirmOrRefuse(
          flags.yes,
          `close report ${id}`,
          `Close report ${id} without acting on the site?`,
        );
        const res = await client.call<{ id: string; status: 'closed' }>(
          'POST',
          `/api/admin/reports/${enc(id!)}/close`,
          { reason: flags.reason },
        );
        session.out.result(res, () => session.out.line(`Closed report ${id}.`));
      }),
    );

  admin
    .command('audit')
    .description("every account's audit log, newest first (who changed what, from where, when)")
    .option('--account <account>', "one account's log: its id (acct_...) or email")
    .option('--limit <n>', 'entries to show, 1-200 (default 50)')
    .option('--before <id>', 'entries older than this entry id (the last one shown) or time')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway admin audit --limit 20\n  slipway admin audit --account someone@example.com --json',
    )
    .action(
      action<{ account?: string; limit?: string; before?: string }>(async (session, _args, flags) => {
        const { out } = session;
        const q = new URLSearchParams();
        if (flags.account) q.set('account', await accountIdOf(session, flags.account));
        if (flags.limit) q.set('limit', flags.limit);
        if (flags.before) q.set('before', flags.before);
        const query = q.size > 0 ? `?${q}` : '';
        const res = await (await session.authed()).call<{ entries: AuditView[] }>(
          'GET',
          `/api/admin/audit${query}`,
        );
        out.result(res, () => {
          if (res.entries.length === 0) return out.line('Nothing recorded.');
          out.table(
            ['WHEN', 'ACCOUNT', 'WHO', 'FROM', 'ACTION', 'TARGET', 'ID'],
            res.entries.map((e) => [
              formatDate(e.at),
              e.accountId ?? '-',
              e.actor.id ? `${e.actor.kind} ${e.actor.id}` : e.actor.kind,
              e.ip ?? '-',
              e.action,
              e.target,
              e.id,
            ]),
          );
        });
      }),
    );
}

export function registerAdmin(program: Command): Command {
  const admin = program
    .command('admin')
    .description(
      'operator commands (accounts in ADMIN_EMAILS; backup and restore run on the service machine)',
    );
  registerAdminCommands(admin);
  return admin;
}
