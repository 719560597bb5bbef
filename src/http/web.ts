// Web pages for people (issue 14): /login (email -> code -> a session cookie), /logout, /dashboard,
// /claim. Server-rendered; every form carries a CSRF token bound to the session (or, before sign-in, to
// a nonce cookie) and is refused when the browser says it came from another site. The session never
// holds or shows the API key. Actions call the same core functions as the API.

import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeAccount } from '../core/account.js';
import { ApiError } from '../core/errors.js';
import {
  csrfTokenFor,
  csrfTokenValid,
  endSession,
  noticeMac,
  SESSION_COOKIE,
  SESSION_TTL_MS,
  sessionAccount,
  startSession,
  verifiedNotice,
} from '../core/sessions.js';
import { requestCode, verifyCodeForSession } from '../core/signin.js';
import { claimableSite, claimSite, listSites, siteDetails } from '../core/sites.js';
import { cookieValue } from '../shared/cookies.js';
import { html, type SafeHtml, timeTag } from '../shared/html.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { accountSections, registerDashboard, type Session, type WebDeps, type WebKit } from './dashboard.js';
import { sendPage } from './pages.js';

const NONCE_COOKIE = 'slipway_csrf';
const FORM_BODY_LIMIT = 16 * 1024;

const HOME = '/dashboard';
const MAX_NEXT_CHARS = 500;
/**
 * Printable ASCII but `\`: browsers drop tabs and newlines from a URL and read `\` as `/` (WHATWG URL),
 * and Node refuses a control character or U+2028 in a header (a 500), so none of them may reach Location.
 */
const NEXT_CHARS = /^[\x21-\x5b\x5d-\x7e]+$/;

/**
 * Where to go after sign-in: `next` resolved against BASE_URL, kept only when it stays on the service's
 * origin, as the path, query and fragment of that URL; anything else is the dashboard.
 */
function safeNext(next: unknown, base: URL): string {
  if (typeof next !== 'string' || next.length > MAX_NEXT_CHARS || !NEXT_CHARS.test(next)) return HOME;
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return HOME;
  }
  if (url.origin !== base.origin) return HOME;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // `/.//evil.com` resolves to the path `//evil.com`, which a browser would read as another host.
  return path.startsWith('//') ? HOME : path;
}

