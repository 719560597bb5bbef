// Built-in HTML pages of the site server (404, 410, 405, password form, ...), in the service's shared
// stylesheet (src/shared/html.ts), inlined: a site host serves no assets of the service.

import type { OutgoingHttpHeaders } from 'node:http';
import { APP_CSS, html, raw, type SafeHtml } from '../shared/html.js';

/** A complete HTML document with the shared stylesheet inlined (a site host serves no assets of ours). */
export function htmlDocument(title: string, body: SafeHtml, head?: SafeHtml): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title>${head}
<style>${raw(APP_CSS)}</style>
</head><body>${body}</body></html>
`.value;
}

const BACK_HOME = html`<p><a href="/">Go to this site's home page</a></p>`;

/** The way to report a site (issue 26), on the pages a visitor of a bad site lands on: the service's /report. */
const reportLink = (baseUrl: string | undefined) =>
  baseUrl === undefined ? '' : html`<p class="muted"><a href="${baseUrl}/report">Report abuse</a></p>`;

/** A built-in page in the shared column; `home` adds a way back to the site's front page. */
function page(title: string, message: string, home = true, baseUrl?: string): string {
  return htmlDocument(
    title,
    html`<main><h1>${title}</h1><p>${message}</p>${home && BACK_HOME}${reportLink(baseUrl)}</main>`,
  );
}

export const notFoundPage = (baseUrl?: string) =>
  page('404 — Not found', 'There is no site or file at this address.', true, baseUrl);
export const gonePage = (baseUrl?: string) => page('410 — Gone', 'This site has expired.', false, baseUrl);

/** A fixed page with its status and precomputed headers: answering costs no allocation. */
export interface BuiltinPage {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
}

export const HTML_TYPE = 'text/html; charset=utf-8';

/** Headers of a generated HTML response (built-in pages are never stored by caches). */
export function htmlHeaders(body: Buffer, cacheControl = 'no-store'): OutgoingHttpHeaders {
  return {
    'Content-Type': HTML_TYPE,
    'Content-Length': String(body.length),
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
  };
}

function builtin(status: number, html: string, extra: OutgoingHttpHeaders = {}): BuiltinPage {
  const body = Buffer.from(html);
  return { status, headers: { ...htmlHeaders(body), ...extra }, body };
}

export const NOT_FOUND = builtin(404, notFoundPage());
export const GONE = builtin(410, gonePage());

/** The pages a site server built once for its service: each with the link to BASE_URL's report page. */
export interface SitePages {
  readonly notFound: BuiltinPage;
  readonly gone: BuiltinPage;
  readonly nothingLinked: BuiltinPage;
}

export function sitePages(baseUrl: string | undefined): SitePages {
  return {
    notFound: builtin(404, notFoundPage(baseUrl)),
    gone: builtin(410, gonePage(baseUrl)),
    nothingLinked: builtin(
      404,
      page('404 — Not found', 'No site is linked at this address yet.', true, baseUrl),
    ),
  };
}
export const BAD_REQUEST = builtin(400, page('400 — Bad request', 'This address is not a valid path.'));
/** RFC 9110 §15.5.6: a 405 lists the methods the resource supports in Allow. */
export const METHOD_NOT_ALLOWED = builtin(
  405,
  page('405 — Method not allowed', 'Sites answer GET and HEAD only.'),
  { Allow: 'GET, HEAD' },
);
export const UNSUPPORTED_FORM = builtin(
  415,
  page('415 — Unsupported media type', 'Send the password form as application/x-www-form-urlencoded.'),
);
export const FORM_TOO_LARGE = builtin(
  413,
  page('413 — Content too large', 'The password form is too large.'),
  // The rest of the body is not read: close the connection instead of draining it (RFC 9110 §15.5.14).
  { Connection: 'close' },
);
/** A form body that trickled in slower than the pace rule allows (core/body-pace.ts; RFC 9110 §15.5.9). */
export const REQUEST_TIMEOUT = builtin(
  408,
  page('408 — Request timeout', 'The form arrived too slowly. Try again.'),
  { Connection: 'close' },
);
/** A handle or custom domain whose owner's plan no longer includes it (nothing was deleted). */
export const PLAN_PAUSED = builtin(
  404,
  page(
    '404 — Not available',
    "This address is paused: the owner's plan no longer includes it. It comes back when the plan does.",
    false,
  ),
);
/** A handle or active custom domain with no site linked at this path. */
export const NOTHING_LINKED = builtin(404, page('404 — Not found', 'No site is linked at this address yet.'));
/** A site an operator took down (RFC 7725: 451 Unavailable For Legal Reasons; the reason goes to the owner only). */
export const TAKEN_DOWN = builtin(
  451,
  page(
    '451 — Unavailable',
    'This site has been taken down by the operator of this service and is not available.',
    false,
  ),
);
/** A site whose owner's account is suspended. */
export const SUSPENDED = builtin(
  403,
  page(
    '403 — Site suspended',
    'This site is unavailable: the account that publishes it is suspended by the operator of this service.',
    false,
  ),
);
export const SERVER_ERROR = builtin(500, page('500 — Server error', 'Something went wrong; try again.'));
/**
 * A site this node has not loaded while its database or object store is unreachable: 503 with Retry-After
 * (RFC 9110 §15.6.4), never a 404 a cache in front would keep.
 */
export const UNAVAILABLE = builtin(
  503,
  page('503 — Service unavailable', 'This site is briefly unavailable; try again in a few seconds.'),
  { 'Retry-After': '5' },
);

const PASSWORD_INTRO = raw(
  '<h1>Password required</h1><p>This site is protected. Enter its password to continue.</p>',
);
const PASSWORD_FORM = raw(
  '<form method="post"><label for="password">Password</label>' +
    '<input id="password" name="password" type="password" autocomplete="current-password" required autofocus> ' +
    '<button type="submit">Continue</button></form>',
);

/** The password form of a protected site; the form posts back to the same address (see password-gate.ts). */
export function passwordFormPage(message: string | null, baseUrl?: string): string {
  const error = message !== null && html`<p class="error" role="alert">${message}</p>`;
  return htmlDocument(
    'Password required',
    html`<main>${PASSWORD_INTRO}${error}${PASSWORD_FORM}${reportLink(baseUrl)}</main>`,
    html`<meta name="robots" content="noindex">`,
  );
}

export function tooManyAttemptsPage(retryAfterS: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterS / 60));
  return page(
    '429 — Too many attempts',
    `Too many wrong passwords from your address. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  );
}
