// `slipway domains add | verify | list | delete`: custom domains and the DNS records they need.

import type { Command } from 'commander';
import type { DnsRecord } from '../../api/domains.js';
import { formatDate, type Output } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { action } from '../session.js';

/** The records to create; a record rebuilt from the domain list has no note. */
function recordsTable(out: Output, records: Array<Omit<DnsRecord, 'note'> & { note?: string }>): void {
  out.table(
    ['TYPE', 'NAME', 'VALUE'],
    records.map((r) => [r.type, r.name, r.value]),
  );
  for (const r of records) if (r.note) out.line(`  ${r.type} ${r.name}: ${r.note}`);
}

/**
 * The service's texts name its API calls (`then call POST /api/v1/domains/<d>/verify`, `link a site to
 * it with POST /api/v1/links`); a CLI user types `slipway ...`, so human output names the commands.
 * `--json` keeps the service's answer as it is.
 */
export function cliWording(text: string, domain: string): string {
  return text
    .replace(/call POST \/api\/v1\/domains\/\S+\/verify/, `run \`slipway domains verify ${domain}\``)
    .replace(/with POST \/api\/v1\/links\b/, `with \`slipway links add <slug> --domain ${domain}\``);
}

export function registerDomains(program: Command): void {
  const domains = program.command('domains').description('manage custom domains');

  domains
    .command('add')
    .description('add a domain and print the DNS records to create')
    .argument('<domain>')
    .addHelpText('after', '\nExamples:\n  slipway domains add www.example.com')
    .action(
      action(async (session, [domain]) => {
        const { out } = session;
        const res = await (await session.authed()).addDomain(domain!);
        out.result(res, () => {
          out.line(cliWording(res.dns.instructions, res.domain));
          out.line();
          recordsTable(out, res.dns.records);
        });
      }),
    );

  domains
    .command('verify')
    .description('check the DNS records; the domain is served once they are right')
    .argument('<domain>')
    .addHelpText('after', '\nExamples:\n  slipway domains verify www.example.com')
    .action(
      action(async (session, [domain]) => {
        const { out } = session;
        const client = await session.authed();
        const res = await client.verifyDomain(domain!);
        if (out.json) return out.result(res, () => {});
        out.line(cliWording(res.message, res.domain));
        if (res.verified) return;
        // The list carries the TXT record; the CNAME target is named in the message above.
        const entry = (await client.listDomains()).domains.find((d) => d.domain === res.domain);
        if (!entry) return;
        out.line();
        recordsTable(out, [
          { type: 'TXT', name: entry.verificationTxtName, value: entry.verificationTxtValue },
        ]);
      }),
    );

  domains
    .command('list')
    .description('list your domains')
    .addHelpText('after', '\nExamples:\n  slipway domains list --json')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).listDomains();
        out.result(res, () => {
          if (res.domains.length === 0) return out.line('No custom domains.');
          out.table(
            ['DOMAIN', 'STATUS', 'TLS', 'VERIFIED'],
            res.domains.map((d) => [d.domain, d.status, d.sslStatus, formatDate(d.verifiedAt)]),
          );
        });
      }),
    );

  domains
    .command('delete')
    .description('remove a domain (and every link to it)')
    .argument('<domain>')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  slipway domains delete www.example.com\n  slipway domains delete www.example.com --yes --json',
    )
    .action(
      action<{ yes?: boolean }>(async (session, [domain], flags) => {
        const { out } = session;
        await confirmOrRefuse(flags.yes, `remove ${domain}`, `Remove ${domain} and every link to it?`);
        const res = await (await session.authed()).deleteDomain(domain!);
        out.result(res, () => out.line(`Removed ${domain}.`));
      }),
    );
}
