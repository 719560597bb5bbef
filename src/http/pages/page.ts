// How every web page of the BASE_URL host leaves: the shared layout (src/shared/html.ts) with this host's
// hashed stylesheet and script, the navigation, and the pages' security headers (a strict
// Content-Security-Policy: nothing is loaded from another host, no inline script or style). Also what
// the pages' forms are parsed with: one urlencoded parser for the pages' scope (src/app.ts).

import { createHash } from 'node:crypto';
import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { APP_CSS, html, layout, type SafeHtml } from '../../shared/html.js';
import { APP_JS } from './app-script.js';

/** Asset URLs carry their content's hash: a new version is a new URL, so each is cached for a year. */
export const hashedAsset = (name: string, content: string, ext: string) =>
  `/assets/${name}-${createHash('sha256').update(content).digest('hex').slice(0, 12)}.${ext}`;
export const STYLESHEET_PATH = hashedAsset('app', APP_CSS, 'css');
export const SCRIPT_PATH = hashedAsset('app', APP_JS, 'js');

/** CSP of the service's own pages: same-origin everything, no inline code, never framed. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export const NAV = [
  { href: '/dashboard', label: 'Dashboard' },
  { href: '/docs', label: 'API docs' },
  { href: '/llms.txt', label: 'llms.txt' },
];

export interface PageOptions {
  /** `no-referrer` for pages whose URL carries a token (the billing pages). */
  referrerPolicy?: 'same-origin' | 'no-referrer';
}

/** Sends a page in the shared layout with the pages' security headers. */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: SafeHtml,
  options: PageOptions = {},
) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', options.referrerPolicy ?? 'same-origin')
    .header('cache-control', 'no-store')
    .send(layout({ title, body, stylesheet: STYLESHEET_PATH, script: SCRIPT_PATH, nav: NAV }));
}

/** Largest form body a page accepts (the dashboard's biggest form, a variable's value, fits well below). */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/** A posted form: each field's last value (URLSearchParams), as the pages read it. */
export type Form = Record<string, string | undefined>;

/**
 * The pages' form parser (@fastify/formbody), registered once on the scope that holds every page: the
 * API's routes take JSON only. A repeated field keeps its last value, never becomes an array. The body
 * arrives under the pace rule like every other (src/http/request-body.ts's preParsing hook).
 */
export async function registerFormBodies(app: FastifyInstance): Promise<void> {
  await app.register(formBody, {
    bodyLimit: FORM_BODY_LIMIT_BYTES,
    parser: (text) => Object.fromEntries(new URLSearchParams(text)),
  });
}

/** The request's form (empty when it has no body). */
export const formOf = (req: FastifyRequest): Form => (req.body ?? {}) as Form;

/** ABUSE_CONTACT as people read it: the address of a mailto:, or the URL. */
export function abuseContactHtml(contact: string | undefined): SafeHtml | '' {
  if (contact === undefined) return '';
  const shown = contact.startsWith('mailto:') ? contact.slice('mailto:'.length) : contact;
  return html`<a href="${contact}">${shown}</a>`;
}
