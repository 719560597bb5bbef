// Abuse reports (CONTRACT "Operators, reports and the audit log"): POST /api/v1/reports (anyone, no key)
// and GET /api/admin/reports (operators only; everyone else gets 404 as for an unknown route).

import { type Static, Type } from 'typebox';
import { MAX_REASON_CHARS } from '../core/operators.js';
import {
  DEFAULT_REPORT_LIST,
  MAX_REPORT_CONTACT_CHARS,
  MAX_REPORT_DETAILS_CHARS,
  MAX_REPORT_LIST,
  MAX_REPORT_URL_CHARS,
  REPORT_CATEGORIES,
} from '../core/reports.js';
import { ERRORS, errorExample, NullableString, operation, SECURITY, Timestamp } from './common.js';
import { at } from './examples.js';

export const ReportCategory = Type.Union(
  [
    Type.Literal(REPORT_CATEGORIES[0]),
    Type.Literal(REPORT_CATEGORIES[1]),
    Type.Literal(REPORT_CATEGORIES[2]),
    Type.Literal(REPORT_CATEGORIES[3]),
    Type.Literal(REPORT_CATEGORIES[4]),
  ],
  { description: REPORT_CATEGORIES.join(', ') },
);

export const CreateReportBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: MAX_REPORT_URL_CHARS,
      description: 'the address of a site this service hosts (its host, a handle or a custom domain)',
    }),
    category: ReportCategory,
    details: Type.String({
      minLength: 1,
      maxLength: MAX_REPORT_DETAILS_CHARS,
      description: `what is wrong, up to ${MAX_REPORT_DETAILS_CHARS} characters`,
    }),
    contact: Type.Optional(
      Type.String({
        maxLength: MAX_REPORT_CONTACT_CHARS,
        description: 'how the operators may reach you (optional)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateReportBody = Static<typeof CreateReportBody>;

export const CreatedReport = Type.Object({ id: Type.String() });

export const ReportInfo = Type.Object({
  id: Type.String(),
  url: Type.String(),
  category: ReportCategory,
  details: Type.String(),
  contact: NullableString,
  reporterIp: Type.String(),
  status: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
  createdAt: Timestamp,
  site: Type.Union([
    Type.Object({
      slug: Type.String(),
      accountId: NullableString,
      createdAt: Timestamp,
      expiresAt: Type.Union([Timestamp, Type.Null()]),
      deleted: Type.Boolean(),
      passwordProtected: Type.Boolean(),
    }),
    Type.Null(),
  ]),
  openReportsForHost: Type.Integer(),
});
export const ReportList = Type.Object({ reports: Type.Array(ReportInfo) });

export const ReportListQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('closed')])),
  limit: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,2}$',
      description: `1 to ${MAX_REPORT_LIST} (default ${DEFAULT_REPORT_LIST})`,
    }),
  ),
  before: Type.Optional(
    Type.String({ format: 'date-time', description: 'reports created before this time' }),
  ),
});

const reportId = 'rpt_3yQ8m2Vd0xk4TnB7cPzW1g';

export const createReport = operation({
  method: 'POST',
  url: '/api/v1/reports',
  schema: {
    tags: ['reports'],
    summary: 'Report abuse on a site (no key needed)',
    description:
      'Stores the report and mails it to the operators. The url must be an address of a site this service ' +
      'hosts. Limited per client address per hour (RATE_LIMIT_REPORTS), together with the /report page.',
    body: CreateReportBody,
    response: { 201: CreatedReport, ...ERRORS },
  },
  config: {
    api: {
      examples: ({ siteDomain, scheme }) => ({
        request: {
          url: `${scheme}://bright-fox-42.${siteDomain}/login.html`,
          category: 'phishing',
          details: 'A copy of a bank sign-in page asking for card numbers.',
          contact: 'me@example.com',
        },
        responses: { 201: { id: reportId } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'category must be one of phishing, malware, spam, copyright, other',
        ),
      }),
    },
  },
});

export const listReports = operation({
  method: 'GET',
  url: '/api/admin/reports',
  schema: {
    tags: ['admin'],
    summary: 'Open abuse reports with the sites they name (operators only)',
    description: 'Newest first. Everyone but the operators (ADMIN_EMAILS) gets 404, as for an unknown route.',
    security: SECURITY,
    querystring: ReportListQuery,
    response: { 200: ReportList, ...ERRORS },
  },
  config: {
    api: {
      examples: ({ siteDomain, scheme }) => ({
        responses: {
          200: {
            reports: [
              {
                id: reportId,
                url: `${scheme}://bright-fox-42.${siteDomain}/login.html`,
                category: 'phishing',
                details: 'A copy of a bank sign-in page asking for card numbers.',
                contact: 'me@example.com',
                reporterIp: '203.0.113.7',
                status: 'open',
                createdAt: at,
                site: {
                  slug: 'bright-fox-42',
                  accountId: null,
                  createdAt: at,
                  expiresAt: at,
                  deleted: false,
                  passwordProtected: false,
                },
                openReportsForHost: 1,
              },
            ],
          },
        },
        error: errorExample('NOT_FOUND', 404, 'No route GET /api/admin/reports'),
      }),
    },
  },
});

export const CloseReportBody = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: MAX_REASON_CHARS,
      description: 'why it is closed without acting on the site (kept in the audit log)',
    }),
  },
  { additionalProperties: false },
);

export const closeReport = operation({
  method: 'POST',
  url: '/api/admin/reports/:id/close',
  schema: {
    tags: ['admin'],
    summary: 'Close an abuse report without acting on the site (operators only)',
    description:
      'For a false or settled report: it leaves the open list (GET /api/admin/reports?status=closed lists ' +
      'it), and the audit log records report.close with the reason. A takedown closes the reports of its ' +
      'site by itself. Closing a closed report changes nothing. Everyone but the operators gets 404.',
    security: SECURITY,
    params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
    body: CloseReportBody,
    response: {
      200: Type.Object({ id: Type.String(), status: Type.Literal('closed') }),
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({
        request: { reason: 'The page is the owner’s own bank’s test site (checked with the bank).' },
        responses: { 200: { id: reportId, status: 'closed' } },
        error: errorExample('NOT_FOUND', 404, 'No such report.'),
      }),
    },
  },
});
