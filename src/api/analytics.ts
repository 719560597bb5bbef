// Visitor analytics (CONTRACT "Analytics", issue 25): GET /api/v1/publish/:slug/analytics, the owner's
// counts of the site by hour or day. How visitors are counted: docs/analytics.md.

import { type Static, Type } from 'typebox';
import { MAX_DAY_RANGE_DAYS } from '../core/analytics.js';
import { ERRORS, errorExample, operation, SECURITY, SlugParams, Timestamp } from './common.js';
import { slug } from './examples.js';

export const AnalyticsQuery = Type.Object({
  from: Type.Optional(
    Type.String({
      maxLength: 40,
      description: 'start of the range (ISO 8601 date or date-time; default: `to` less 7 days)',
    }),
  ),
  to: Type.Optional(
    Type.String({ maxLength: 40, description: 'end of the range, exclusive (ISO 8601; default: now)' }),
  ),
  granularity: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      description: `\`hour\` (ranges of at most 8 days: hourly counts are kept 7 days) or \`day\` (at most ${MAX_DAY_RANGE_DAYS} days; daily counts are kept ANALYTICS_RETENTION_DAYS). Default: hour for ranges up to 2 days, else day`,
    }),
  ),
});
export type AnalyticsQuery = Static<typeof AnalyticsQuery>;

const Count = Type.Integer({ minimum: 0 });

export const AnalyticsReport = Type.Object({
  slug: Type.String(),
  from: Timestamp,
  to: Timestamp,
  granularity: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  totals: Type.Object({
    pageViews: Type.Integer({
      minimum: 0,
      description: '200 HTML answers (and viewer pages) to GETs of non-bots',
    }),
    visitors: Type.Integer({
      minimum: 0,
      description:
        'distinct visitors (estimated: HyperLogLog, standard error 3.25 %); a visitor is counted once per UTC day',
    }),
    bytes: Type.Integer({ minimum: 0, description: 'body bytes sent, every answer of the site' }),
    notFound: Type.Integer({ minimum: 0, description: '404 answers to non-bots' }),
    bots: Type.Integer({ minimum: 0, description: 'answers to requests whose user agent is a bot' }),
    statuses: Type.Object(
      { '1xx': Count, '2xx': Count, '3xx': Count, '4xx': Count, '5xx': Count },
      { description: "every answer of the site (bots' included) by status class" },
    ),
  }),
  series: Type.Array(Type.Object({ start: Timestamp, pageViews: Count, visitors: Count })),
  topPaths: Type.Array(Type.Object({ path: Type.String(), pageViews: Count })),
  topReferrers: Type.Array(Type.Object({ host: Type.String(), pageViews: Count })),
  notFoundPaths: Type.Array(Type.Object({ path: Type.String(), count: Count })),
  topHosts: Type.Array(Type.Object({ host: Type.String(), pageViews: Count }), {
    description:
      "page views by the host they came through: the site's own, its preview and alias hosts, a handle or a custom domain",
  }),
});
export type AnalyticsReport = Static<typeof AnalyticsReport>;

export const getAnalytics = operation({
  method: 'GET',
  url: '/api/v1/publish/:slug/analytics',
  schema: {
    tags: ['analytics'],
    summary: "The site's visits: page views, visitors, top pages, referrers, hosts and 404s",
    description:
      'Counted by the service as it answers (no script, no cookie): see docs/analytics.md. Counts reach ' +
      'this answer within ANALYTICS_FLUSH_S (plus one second). A page view is a 200 HTML answer (or the ' +
      'viewer page) to a GET whose user agent is not a bot. Owner only (API key or session). Switch ' +
      'counting off for a site with PATCH .../metadata {"analytics": false}.',
    security: SECURITY,
    params: SlugParams,
    querystring: AnalyticsQuery,
    response: { 200: AnalyticsReport, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          200: {
            slug,
            from: '2026-11-17T00:00:00.000Z',
            to: '2026-11-19T00:00:00.000Z',
            granularity: 'day',
            totals: {
              pageViews: 412,
              visitors: 131,
              bytes: 9_830_112,
              notFound: 7,
              bots: 58,
              statuses: { '1xx': 0, '2xx': 1304, '3xx': 96, '4xx': 7, '5xx': 0 },
            },
            series: [
              { start: '2026-11-17T00:00:00.000Z', pageViews: 190, visitors: 64 },
              { start: '2026-11-18T00:00:00.000Z', pageViews: 222, visitors: 71 },
            ],
            topPaths: [
              { path: '/', pageViews: 260 },
              { path: '/docs/', pageViews: 152 },
            ],
            topReferrers: [{ host: 'news.ycombinator.com', pageViews: 88 }],
            notFoundPaths: [{ path: '/favicon.ico', count: 7 }],
            topHosts: [
              { host: 'demo.slipway.example', pageViews: 401 },
              { host: 'demo--staging.slipway.example', pageViews: 11 },
            ],
          },
        },
        error: errorExample('INVALID_REQUEST', 400, 'granularity must be hour or day'),
      }),
    },
  },
});
