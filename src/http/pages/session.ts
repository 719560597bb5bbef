// Web sessions of the pages (issue 14): the session and pre-sign-in nonce cookies, and the one
// `preHandler` a page plugin installs (`guard`). It puts the signed-in session on `req.webSession`
// for every route of the plugin and refuses a posted form unless it comes from this site and carries
// the CSRF token bound to the session, or, on the sign-in forms (route config `form: 'sign-in'`), to
// the nonce cookie. Handlers never check either themselves. Also the signed notices of the dashboard.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  csrfTokenFor,
  csrfTokenValid,
  noticeMac,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  type SessionDeps,
  sessionAccount,
  verifiedNotice,
} from '../../core/sessions.js';
import { cookieValue, sessionCookie } from '../../shared/cookies.js';
import { html, type SafeHtml } from '../../shared/html.js';
import type { AccountRow } from '../../store/db/tables/account.js';
import { formOf, sendPage } from './page.js';

export interface Session {
  token: string;
  account: AccountRow;
}

/** What a page's form is bound to: the signed-in session (the default), or the pre-sign-in nonce. */
export type FormBinding = 'session' | 'sign-in';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in web session, set by the page plugins' preHandler (null when signed out). */
    webSession: Session | null;
  }
  interface FastifyContextConfig {
    /** The CSRF binding of a page's form posts (default `session`). */
    form?: FormBinding;
  }
}

const NONCE_COOKIE = 'slipway_csrf';
/** How long the pre-sign-in nonce (and so a sign-in form) lasts. */
const NONCE_TTL_MS = 3_600_000;
const NONCE_FORMAT = /^[A-Za-z0-9_-]{20,64}$/;

export interface WebSessions {
  /**
   * Installs the plugin's one preHandler: `req.webSession` on every route, and every posted form refused
   * (403 page) unless same-site and carrying the CSRF token of its binding (route config `form`).
   */
  guard(app: FastifyInstance): void;
  /** The request's signed-in session (suspended accounts included), without the guard's checks. */
  current(req: FastifyRequest): Promise<Session | undefined>;
  /** The pre-sign-in nonce (set on the reply when missing or malformed) for the sign-in forms' token. */
  nonce(req: FastifyRequest, reply: FastifyReply): string;
  /** A new session's cookie on the reply. */
  signedIn(reply: FastifyReply, token: string): void;
  /** The session cookie removed. */
  signedOut(reply: FastifyReply): void;
  /** The hidden CSRF field of a form bound to a session token (or, before sign-in, the nonce). */
  csrfField(sessionOrNonce: string): SafeHtml;
  /** A 303 to `path` that shows `notice` there, to this session only (signed). */
  back(reply: FastifyReply, s: Session, path: string, notice: string): FastifyReply;
  /** The notice a page was sent back with, if it was signed for this session. */
  notice(req: FastifyRequest, s: Session): SafeHtml | undefined;
}

/** The signed-in session on a form route of a guarded plugin (its preHandler refused the signed-out). */
export function formSession(req: FastifyRequest): Session {
  if (!req.webSession) throw new Error(`${req.url}: a session-bound form reached its handler signed out`);
  return req.webSession;
}

/** The way to the sign-in page and back to `next` (already encoded for a query). */
export const signInFirst = (reply: FastifyReply, next: string) => reply.redirect(`/login?next=${next}`, 303);

export function webSessions(deps: SessionDeps): WebSessions {
  const https = deps.config.scheme === 'https';
  // Under https the cookies carry the `__Host-` prefix (RFC 6265bis §4.1.3.2): a browser accepts such a
  // cookie only host-only, Secure and on Path=/, so a site on a sibling host (a SITE_DOMAIN under the same
  // parent as BASE_URL) cannot set or shadow the dashboard's session or CSRF nonce with a Domain cookie.
  const prefix = https ? '__Host-' : '';
  const sessionName = `${prefix}${SESSION_COOKIE}`;
  const nonceName = `${prefix}${NONCE_COOKIE}`;
  const baseOrigin = new URL(deps.config.baseUrl).origin;
  const { csrfKey } = deps;

  /** The session token and account of a request (undefined when signed out). */
  async function session(req: FastifyRequest): Promise<Session | undefined> {
    const token = cookieValue(req.headers.cookie, sessionName);
    const account = await sessionAccount(deps.db, token, deps.clock.now());
    return account && token ? { token, account } : undefined;
  }

  /** Forms are refused when the browser marks the request cross-site or its Origin is another site. */
  function crossSite(req: FastifyRequest): boolean {
    if (req.headers['sec-fetch-site'] === 'cross-site') return true;
    const origin = req.headers.origin;
    return origin !== undefined && origin !== 'null' && origin !== baseOrigin;
  }

  const refused = (reply: FastifyReply) =>
    sendPage(
      reply,
      403,
      'Form refused',
      html`<h1>This form was refused</h1><p>It expired, or it was sent from another site. Nothing was changed.
<a href="/login">Start again</a>.</p>`,
    );

  /** The page plugin's one preHandler: the session for every route, the CSRF check for every form post. */
  async function preHandler(req: FastifyRequest, reply: FastifyReply) {
    const found = (await session(req)) ?? null;
    if (found !== null && found.account.suspended_at !== null) {
      // A suspended account's sessions answer 401 (kept, not ended: lifting the suspension brings them
      // back); the sign-in pages treat it as signed out, so another account can still sign in.
      req.webSession = null;
      if (/^\/log(in|out)(\/|$)/.test(req.routeOptions.url ?? '')) return;
      return sendPage(
        reply,
        401,
        'Account suspended',
        html`<h1>This account is suspended</h1><p>The operator of this service suspended it. Its sites,
API key, deploy tokens and sessions do not work while it is suspended.</p>
<p>If you think this is a mistake, contact the operator of this service.</p>`,
      );
    }
    req.webSession = found;
    if (req.method === 'GET' || req.method === 'HEAD') return;
    const boundTo =
      req.routeOptions.config.form === 'sign-in'
        ? cookieValue(req.headers.cookie, nonceName)
        : req.webSession?.token;
    if (crossSite(req) || !csrfTokenValid(csrfKey, boundTo, formOf(req)._csrf)) return refused(reply);
  }

  return {
    current: session,
    nonce(req, reply) {
      const existing = cookieValue(req.headers.cookie, nonceName);
      if (existing && NONCE_FORMAT.test(existing)) return existing;
      const fresh = randomBytes(24).toString('base64url');
      reply.header('set-cookie', sessionCookie(nonceName, fresh, NONCE_TTL_MS, https));
      return fresh;
    },
    signedIn: (reply, token) => {
      reply.header('set-cookie', sessionCookie(sessionName, token, SESSION_TTL_MS, https));
    },
    signedOut: (reply) => {
      reply.header('set-cookie', sessionCookie(sessionName, '', 0, https));
    },
    csrfField: (sessionOrNonce) =>
      html`<input type="hidden" name="_csrf" value="${csrfTokenFor(csrfKey, sessionOrNonce)}">`,
    back: (reply, s, path, notice) =>
      reply.redirect(
        `${path}${path.includes('?') ? '&' : '?'}done=${encodeURIComponent(notice)}&n=${noticeMac(csrfKey, s.token, notice)}`,
        303,
      ),
    notice: (req, s) => {
      const text = verifiedNotice(csrfKey, s.token, req.query);
      return text === undefined ? undefined : html`<p class="ok" role="status">${text}</p>`;
    },
    guard: (app) => {
      app.decorateRequest('webSession', null);
      app.addHook('preHandler', preHandler);
    },
  };
}
