// `slipway webhooks add | list | remove | deliveries | redeliver`: signed deploy webhooks (CONTRACT
// "Webhooks"). The signing secret is printed once, by `add`.

import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { confirmOrRefuse } from '../prompt.js';
import { action } from '../session.js';

const EVENTS =
  'site.published, site.publish_refused, site.claimed, site.expiring, site.deleted, domain.verified, domain.certificate_active';

/** `--events a,b` (repeatable) as one list. */
const collect = (value: string, previous: string[] = []) => [
  ...previous,
  ...value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean),
];

export function registerWebhooks(program: Command): void {
  const webhooks = program.command('webhooks').description('manage signed webhooks for deploy events');

  webhooks
    .command('add')
    .description('register an https:// endpoint; prints its signing secret once')
    .argument('<url>', 'the https:// address that receives the events')
    .option('-e, --events <names>', `comma-separated events (default: every one): ${EVENTS}`, collect)
    .option('--site <slug>', "only this site's events (default: every site of the account)")
    .addHelpText(
      'after',
      `
Examples:
  slipway webhooks add https://hooks.example.com/slipway --events site.published,site.publish_refused
  slipway webhooks add https://hooks.example.com/slipway --site bright-fox-42 --json`,
    )
    .action(
      action<{ events?: string[]; site?: string }>(async (session, [url], flags) => {
        const { out } = session;
        const events = flags.events?.length ? flags.events : EVENTS.split(', ');
        const res = await (await session.authed()).createWebhook({
          url: url!,
          events,
          ...(flags.site ? { slug: flags.site } : {}),
        });
        out.result(res, () => {
          out.line(`Added webhook ${res.id} -> ${res.url}`);
          out.line(`Events: ${res.events.join(', ')}${res.slug ? ` (site ${res.slug})` : ' (every site)'}`);
          out.line();
          out.line(`Signing secret (shown once; keep it with the receiver): ${res.secret}`);
        });
      }),
    );

  webhooks
    .command('list')
    .description('list your webhook endpoints')
    .addHelpText('after', '\nExamples:\n  slipway webhooks list --json')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).listWebhooks();
        out.result(res, () => {
          if (res.webhooks.length === 0) return out.line('No webhooks.');
          out.table(
            ['ID', 'URL', 'SITE', 'EVENTS'],
            res.webhooks.map((w) => [w.id, w.url, w.slug ?? '(all)', w.events.join(',')]),
          );
        });
      }),
    );

  webhooks
    .command('remove')
    .description('remove an endpoint and its delivery log')
    .argument('<id>')
    .option('-y, --yes', 'do not ask for confirmation (required without a terminal)')
    .addHelpText('after', '\nExamples:\n  slipway webhooks remove whk_... --yes')
    .action(
      action<{ yes?: boolean }>(async (session, [id], flags) => {
        const { out } = session;
        await confirmOrRefuse(flags.yes, `remove webhook ${id}`, `Remove webhook ${id}?`);
        const res = await (await session.authed()).deleteWebhook(id!);
        out.result(res, () => out.line(`Removed webhook ${id}.`));
      }),
    );

  webhooks
    .command('deliveries')
    .description("an endpoint's newest deliveries: status, attempts, last answer")
    .argument('<id>')
    .addHelpText('after', '\nExamples:\n  slipway webhooks deliveries whk_...')
    .action(
      action(async (session, [id]) => {
        const { out } = session;
        const res = await (await session.authed()).listWebhookDeliveries(id!);
        out.result(res, () => {
          if (res.deliveries.length === 0) return out.line('No deliveries yet.');
          out.table(
            ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'CREATED'],
            res.deliveries.map((d) => [
              d.id,
              d.event,
              d.status,
              String(d.attempts),
              d.lastStatusCode !== null ? String(d.lastStatusCode) : (d.lastError ?? '-'),
              formatDate(d.createdAt),
            ]),
          );
        });
      }),
    );

  webhooks
    .command('redeliver')
    .description('send a delivery again now (same webhook-id)')
    .argument('<id>')
    .argument('<deliveryId>')
    .addHelpText('after', '\nExamples:\n  slipway webhooks redeliver whk_... msg_...')
    .action(
      action(async (session, [id, deliveryId]) => {
        const { out } = session;
        const res = await (await session.authed()).redeliverWebhook(id!, deliveryId!);
        out.result(res, () => out.line(`Delivery ${res.id} is queued again.`));
      }),
    );
}
