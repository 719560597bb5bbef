// Sign-in for people (issue 14): /login (email -> a code by mail -> a session cookie) and /logout. The
// sign-in forms are bound to the pre-sign-in nonce, sign-out to the session (session.ts checks both);
// the code is asked for and checked by the same core functions as the API's, under the same limits.

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MailConfig } from '../../config.js';
import { ApiError } from '../../core/errors.js';
import { endSession, type SessionDeps, startSession } from '../../core/sessions.js';
import { requestCode, type SignInDeps, verifyCodeForSession } from '../../core/signin.js';
import { html, type SafeHtml } from '../../shared/html.js';
import { formOf, sendPage } from './page.js';
import { formSession, webSessions } from './session.js';

/** Where sign-in goes when `next` names nowhere acceptable. */
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

export interface LoginPagesDeps {
  sessions: SessionDeps;
  signIn: SignInDeps;
  /** Where codes go, for the "check your email" page: the dev mailer's log and file, or SMTP. */
  config: { mail: MailConfig };
}

/** The site a sign-in is for when `next` is a claim link's page (/claim?slug=...), else null. */
function claimedSlug(next: string, base: URL): string | null {
  const url = new URL(next, base);
  const slug = url.searchParams.get('slug');
  return url.pathname === '/claim' && slug && /^[a-z0-9-]{1,63}$/.test(slug) ? slug : null;
}

/** Where the code went: with the dev mailer (no SMTP_URL) no mail leaves the machine. */
function whereTheCodeIs(mail: MailConfig): SafeHtml {
  return mail.transport === 'dev'
    ? html`<p class="warn">On this service no mail server is set up (no <code>SMTP_URL</code>), so no mail leaves the
machine: the code is in the service’s log (its standard output: the terminal running <code>npm start</code>) and in
<code>${mail.outboxFile}</code>.</p>`
    : html`<p class="muted">Check your inbox (and the spam folder); the mail can take a minute.</p>`;
}

export function loginPages(deps: LoginPagesDeps): FastifyPluginAsync {
  const web = webSessions(deps.sessions);
  const base = new URL(deps.sessions.config.baseUrl);
  /** The sign-in forms: bound to the nonce cookie, since no session exists yet. */
  const signInForm = { schema: { hide: true }, config: { form: 'sign-in' as const } };

  /** A refusal of core on a sign-in form: its headers (Retry-After of a 429) and its message. */
  function refusal(reply: FastifyReply, err: ApiError | undefined) {
    if (!err) return '';
    if (err.headers) reply.headers(err.headers);
    return html`<p class="error" role="alert">${err.message}</p>`;
  }

  function loginForm(req: FastifyRequest, reply: FastifyReply, next: string, error?: ApiError) {
    const csrf = web.csrfField(web.nonce(req, reply));
    const alert = refusal(reply, error);
    const claim = claimedSlug(next, base);
    return sendPage(
      reply,
      error?.status ?? 200,
      claim ? `Sign in to claim ${claim}` : 'Sign in',
      html`<h1>${claim ? `Sign in to claim ${claim}` : 'Sign in'}</h1>
${claim ? html`<p>Sign in (or create an account: the same form) and the site <strong>${claim}</strong> moves into your account.</p>` : ''}
<p>We email you a code; no password.</p>
${alert}
<form method="post" action="/login">${csrf}<input type="hidden" name="next" value="${next}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<p><button type="submit">Send me a code</button></p></form>`,
    );
  }

  function codeForm(req: FastifyRequest, reply: FastifyReply, email: string, next: string, error?: ApiError) {
    const csrf = web.csrfField(web.nonce(req, reply));
    const alert = refusal(reply, error);
    const claim = claimedSlug(next, base);
    return sendPage(
      reply,
      error?.status ?? 200,
      'Enter your code',
      html`<h1>Check your email</h1>
<p>We sent a code to <strong>${email}</strong>. It works once, for 10 minutes.${claim ? html` Enter it here, then you can claim ${claim}.` : ''}</p>
${whereTheCodeIs(deps.config.mail)}
${alert}
<form method="post" action="/login/code">${csrf}<input type="hidden" name="next" value="${next}">
<input type="hidden" name="email" value="${email}">
<label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" placeholder="XXXX-XXXX" required autofocus autocapitalize="characters" spellcheck="false">
<p><button type="submit">Sign in</button></p></form>
<p><a href="/login?next=${encodeURIComponent(next)}">Send a new code, or use another email</a></p>`,
    );
  }

  return async (app) => {
    web.guard(app);

    app.get('/login', { schema: { hide: true } }, async (req, reply) => {
      const next = safeNext((req.query as Record<string, unknown>).next, base);
      if (req.webSession) return reply.redirect(next, 303);
      return loginForm(req, reply, next);
    });

    app.post('/login', signInForm, async (req, reply) => {
      const body = formOf(req);
      const next = safeNext(body.next, base);
      try {
        const sent = await requestCode(deps.signIn, body.email ?? '', { ip: req.clientAddress });
        return codeForm(req, reply, sent.email, next);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) return loginForm(req, reply, next, err);
        throw err;
      }
    });

    app.post('/login/code', signInForm, async (req, reply) => {
      const body = formOf(req);
      const next = safeNext(body.next, base);
      try {
        const account = await verifyCodeForSession(deps.signIn, body.email ?? '', body.code ?? '', {
          ip: req.clientAddress,
        });
        web.signedIn(reply, await startSession(deps.sessions.db, account.id, deps.sessions.clock.now()));
        return reply.redirect(next, 303);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500)
          return codeForm(req, reply, body.email ?? '', next, err);
        throw err;
      }
    });

    app.post('/logout', { schema: { hide: true } }, async (req, reply) => {
      await endSession(deps.sessions.db, formSession(req).token);
      web.signedOut(reply);
      return reply.redirect('/', 303);
    });
  };
}