export function webRoutes(deps: WebDeps) {
  const web = deps.sessions;
  const publishDeps = deps.publish;
  const signInDeps = deps.signIn;
  const secure = web.config.scheme === 'https' ? '; Secure' : '';
  // Under https the cookies carry the `__Host-` prefix (RFC 6265bis §4.1.3.2): a browser accepts such a
  // cookie only host-only, Secure and on Path=/, so a site on a sibling host (a SITE_DOMAIN under the same
  // parent as BASE_URL) cannot set or shadow the dashboard's session or CSRF nonce with a Domain cookie.
  const cookiePrefix = web.config.scheme === 'https' ? '__Host-' : '';
  const sessionCookie = `${cookiePrefix}${SESSION_COOKIE}`;
  const nonceCookie = `${cookiePrefix}${NONCE_COOKIE}`;
  const base = new URL(web.config.baseUrl);
  const baseOrigin = base.origin;
  const csrfKey = web.csrfKey;

  const cookie = (name: string, value: string, maxAgeS: number) =>
    `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure}`;

  /** The session token and account of a request (undefined when signed out). */
  async function session(req: FastifyRequest) {
    const token = cookieValue(req.headers.cookie, sessionCookie);
    const account = await sessionAccount(web.db, token, web.clock.now());
    return account && token ? { token, account } : undefined;
  }

  /** The pre-sign-in nonce (set when missing) for the login forms' CSRF token. */
  function nonce(req: FastifyRequest, reply: FastifyReply): string {
    const existing = cookieValue(req.headers.cookie, nonceCookie);
    if (existing && /^[A-Za-z0-9_-]{20,64}$/.test(existing)) return existing;
    const fresh = randomBytes(24).toString('base64url');
    reply.header('set-cookie', cookie(nonceCookie, fresh, 3600));
    return fresh;
  }

  /** Forms are refused when the browser marks the request cross-site or its Origin is another site. */
  function crossSite(req: FastifyRequest): boolean {
    if (req.headers['sec-fetch-site'] === 'cross-site') return true;
    const origin = req.headers.origin;
    return origin !== undefined && origin !== 'null' && origin !== baseOrigin;
  }

  /** The sign-in forms (before a session exists): same-site, with the token bound to the nonce cookie. */
  const loginFormAllowed = (req: FastifyRequest, body: Record<string, string | undefined>) =>
    !crossSite(req) && csrfTokenValid(csrfKey, cookieValue(req.headers.cookie, nonceCookie), body._csrf);

  const refused = (reply: FastifyReply) =>
    sendPage(
      reply,
      403,
      'Form refused',
      html`<h1>This form was refused</h1><p>It expired, or it was sent from another site. Nothing was changed.
<a href="/login">Start again</a>.</p>`,
    );

  const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

  /** A refusal of core on a sign-in form: its headers (Retry-After of a 429) and its message. */
  function refusal(reply: FastifyReply, err: ApiError | undefined) {
    if (!err) return '';
    if (err.headers) reply.headers(err.headers);
    return html`<p class="error" role="alert">${err.message}</p>`;
  }

  function loginForm(req: FastifyRequest, reply: FastifyReply, next: string, error?: ApiError) {
    const token = csrfTokenFor(csrfKey, nonce(req, reply));
    const alert = refusal(reply, error);
    return sendPage(
      reply,
      error?.status ?? 200,
      'Sign in',
      html`<h1>Sign in</h1>
<p>We email you a code; no password.</p>
${alert}
<form method="post" action="/login">${csrfField(token)}<input type="hidden" name="next" value="${next}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<p><button type="submit">Send me a code</button></p></form>`,
    );
  }

  function codeForm(req: FastifyRequest, reply: FastifyReply, email: string, next: string, error?: ApiError) {
    const token = csrfTokenFor(csrfKey, nonce(req, reply));
    const alert = refusal(reply, error);
    return sendPage(
      reply,
      error?.status ?? 200,
      'Enter your code',
      html`<h1>Check your email</h1>
<p>We sent a code to <strong>${email}</strong>. It works once, for 10 minutes.</p>
${alert}
<form method="post" action="/login/code">${csrfField(token)}<input type="hidden" name="next" value="${next}">
<input type="hidden" name="email" value="${email}">
<label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" placeholder="XXXX-XXXX" required autofocus autocapitalize="characters" spellcheck="false">
<p><button type="submit">Sign in</button></p></form>
<p><a href="/login?next=${encodeURIComponent(next)}">Send a new code, or use another email</a></p>`,
    );
  }

  async function dashboard(
    reply: FastifyReply,
    s: { token: string; account: AccountRow },
    notice?: SafeHtml,
  ) {
    const view = await describeAccount(web.db, s.account, web.config.planOverrides);
    const sites = await listSites(publishDeps, s.account, { limit: 100 });
    const rows = sites.sites.map(
      (
        site,
      ) => html`<tr><td data-label="Site"><a href="/dashboard/sites/${site.slug}">${site.slug}</a> <a class="muted" href="${site.siteUrl}" aria-label="Open ${site.slug}">open</a></td><td data-label="Status">${site.status}</td>
<td data-label="Files">${site.fileCount}</td><td data-label="Bytes">${site.totalSize}</td><td data-label="Expires">${timeTag(site.expiresAt)}</td></tr>`,
    );
    return sendPage(
      reply,
      200,
      'Dashboard',
      html`<h1>Your sites</h1>${notice ?? ''}
<p>Signed in as ${view.email}. Usage: ${view.usage.sites.used} of ${
        view.usage.sites.limit === 'unlimited' ? 'unlimited' : String(view.usage.sites.limit)
      } sites, ${view.usage.storage.used} of ${view.usage.storage.limit} stored.</p>
${
  rows.length === 0
    ? html`<p class="muted">No sites yet. Publish one with the CLI or the API (see <a href="/">the home page</a>).</p>`
    : html`<table class="stack"><thead><tr><th scope="col">Site</th><th scope="col">Status</th><th scope="col">Files</th><th scope="col">Bytes</th><th scope="col">Expires</th></tr></thead><tbody>${rows}</tbody></table>`
}
${await accountSections(
  web,
  deps,
  s,
  kit,
  sites.sites.map((site) => site.slug),
)}
<h2>Session</h2>
<form method="post" action="/logout">${csrfField(csrfTokenFor(csrfKey, s.token))}<p><button class="secondary" type="submit">Sign out</button></p></form>`,
    );
  }

  const kit: WebKit = {
    session,
    csrfField: (token) => csrfField(csrfTokenFor(csrfKey, token)),
    formAllowed: (req, s, body) => !crossSite(req) && csrfTokenValid(csrfKey, s.token, body._csrf),
    refused,
    back: (reply, s, path, notice) =>
      reply.redirect(
        `${path}${path.includes('?') ? '&' : '?'}done=${encodeURIComponent(notice)}&n=${noticeMac(csrfKey, s.token, notice)}`,
        303,
      ),
    notice: (req, s) => {
      const text = verifiedNotice(csrfKey, s.token, req.query);
      return text === undefined ? undefined : html`<p class="ok" role="status">${text}</p>`;
    },
  };

  return async (app: FastifyInstance) => {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    const form = (req: FastifyRequest) => (req.body ?? {}) as Record<string, string | undefined>;

    app.get('/login', { schema: { hide: true } }, async (req, reply) => {
      const next = safeNext((req.query as Record<string, unknown>).next, base);
      if (await session(req)) return reply.redirect(next, 303);
      return loginForm(req, reply, next);
    });

    app.post('/login', { schema: { hide: true } }, async (req, reply) => {
      const body = form(req);
      const next = safeNext(body.next, base);
      if (!loginFormAllowed(req, body)) return refused(reply);
      try {
        const sent = await requestCode(signInDeps, body.email ?? '', { ip: req.clientAddress });
        return codeForm(req, reply, sent.email, next);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) return loginForm(req, reply, next, err);
        throw err;
      }
    });

    app.post('/login/code', { schema: { hide: true } }, async (req, reply) => {
      const body = form(req);
      const next = safeNext(body.next, base);
      if (!loginFormAllowed(req, body)) return refused(reply);
      try {
        const account = await verifyCodeForSession(signInDeps, body.email ?? '', body.code ?? '', {
          ip: req.clientAddress,
        });
        const token = await startSession(web.db, account.id, web.clock.now());
        reply.header('set-cookie', cookie(sessionCookie, token, SESSION_TTL_MS / 1000));
        return reply.redirect(next, 303);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500)
          return codeForm(req, reply, body.email ?? '', next, err);
        throw err;
      }
    });

    app.post('/logout', { schema: { hide: true } }, async (req, reply) => {
      const s = await session(req);
      if (!s || crossSite(req) || !csrfTokenValid(csrfKey, s.token, form(req)._csrf)) return refused(reply);
      await endSession(web.db, s.token);
      reply.header('set-cookie', cookie(sessionCookie, '', 0));
      return reply.redirect('/', 303);
    });

    app.get('/dashboard', { schema: { hide: true } }, async (req, reply) => {
      const s = await session(req);
      if (!s) return reply.redirect(`/login?next=${HOME}`, 303);
      return dashboard(reply, s, kit.notice(req, s));
    });
    registerDashboard(app, deps, kit);

    // claimUrl (CONTRACT): a used, wrong or expired link says so at once; a good one asks for a sign-in if
    // needed, then one button claims the site and lands on its page in the dashboard.
    const cannotClaim = (reply: FastifyReply, err: ApiError) =>
      sendPage(
        reply,
        err.status,
        'Cannot claim',
        html`<h1>This site cannot be claimed</h1><p>${err.message}.</p>
<p class="muted">An anonymous site can be claimed once, with the link its publisher received, within 24 hours of
publishing.</p><p><a href="/dashboard">Your sites</a></p>`,
      );
    /** The site's page when it already belongs to the signed-in account (a second click, an old tab). */
    const alreadyYours = async (reply: FastifyReply, s: Session | undefined, slug: string) => {
      if (!s) return false;
      try {
        await siteDetails(publishDeps, s.account, slug);
      } catch {
        return false;
      }
      await kit.back(reply, s, `/dashboard/sites/${slug}`, `${slug} is already yours.`);
      return true;
    };

    app.get('/claim', { schema: { hide: true } }, async (req, reply) => {
      const q = req.query as Record<string, unknown>;
      const slug = typeof q.slug === 'string' ? q.slug : '';
      const token = typeof q.token === 'string' ? q.token : '';
      if (!/^[a-z0-9-]{1,63}$/.test(slug) || !token || token.length > 200) {
        return sendPage(
          reply,
          400,
          'Invalid claim link',
          html`<h1>Invalid claim link</h1><p>The link has no site or no token; copy the whole claimUrl.</p>
<p><a href="/dashboard">Your sites</a></p>`,
        );
      }
      const s = await session(req);
      if (await alreadyYours(reply, s, slug)) return reply;
      try {
        await claimableSite(publishDeps, slug, token);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) return cannotClaim(reply, err);
        throw err;
      }
      if (!s) return reply.redirect(`/login?next=${encodeURIComponent(req.url)}`, 303);
      return sendPage(
        reply,
        200,
        'Claim site',
        html`<h1>Claim ${slug}</h1><p>Move this anonymous site into your account (${s.account.email}); it then never expires.</p>
<form method="post" action="/claim">${csrfField(csrfTokenFor(csrfKey, s.token))}
<input type="hidden" name="slug" value="${slug}"><input type="hidden" name="token" value="${token}">
<p><button type="submit">Claim ${slug}</button></p></form>`,
      );
    });

    app.post('/claim', { schema: { hide: true } }, async (req, reply) => {
      const s = await session(req);
      const body = form(req);
      if (!s || crossSite(req) || !csrfTokenValid(csrfKey, s.token, body._csrf)) return refused(reply);
      const slug = body.slug ?? '';
      try {
        await claimSite(publishDeps, s.account, slug, body.token ?? '');
      } catch (err) {
        if (await alreadyYours(reply, s, slug)) return reply;
        if (err instanceof ApiError && err.status < 500) return cannotClaim(reply, err);
        throw err;
      }
      return kit.back(
        reply,
        s,
        `/dashboard/sites/${encodeURIComponent(slug)}`,
        `${slug} is yours now: it no longer expires.`,
      );
    });
  };
}
