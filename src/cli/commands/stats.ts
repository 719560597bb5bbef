// `slipway stats <slug>`: a site's visits (CONTRACT "Analytics", docs/analytics.md): totals, a series by
// day or hour, top pages, referrers and 404s, as tables or (`--json`) the endpoint's answer.

import type { Command } from 'commander';
import { formatBytes } from '../output.js';
import { action } from '../session.js';
import { positiveInt } from './publish.js';

interface StatsFlags {
  days?: number;
  hours?: number;
  from?: string;
  to?: string;
}

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description("a site's visits: page views, visitors, top pages, referrers and 404s")
    .argument('<slug>')
    .option('--days <n>', 'the last n days, by day (default 7)', positiveInt)
    .option('--hours <n>', 'the last n hours, by hour (at most 192)', positiveInt)
    .option('--from <iso>', 'start (ISO 8601), instead of --days')
    .option('--to <iso>', 'end, exclusive (ISO 8601; default now)')
    .addHelpText(
      'after',
      `
Examples:
  slipway stats bright-fox-42
  slipway stats bright-fox-42 --hours 24
  slipway stats bright-fox-42 --days 30 --json`,
    )
    .action(
      action<StatsFlags>(async (session, [slug], flags) => {
        const { out } = session;
        const client = await session.authed();
        const now = Date.now();
        const query: { from?: string; to?: string; granularity?: 'hour' | 'day' } = {};
        if (flags.to !== undefined) query.to = flags.to;
        if (flags.hours !== undefined) {
          query.granularity = 'hour';
          query.from = new Date(now - flags.hours * 3_600_000).toISOString();
        } else {
          query.granularity = 'day';
          const days = flags.days ?? 7;
          query.from = new Date(now - days * 86_400_000).toISOString();
        }
        if (flags.from !== undefined) query.from = flags.from;
        const r = await client.getAnalytics(slug!, query);
        out.result(r, () => {
          out.line(
            `${slug}: ${r.totals.pageViews} page views, ${r.totals.visitors} visitors, ` +
              `${r.totals.notFound} not found, ${r.totals.bots} bot requests, ${formatBytes(r.totals.bytes)} sent`,
          );
          out.line('');
          out.table(
            [r.granularity === 'hour' ? 'HOUR (UTC)' : 'DAY (UTC)', 'PAGE VIEWS', 'VISITORS'],
            r.series.map((p) => [
              r.granularity === 'hour' ? p.start.slice(0, 16).replace('T', ' ') : p.start.slice(0, 10),
              String(p.pageViews),
              String(p.visitors),
            ]),
          );
          if (r.topPaths.length > 0) {
            out.line('');
            out.table(
              ['PAGE', 'VIEWS'],
              r.topPaths.map((p) => [p.path, String(p.pageViews)]),
            );
          }
          if (r.topReferrers.length > 0) {
            out.line('');
            out.table(
              ['REFERRER', 'VIEWS'],
              r.topReferrers.map((p) => [p.host, String(p.pageViews)]),
            );
          }
          if (r.notFoundPaths.length > 0) {
            out.line('');
            out.table(
              ['NOT FOUND', 'COUNT'],
              r.notFoundPaths.map((p) => [p.path, String(p.count)]),
            );
          }
          if (r.topHosts.length > 1) {
            out.line('');
            out.table(
              ['HOST', 'VIEWS'],
              r.topHosts.map((p) => [p.host, String(p.pageViews)]),
            );
          }
        });
      }),
    );
}
