// The abuse report page (issue 26): GET /report?url=... shows the form (works without JavaScript), POST
// /report sends it through the same rule and limit as POST /api/v1/reports (core/reports.ts). The form is
// bound to the pre-sign-in nonce (CSRF), as reporters are usually signed out. Also /.well-known/security.txt
// (RFC 9116) with ABUSE_CONTACT.

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import {
  createReport,
  MAX_REPORT_CONTACT_CHARS,
  MAX_REPORT_DETAILS_CHARS,
  MAX_REPORT_URL_CHARS,
  REPORT_CATEGORIES,
  type ReportDeps,
} from '../../core/reports.js';
import type { SessionDeps } from '../../core/sessions.js';
import { html } from '../../shared/html.js';
import { abuseContactHtml, formOf, sendPage } from './page.js';
import { webSessions } from './session.js';

const CATEGORY_LABELS: Record<(typeof REPORT_CATEGORIES)[number], string> = {
  phishing: 'Phishing (imitates another site to take passwords or payment details)',
  malware: 'Malware (harmful downloads or scripts)',
  spam: 'Spam',
  copyright: 'Copyright infringement',
  other: 'Something else',
};
/** security.txt's Expires (RFC 9116 §2.5.5: less than a year ahead is recommended). */
const SECURITY_TXT_DAYS = 180;

export interface ReportPagesDeps {
  sessions: SessionDeps;
  reports: ReportDeps;
  config: { baseUrl: string; abuseContact: string | undefined };
}

interface Values {
  url: string;
  category: string;
  details: string;
  contact: string;
}

/** Only http(s) values are kept from ?url= (anything else is no address to prefill). */
const prefill = (raw: unknown): string =>
  typeof raw === 'string' && raw.length <= MAX_REPORT_URL_CHARS && /^https?:\/\//i.test(raw) ? raw : '';

export function reportPages(deps: ReportPagesDeps): FastifyPluginAsync {
  const web = webSessions(deps.sessions);
  const contact = abuseContactHtml(deps.config.abuseContact);

  function form(req: FastifyRequest, reply: FastifyReply, values: Values, error?: ApiError) {
    if (error?.headers) reply.headers(error.headers);
    const csrf = web.csrfField(web.nonce(req, reply));
    const options = REPORT_CATEGORIES.map(
      (c) =>
        html`<option value="${c}"${c === values.category ? html` selected` : ''}>${CATEGORY_LABELS[c]}</option>`,
    );
    return sendPage(
      reply,
      error?.status ?? 200,
      'Report abuse',
      html`<h1>Report abuse</h1>
<p>Tell the operators of this service about a site hosted here that is phishing, spreading malware, spam or
infringing copyright. They read every report.${contact ? html` You can also write to ${contact}.` : ''}</p>
${error ? html`<p class="error" role="alert">${error.message}</p>` : ''}
<form method="post" action="/report">${csrf}
<p><label for="url">Address of the site</label>
<input id="url" name="url" type="url" inputmode="url" required maxlength="${String(MAX_REPORT_URL_CHARS)}" value="${values.url}" placeholder="https://name.example.site/page" class="wide"></p>
<p><label for="category">What is wrong</label>
<select id="category" name="category" required>
<option value=""${values.category === '' ? html` selected` : ''} disabled>Choose one</option>
${options}
</select></p>
<p><label for="details">Details</label>
<textarea id="details" name="details" rows="6" required maxlength="${String(MAX_REPORT_DETAILS_CHARS)}" class="wide" placeholder="What you saw, and where on the site">${values.details}</textarea></p>
<p><label for="contact">Your email (optional, if you want an answer)</label>
<input id="contact" name="contact" type="text" autocomplete="email" maxlength="${String(MAX_REPORT_CONTACT_CHARS)}" value="${values.contact}" class="wide"></p>
<p><button type="submit">Send the report</button></p>
</form>`,
    );
  }

  return async (app) => {
    web.guard(app);

    app.get('/report', { schema: { hide: true } }, async (req, reply) =>
      form(req, reply, {
        url: prefill((req.query as Record<string, unknown>).url),
        category: '',
        details: '',
        contact: '',
      }),
    );

    app.post('/report', { schema: { hide: true }, config: { form: 'sign-in' } }, async (req, reply) => {
      const body = formOf(req);
      const values: Values = {
        url: body.url ?? '',
        category: body.category ?? '',
        details: body.details ?? '',
        contact: body.contact ?? '',
      };
      try {
        const { id } = await createReport(deps.reports, values, { ip: req.clientAddress });
        return sendPage(
          reply,
          201,
          'Report sent',
          html`<h1>Thank you</h1>
<p class="ok" role="status">Your report about <code>${values.url}</code> was sent to the operators (reference <code>${id}</code>).</p>
<p><a href="/report">Report another site</a> · <a href="/">Home</a></p>`,
        );
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) return form(req, reply, values, err);
        throw err;
      }
    });

    app.get('/.well-known/security.txt', { schema: { hide: true } }, async (_req, reply) => {
      const base = deps.config.baseUrl;
      const expires = new Date(deps.reports.clock.now() + SECURITY_TXT_DAYS * 86_400_000);
      expires.setUTCMilliseconds(0);
      const lines = [
        ...(deps.config.abuseContact ? [`Contact: ${deps.config.abuseContact}`] : []),
        `Contact: ${base}/report`,
        `Expires: ${expires.toISOString().replace('.000Z', 'Z')}`,
        'Preferred-Languages: en',
        `Canonical: ${base}/.well-known/security.txt`,
        '',
      ];
      return reply
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'public, max-age=86400')
        .send(lines.join('\n'));
    });
  };
}
