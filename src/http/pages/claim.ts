// The claimUrl's page (CONTRACT "Web pages", /claim?slug=&token=): a used, wrong or expired link says so
// at once; a good one asks for a sign-in if needed, then one button claims the site and lands on its page
// in the dashboard. The claim itself is core's, as the API's POST /api/v1/publish/:slug/claim.

import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../../core/errors.js';
import type { PublishDeps } from '../../core/publish.js';
import type { SessionDeps } from '../../core/sessions.js';
import { claimableSite, claimSite, siteDetails } from '../../core/sites.js';
import { html } from '../../shared/html.js';
import { formOf, sendPage } from './page.js';
import { formSession, type Session, signInFirst, webSessions } from './session.js';

export interface ClaimPagesDeps {
  sessions: SessionDeps;
  publish: PublishDeps;
}

export function claimPages(deps: ClaimPagesDeps): FastifyPluginAsync {
  const web = webSessions(deps.sessions);

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
  const alreadyYours = async (reply: FastifyReply, s: Session | null, slug: string) => {
    if (!s) return false;
    try {
      await siteDetails(deps.publish, s.account, slug);
    } catch {
      return false;
    }
    await web.back(reply, s, `/dashboard/sites/${slug}`, `${slug} is already yours.`);
    return true;
  };

  return async (app) => {
    web.guard(app);

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
      const s = req.webSession;
      if (await alreadyYours(reply, s, slug)) return reply;
      try {
        await claimableSite(deps.publish, slug, token);
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) return cannotClaim(reply, err);
        throw err;
      }
      if (!s) return signInFirst(reply, encodeURIComponent(req.url));
      return sendPage(
        reply,
        200,
        'Claim site',
        html`<h1>Claim ${slug}</h1><p>Move this anonymous site into your account (${s.account.email}); it then never expires.</p>
<form method="post" action="/claim">${web.csrfField(s.token)}
<input type="hidden" name="slug" value="${slug}"><input type="hidden" name="token" value="${token}">
<p><button type="submit">Claim ${slug}</button></p></form>`,
      );
    });

    app.post('/claim', { schema: { hide: true } }, async (req, reply) => {
      const s = formSession(req);
      const body = formOf(req);
      const slug = body.slug ?? '';
      try {
        await claimSite(deps.publish, s.account, slug, body.token ?? '');
      } catch (err) {
        if (await alreadyYours(reply, s, slug)) return reply;
        if (err instanceof ApiError && err.status < 500) return cannotClaim(reply, err);
        throw err;
      }
      return web.back(
        reply,
        s,
        `/dashboard/sites/${encodeURIComponent(slug)}`,
        `${slug} is yours now: it no longer expires.`,
      );
    });
  };
}
