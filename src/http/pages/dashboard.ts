// The dashboard (issue 14): /dashboard (the account's sites, plan, handle, links, domains, API key) and a
// site's page /dashboard/sites/:slug (files, metadata, password, expiry, variables, proxy hosts, deploy
// tokens, versions, duplicate, delete). Every form posts to an action that calls the same core function as the
// API (same validation, same error messages) and redirects back (303) with a one-line notice signed for
// the session; the session and the form's CSRF token are checked by the plugin's preHandler (session.ts).

import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { describeAccount } from '../../core/account.js';
import { analyticsEnabled, siteAnalytics, visitorsOfSites } from '../../core/analytics.js';
import { AUDIT_PAGE_DEFAULT, type AuditEntry, listAudit } from '../../core/audit.js';
import { type BillingDeps, checkout, portal } from '../../core/billing.js';
import { addDomain, type DomainDeps, deleteDomain, listDomains, verifyDomain } from '../../core/domains.js';
import { ApiError } from '../../core/errors.js';
import { formatBytes } from '../../core/format.js';
import { type HandleDeps, putHandle } from '../../core/handle.js';
import { previewUrl } from '../../core/hosts.js';
import { createLink, deleteLink, type LinkDeps, listLinks } from '../../core/links.js';
import {
  deleteProxyHost,
  listProxyHosts,
  type ProxyHostDeps,
  putProxyHosts,
} from '../../core/proxy-hosts.js';
import type { PublishDeps } from '../../core/publish.js';
import type { SessionDeps } from '../../core/sessions.js';
import { regenerateApiKey } from '../../core/signin.js';
import {
  deleteSite,
  duplicateSite,
  listSites,
  listVersions,
  restoreVersion,
  siteDetails,
  siteNotPublishedReason,
  updateMetadata,
} from '../../core/sites.js';
import {
  createDeployToken,
  DEFAULT_TOKEN_DAYS,
  listDeployTokens,
  MAX_TOKEN_NAME_CHARS,
  revokeDeployToken,
} from '../../core/tokens.js';
import { deleteVariable, listVariables, putVariables, type VariableDeps } from '../../core/variables.js';
import { cookieValue } from '../../shared/cookies.js';
import { html, type SafeHtml, timeTag } from '../../shared/html.js';
import { ANALYTICS_RANGES, type AnalyticsRange, analyticsBody } from './analytics-view.js';
import { type Form, formOf, sendPage } from './page.js';
import { formSession, type Session, signInFirst, webSessions } from './session.js';

/** What the dashboard uses: the core services the API's routes use, and the sessions'. */
export interface DashboardPagesDeps {
  sessions: SessionDeps;
  publish: PublishDeps;
  secrets: VariableDeps & ProxyHostDeps;
  hosts: HandleDeps & DomainDeps & LinkDeps;
  billing: BillingDeps;
  /** Whether the site proxy is on: a site page says when it is not (its hosts are then unused). */
  proxy: { config: { proxyEnabled: boolean } };
}

/** Where the dashboard lives, and where signing in returns to when it was asked for. */
const HOME = '/dashboard';

/** Past this many files a site's page shows its file list collapsed. */
const FILES_SHOWN_OPEN = 50;

/** What a slug in a dashboard address can look like; anything else is no site at all. */
const SLUG_SHAPE = /^[a-z0-9-]{1,63}$/;

/** The dashboard's 404 page for a site that is not the caller's, or no site at all. */
const siteNotFound = (reply: FastifyReply) =>
  sendPage(reply, 404, 'Not found', html`<h1>Site not found</h1><p><a href="/dashboard">Your sites</a></p>`);

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The expiry form's choices: keep, never, or a time from now (ttlSeconds as the API takes it). */
const EXPIRY_CHOICES = [
  { value: 'keep', label: 'Keep the current expiry' },
  { value: 'never', label: 'Never expires' },
  { value: String(3600), label: 'In 1 hour' },
  { value: String(86_400), label: 'In 1 day' },
  { value: String(7 * 86_400), label: 'In 7 days' },
  { value: String(30 * 86_400), label: 'In 30 days' },
];

/** The deploy-token form's lifetimes (expiresInDays as the API takes it); the API's default is preselected. */
const TOKEN_DAYS = [7, 30, 90, 365];

/**
 * A preview or alias address as link text: it may wrap after `<slug>--` (a phone is narrower than the
 * host), never between the two hyphens, which would read as one hyphen at a line's end and another at
 * the next line's start.
 */
function addressText(url: string): SafeHtml {
  const at = url.indexOf('--');
  if (at < 0) return html`${url}`;
  return html`${url.slice(0, at)}<span class="nowrap">--</span><wbr>${url.slice(at + 2)}`;
}

const handleUrl = (config: SessionDeps['config'], handle: string) =>
  `${config.scheme}://${handle}.${config.siteDomain}/`;

/** The account-wide sections of /dashboard: plan, handle, domains, API key. */
async function accountSections(
  deps: DashboardPagesDeps,
  s: Session,
  csrf: SafeHtml,
  siteSlugs: string[],
): Promise<SafeHtml> {
  const domains = await listDomains(deps.hosts, s.account);
  const links = await listLinks(deps.hosts, s.account);
  const hobby = s.account.plan === 'hobby';
  // Where a link can mount a site: the handle (an empty `domain`) and each active domain.
  const mounts = [
    ...(s.account.handle ? [{ value: '', label: `Your handle (${s.account.handle})` }] : []),
    ...domains.domains
      .filter((d) => d.status === 'active')
      .map((d) => ({ value: d.domain, label: d.domain })),
  ];
  return html`<h2>Plan</h2>
<p>Plan: <strong>${s.account.plan}</strong>.</p>
${
  hobby
    ? html`<form method="post" action="/dashboard/portal">${csrf}<button type="submit">Manage subscription</button></form>`
    : html`<form method="post" action="/dashboard/upgrade">${csrf}<button type="submit">Upgrade to Hobby</button></form>`
}
<h2>Handle</h2>
<p>${
    s.account.handle
      ? html`Your handle: <a href="${handleUrl(deps.sessions.config, s.account.handle)}">${handleUrl(deps.sessions.config, s.account.handle)}</a>`
      : 'No handle yet.'
  }${hobby ? '' : ' Handles come with Hobby.'}</p>
${
  hobby
    ? html`<form method="post" action="/dashboard/handle">${csrf}<label for="handle">${s.account.handle ? 'Change your handle' : 'Choose a handle'}</label>
<input id="handle" name="handle" value="${s.account.handle ?? ''}" required minlength="3" maxlength="30" pattern="[a-z0-9][a-z0-9-]*[a-z0-9]" autocapitalize="none" spellcheck="false"> <button type="submit">Save</button></form>`
    : ''
}
<h2>Links</h2>
<p class="muted">Mount one of your sites at a path of your handle or of an active domain.</p>
${
  links.links.length === 0
    ? html`<p class="muted">No links.</p>`
    : html`<ul>${links.links.map(
        (l) =>
          html`<li><a href="${l.url}">${l.url}</a> → ${l.slug} <form method="post" action="/dashboard/links/delete">${csrf}<input type="hidden" name="id" value="${l.id}"><button class="danger" type="submit" aria-label="Remove the link ${l.url}">Remove</button></form></li>`,
      )}</ul>`
}
${
  siteSlugs.length === 0 || mounts.length === 0
    ? html`<p class="muted">${siteSlugs.length === 0 ? 'Publish a site first: a link needs a published site.' : 'Links need a handle (Hobby) or an active custom domain.'}</p>`
    : html`<form method="post" action="/dashboard/links">${csrf}
<label for="link-slug">Site</label><select id="link-slug" name="slug" required>${siteSlugs.map((slug) => html`<option>${slug}</option>`)}</select>
<label for="link-domain">On</label><select id="link-domain" name="domain">${mounts.map(
        (m) => html`<option value="${m.value}">${m.label}</option>`,
      )}</select>
<label for="link-location">Path</label><input id="link-location" name="location" value="/">
<p><button type="submit">Link</button></p></form>`
}
<h2>Custom domains</h2>
${
  domains.domains.length === 0
    ? html`<p class="muted">No domains.</p>`
    : html`<table class="stack"><thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">DNS records to create</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${domains.domains.map(
        (
          d,
        ) => html`<tr><td data-label="Domain">${d.domain}</td><td data-label="Status">${d.status} (TLS ${d.sslStatus})</td>
<td data-label="DNS records"><p>CNAME <code class="record">${d.domain}</code> → <code class="record" data-copy="the CNAME target">${deps.sessions.config.cnameTarget}</code></p>
<p>TXT <code class="record">${d.verificationTxtName}</code> = <code class="record" data-copy="the TXT value">${d.verificationTxtValue}</code></p></td>
<td class="actions"><form method="post" action="/dashboard/domains/verify">${csrf}<input type="hidden" name="domain" value="${d.domain}"><button type="submit" aria-label="Verify ${d.domain}">Verify</button></form>
<form method="post" action="/dashboard/domains/delete" data-confirm="Delete ${d.domain}? It stops serving at once.">${csrf}<input type="hidden" name="domain" value="${d.domain}"><button class="danger" type="submit" aria-label="Delete ${d.domain}">Delete</button></form></td></tr>`,
      )}</tbody></table>`
}
<form method="post" action="/dashboard/domains">${csrf}<label for="domain">Add a domain</label>
<input id="domain" name="domain" placeholder="www.example.com" required> <button type="submit">Add</button></form>
<h2>API key</h2>
<p>A new key replaces the current one at once: scripts and the CLI using the old key stop working.</p>
<form method="post" action="/dashboard/api-key" data-confirm="Replace your API key? Scripts and the CLI using the current key stop working at once.">${csrf}<button class="danger" type="submit">Regenerate the API key</button></form>`;
}

/**
 * A new deploy token travels from the create form's POST to the page that shows it (a 303 to a GET, so
 * a reload or Back never posts the form again and never makes a second token) in a cookie that only
 * that page's path receives, sealed (AES-256-GCM) under a key derived from the CSRF key, the session
 * and the site, and cleared by the first page that reads it: the token is shown once.
 */
const NEW_TOKEN_COOKIE = 'slipway_new_token';
const NEW_TOKEN_TTL_S = 300;
const newTokenPath = (slug: string) => `/dashboard/sites/${slug}/new-token`;

function newTokenKey(csrfKey: Buffer, session: string, slug: string): Buffer {
  return createHmac('sha256', csrfKey).update(`new-deploy-token\0${session}\0${slug}`).digest();
}

function sealNewToken(key: Buffer, shown: { token: string; expiresAt: string }): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  const body = Buffer.concat([cipher.update(JSON.stringify(shown), 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
}

function openNewToken(key: Buffer, sealed: string | undefined): { token: string; expiresAt: string } | null {
  if (!sealed || sealed.length > 400) return null;
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
    const shown = JSON.parse(text.toString('utf8')) as { token?: unknown; expiresAt?: unknown };
    return typeof shown.token === 'string' && typeof shown.expiresAt === 'string'
      ? { token: shown.token, expiresAt: shown.expiresAt }
      : null;
  } catch {
    return null;
  }
}

export function dashboardPages(deps: DashboardPagesDeps): FastifyPluginAsync {
  const web = webSessions(deps.sessions);
  const { publish: publishDeps, secrets: secretDeps, hosts: hostDeps, billing: billingDeps } = deps;

  /** /dashboard: the account's sites, then its account-wide sections. */
  async function dashboardPage(reply: FastifyReply, s: Session, notice?: SafeHtml) {
    const view = await describeAccount(deps.sessions.db, s.account, deps.sessions.config.planOverrides);
    const sites = await listSites(publishDeps, s.account, { limit: 100 });
    // A site that never went live (a refused or unfinished first publish) is no site to open or link yet.
    const reasons = new Map<string, string | null>();
    for (const site of sites.sites) {
      if (site.status === 'pending')
        reasons.set(site.slug, await siteNotPublishedReason(publishDeps, s.account, site.slug));
    }
    const visitors = await visitorsOfSites(
      publishDeps,
      sites.sites.map((site) => site.slug),
    );
    const rows = sites.sites.map((site) => {
      const reason = reasons.get(site.slug);
      return html`<tr><td data-label="Site" class="nowrap"><a href="/dashboard/sites/${site.slug}">${site.slug}</a>${
        site.status === 'pending'
          ? ''
          : html` <a class="muted" href="${site.siteUrl}" aria-label="Open ${site.slug}">open</a>`
      }</td><td data-label="Status">${
        site.status === 'pending'
          ? html`<strong>Not published yet</strong> <span class="muted">(${reason ?? 'never finalized'})</span>`
          : site.status
      }</td>
<td data-label="Visitors (7 days)"><a href="/dashboard/sites/${site.slug}/analytics" aria-label="Analytics of ${site.slug}">${String(visitors.get(site.slug) ?? 0)}</a></td><td data-label="Files">${site.fileCount}</td><td data-label="Size" class="nowrap">${formatBytes(site.totalSize)}</td><td data-label="Expires">${timeTag(site.expiresAt)}</td></tr>`;
    });
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
    : html`<table class="stack"><thead><tr><th scope="col">Site</th><th scope="col">Status</th><th scope="col">Visitors (7 days)</th><th scope="col">Files</th><th scope="col">Size</th><th scope="col">Expires</th></tr></thead><tbody>${rows}</tbody></table>`
}
<p><a href="/dashboard/audit">Activity log</a>: who changed what in this account, from which address, when.</p>
${await accountSections(
  deps,
  s,
  web.csrfField(s.token),
  sites.sites.filter((site) => site.status !== 'pending').map((site) => site.slug),
)}
<h2>Session</h2>
<form method="post" action="/logout">${web.csrfField(s.token)}<p><button class="secondary" type="submit">Sign out</button></p></form>`,
    );
  }

  /** The page that shows a new deploy token (once), or says it was shown already. */
  function newTokenPage(
    reply: FastifyReply,
    slug: string,
    shown: { token: string; expiresAt: string } | null,
  ) {
    const back = html`<p><a href="/dashboard/sites/${slug}">Back to ${slug}</a></p>`;
    if (!shown) {
      return sendPage(
        reply,
        200,
        'Deploy token',
        html`<h1>Deploy token for ${slug}</h1>
<p>A deploy token is shown once, right after it is created, and not again (only a hash of it is kept). If you did not copy it, revoke it on the site's page and create another.</p>
${back}`,
      );
    }
    const baseUrl = deps.sessions.config.baseUrl.replace(/\/+$/, '');
    return sendPage(
      reply,
      200,
      'New deploy token',
      html`<h1>Deploy token for ${slug}</h1>
<p class="warn" role="alert">Copy it now: it is shown once, and not again after you leave or reload this page. Store it as a CI secret named <code>SLIPWAY_TOKEN</code>; it expires ${timeTag(shown.expiresAt)}.</p>
<pre data-copy="the deploy token"><code id="deploy-token">${shown.token}</code></pre>
<p>In the CI job, with <code>SLIPWAY_TOKEN</code> set:</p>
<pre data-copy="the command"><code>SLIPWAY_URL=${baseUrl} \\
slipway publish ./dist --archive --slug ${slug}</code></pre>
<p class="muted">Add <code>--preview --alias pr-42</code> to publish a preview instead of going live. <code>docs/ci.md</code> has whole GitHub Actions and GitLab CI jobs.</p>
${back}`,
    );
  }

  return async (app) => {
    web.guard(app);

    /** A dashboard action: refusals of core are shown as a notice on `returnTo`. */
    const action = (
      path: string,
      returnTo: (body: Form) => string,
      run: (s: Session, body: Form, reply: FastifyReply) => Promise<string | undefined>,
    ) =>
      app.post(path, { schema: { hide: true } }, async (req, reply) => {
        const s = formSession(req);
        const body = formOf(req);
        try {
          const notice = await run(s, body, reply);
          if (reply.sent) return reply;
          return web.back(reply, s, returnTo(body), notice ?? 'Done.');
        } catch (err) {
          if (err instanceof ApiError && err.status < 500)
            return web.back(reply, s, returnTo(body), `${err.code}: ${err.message}`);
          throw err;
        }
      });
    const sitePage = (body: Form) => `/dashboard/sites/${encodeURIComponent(body.slug ?? '')}`;
    const home = () => HOME;

    app.get(HOME, { schema: { hide: true } }, async (req, reply) => {
      const s = req.webSession;
      if (!s) return signInFirst(reply, HOME);
      return dashboardPage(reply, s, web.notice(req, s));
    });

    // The account's audit log (core/audit.ts), newest first, AUDIT_PAGE_DEFAULT a page.
    app.get('/dashboard/audit', { schema: { hide: true } }, async (req, reply) => {
      const s = req.webSession;
      if (!s) return signInFirst(reply, '/dashboard/audit');
      const q = req.query as { before?: unknown };
      let entries: AuditEntry[];
      try {
        entries = (await listAudit(deps.sessions.db, s.account, { before: q.before })).entries;
      } catch (err) {
        if (err instanceof ApiError && err.status < 500) entries = [];
        else throw err;
      }
      const who = (e: AuditEntry) =>
        e.actor.kind === 'key'
          ? 'API key'
          : e.actor.kind === 'session'
            ? 'Dashboard'
            : e.actor.kind === 'token'
              ? 'Deploy token'
              : e.actor.kind === 'operator'
                ? 'Operator'
                : 'System';
      const detail = (e: AuditEntry) =>
        Object.entries(e.details)
          .map(
            ([k, v]) =>
              `${k}: ${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
          )
          .join('; ');
      const rows = entries.map(
        (e) =>
          html`<tr><td data-label="When" class="nowrap">${timeTag(e.at)}</td><td data-label="Who">${who(e)}${
            e.actor.id ? html` <span class="muted">${e.actor.id}</span>` : ''
          }</td><td data-label="From"><code>${e.ip ?? '-'}</code></td><td data-label="What"><code>${e.action}</code> ${e.target}</td><td data-label="Details" class="muted">${detail(e)}</td></tr>`,
      );
      const last = entries[entries.length - 1];
      return sendPage(
        reply,
        200,
        'Activity log',
        html`<h1>Activity log</h1>
<p>Every change to your sites, versions, keys, deploy tokens, domains, handle, links, plan, variables (names only) and proxy hosts: who made it, from which address, when. Kept for ${String(deps.sessions.config.auditRetentionDays)} days.</p>
${
  rows.length === 0
    ? html`<p class="muted">Nothing ${q.before ? 'older' : 'recorded yet'}.</p>`
    : html`<table class="stack"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">From</th><th scope="col">What</th><th scope="col">Details</th></tr></thead><tbody>${rows}</tbody></table>`
}
${entries.length === AUDIT_PAGE_DEFAULT && last ? html`<p><a href="/dashboard/audit?before=${last.id}">Older entries</a></p>` : ''}
<p><a href="/dashboard">Back to the dashboard</a></p>`,
      );
    });

    app.get('/dashboard/sites/:slug', { schema: { hide: true } }, async (req, reply) => {
      const { slug } = req.params as { slug: string };
      // Not a slug at all (a bad path, whoever asks): a 404 page, not a detour through sign-in.
      if (!SLUG_SHAPE.test(slug)) {
        return siteNotFound(reply);
      }
      const s = req.webSession;
      if (!s) return signInFirst(reply, encodeURIComponent(req.url));
      let site: Awaited<ReturnType<typeof siteDetails>>;
      try {
        site = await siteDetails(publishDeps, s.account, slug);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          return siteNotFound(reply);
        }
        throw err;
      }
      const notPublished = await siteNotPublishedReason(publishDeps, s.account, slug);
      const vars = await listVariables(secretDeps, s.account, slug);
      const hosts = await listProxyHosts(secretDeps, s.account, slug);
      const versions = await listVersions(publishDeps, s.account, slug);
      const tokens = await listDeployTokens(publishDeps, s.account, slug);
      const now = publishDeps.clock.now();
      const csrf = web.csrfField(s.token);
      const slugField = html`<input type="hidden" name="slug" value="${slug}">`;
      return sendPage(
        reply,
        200,
        `Site ${slug}`,
        html`<p><a href="/dashboard">← Your sites</a></p>
<h1>${slug}</h1>${web.notice(req, s) ?? ''}
${
  site.takedown === null
    ? ''
    : html`<p class="warn" role="alert"><strong>Taken down</strong> by the operator of this service ${timeTag(site.takedown.at)}: ${site.takedown.reason}. Every address of this site answers 451 (unavailable); its files are kept. Contact the operator if you think this is a mistake.</p>`
}
${
  notPublished === null
    ? ''
    : html`<p class="warn" role="status">Not published yet: ${notPublished}. Nothing is served at its address until a publish of it is finalized.${
        notPublished.startsWith('the last publish was refused')
          ? ' Store each secret as a variable and allow its API host (below), make the page call the API through the site proxy, then publish again: the refusal the CLI or API answered lists each step.'
          : ''
      }</p>`
}
<p><a class="url" href="${site.siteUrl}">${site.siteUrl}</a> · ${site.status} · expires ${timeTag(site.expiresAt)} · password ${site.hasPassword ? 'set' : 'none'}</p>
<p><a href="/dashboard/sites/${slug}/analytics">Analytics: visitors, page views, top pages</a></p>
<h2>Details</h2>
<form method="post" action="/dashboard/sites/metadata">${csrf}${slugField}
<label for="title">Title</label><input id="title" name="title" value="${site.title ?? ''}">
<label for="description">Description</label><input id="description" name="description" value="${site.description ?? ''}">
<label for="ttl">Expiry</label><select id="ttl" name="ttl">${EXPIRY_CHOICES.map(
          (c) => html`<option value="${c.value}">${c.label}</option>`,
        )}</select>
<p><button type="submit">Save</button></p></form>
<h2>Password</h2>
<form method="post" action="/dashboard/sites/password">${csrf}${slugField}
<label for="password">New password</label><input id="password" name="password" type="password" autocomplete="new-password">
<p><button type="submit">Set password</button> <button class="danger" name="clear" value="1" type="submit">Remove password</button></p></form>
<h2>Variables</h2>
<p class="muted">Values are never shown.</p>
<ul>${vars.map(
          (v) =>
            html`<li>${v.name} <form method="post" action="/dashboard/sites/variables/delete">${csrf}${slugField}<input type="hidden" name="name" value="${v.name}"><button class="danger" type="submit" aria-label="Delete the variable ${v.name}">Delete</button></form></li>`,
        )}</ul>
<form method="post" action="/dashboard/sites/variables">${csrf}${slugField}
<label for="var-name">Name</label><input id="var-name" name="name" required>
<label for="var-value">Value</label><input id="var-value" name="value" type="password" required>
<p><button type="submit">Store variable</button></p></form>
<h2>Proxy hosts</h2>${
          deps.proxy.config.proxyEnabled
            ? ''
            : html`<p class="notice">The site proxy is switched off on this server (PROXY_ENABLED=false): pages cannot call these hosts through it until the operator sets PROXY_ENABLED=true and restarts the service (self-hosting: restart with PROXY_ENABLED=true).</p>`
        }
<ul>${hosts.map(
          (h) =>
            html`<li>${h.hostname} <form method="post" action="/dashboard/sites/hosts/delete">${csrf}${slugField}<input type="hidden" name="hostname" value="${h.hostname}"><button class="danger" type="submit" aria-label="Remove ${h.hostname}">Remove</button></form></li>`,
        )}</ul>
<form method="post" action="/dashboard/sites/hosts">${csrf}${slugField}
<label for="host">Allow a host</label><input id="host" name="hostname" placeholder="api.example.com" required> <button type="submit">Allow</button></form>
<section id="deploy-tokens" aria-labelledby="deploy-tokens-title"><h2 id="deploy-tokens-title">Deploy tokens</h2>
<p class="muted">For CI: a token publishes this site (new versions, uploads, finalize, aliases) and nothing else. Set it as <code>SLIPWAY_TOKEN</code> in the job; it is shown once.</p>
${
  tokens.length === 0
    ? html`<p class="muted">No deploy tokens yet. Create one per CI job that publishes this site: each can then be revoked without stopping the others.</p>`
    : html`<table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${tokens.map(
        (tk) =>
          html`<tr><td data-label="Name">${tk.name}</td><td data-label="Expires">${Date.parse(tk.expiresAt) <= now ? html`<strong>expired</strong> ` : ''}${timeTag(tk.expiresAt)}</td><td data-label="Last used">${tk.lastUsedAt === null ? 'never' : timeTag(tk.lastUsedAt)}</td>
<td class="actions"><form method="post" action="/dashboard/sites/tokens/revoke" data-confirm="Revoke ${tk.name}? CI jobs using it stop working at once.">${csrf}${slugField}<input type="hidden" name="id" value="${tk.id}"><button class="danger" type="submit" aria-label="Revoke the token ${tk.name}">Revoke</button></form></td></tr>`,
      )}</tbody></table>`
}
<form method="post" action="/dashboard/sites/tokens">${csrf}${slugField}
<label for="token-name">Name of a new token</label><input id="token-name" name="name" placeholder="GitHub Actions" required maxlength="${String(MAX_TOKEN_NAME_CHARS)}">
<label for="token-days">Expires</label><select id="token-days" name="days">${TOKEN_DAYS.map(
          (d) =>
            html`<option value="${String(d)}"${d === DEFAULT_TOKEN_DAYS ? html` selected` : ''}>In ${plural(d, 'day')}</option>`,
        )}</select>
<p><button type="submit">Create token</button></p></form></section>
<section id="versions" aria-labelledby="versions-title"><h2 id="versions-title">Versions</h2>
${
  versions.length === 0
    ? html`<p class="muted">No published version yet.</p>`
    : html`<p class="muted">Each version keeps its own preview address; an alias address follows the version it points at. Promote makes a version live.</p>
<table class="stack"><thead><tr><th scope="col">Published</th><th scope="col">Preview</th><th scope="col">Aliases</th><th scope="col"><span class="visually-hidden">Status</span></th></tr></thead><tbody>${versions.map(
        (v) =>
          html`<tr><td data-label="Published">${timeTag(v.createdAt)}<br><span class="muted">${plural(v.fileCount, 'file')} · <span class="nowrap">${v.versionId}</span></span></td>
<td data-label="Preview"><a class="url" href="${v.previewUrl}" rel="noopener" target="_blank">${addressText(v.previewUrl)}</a></td>
<td data-label="Aliases">${v.aliases.length === 0 ? html`<span class="muted">none</span>` : v.aliases.map((name, i) => html`${i === 0 ? '' : ', '}<a href="${previewUrl(publishDeps.config, slug, name)}" rel="noopener" target="_blank" aria-label="Open the alias ${name}">${name}</a>`)}</td>
<td class="actions">${
            v.current
              ? html`<strong>live</strong>`
              : html`<form method="post" action="/dashboard/sites/restore" data-confirm="Make this version live? Visitors of ${site.siteUrl} see it at once; the version live now stays in this list and can be promoted back.">${csrf}${slugField}<input type="hidden" name="versionId" value="${v.versionId}"><button type="submit" aria-label="Promote ${v.versionId} to live">Promote</button></form>`
          }</td></tr>`,
      )}</tbody></table>`
}</section>
<h2>Files</h2>
<details id="files"${site.files.length <= FILES_SHOWN_OPEN ? html` open` : ''}><summary>${plural(site.files.length, 'file')}, ${formatBytes(
          site.files.reduce((sum, f) => sum + f.size, 0),
        )}</summary>
<table class="stack"><thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Size</th></tr></thead>
<tbody>${site.files.map((f) => html`<tr><td data-label="Path">${f.path}</td><td data-label="Type">${f.contentType}</td><td data-label="Size" class="nowrap">${formatBytes(f.size)}</td></tr>`)}</tbody></table></details>
<h2>Copy or delete</h2>
<form method="post" action="/dashboard/sites/duplicate">${csrf}${slugField}<button type="submit">Duplicate</button></form>
<form method="post" action="/dashboard/sites/delete">${csrf}${slugField}
<label><input type="checkbox" name="confirm" value="${slug}" required> Delete ${slug} permanently</label>
<button class="danger" type="submit">Delete</button></form>`,
      );
    });

    action('/dashboard/sites/metadata', sitePage, async (s, b) => {
      // "keep" (or nothing) leaves the expiry alone; "never" clears it; a number of seconds from now.
      const ttl = b.ttl ?? 'keep';
      await updateMetadata(publishDeps, s.account, b.slug ?? '', {
        title: b.title || null,
        description: b.description || null,
        ...(ttl === 'keep' ? {} : { ttlSeconds: ttl === 'never' ? null : Number(ttl) }),
      });
      return 'Saved.';
    });
    action(
      '/dashboard/sites/analytics',
      (b) => `/dashboard/sites/${encodeURIComponent(b.slug ?? '')}/analytics`,
      async (s, b) => {
        const on = b.analytics === 'on';
        await updateMetadata(publishDeps, s.account, b.slug ?? '', { analytics: on });
        return on ? 'Counting is on.' : 'Counting is off: new visits are not counted.';
      },
    );
    action('/dashboard/sites/password', sitePage, async (s, b) => {
      await updateMetadata(publishDeps, s.account, b.slug ?? '', {
        password: b.clear ? null : (b.password ?? ''),
      });
      return b.clear ? 'Password removed.' : 'Password set.';
    });
    action('/dashboard/sites/variables', sitePage, async (s, b) => {
      await putVariables(secretDeps, s.account, b.slug ?? '', { [b.name ?? '']: b.value ?? '' });
      return `Variable ${b.name} stored.`;
    });
    action('/dashboard/sites/variables/delete', sitePage, async (s, b) => {
      await deleteVariable(secretDeps, s.account, b.slug ?? '', b.name ?? '');
      return `Variable ${b.name} deleted.`;
    });
    action('/dashboard/sites/hosts', sitePage, async (s, b) => {
      await putProxyHosts(secretDeps, s.account, b.slug ?? '', [b.hostname ?? '']);
      return `${b.hostname} allowed.`;
    });
    action('/dashboard/sites/hosts/delete', sitePage, async (s, b) => {
      await deleteProxyHost(secretDeps, s.account, b.slug ?? '', b.hostname ?? '');
      return `${b.hostname} removed.`;
    });
    // The new token is shown once, by the page this answer sends the browser to (see NEW_TOKEN_COOKIE).
    const https = deps.sessions.config.scheme === 'https';
    const newTokenCookie = (slug: string, value: string, maxAgeS: number) =>
      `${https ? '__Secure-' : ''}${NEW_TOKEN_COOKIE}=${value}; Path=${newTokenPath(slug)}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${https ? '; Secure' : ''}`;
    app.post('/dashboard/sites/tokens', { schema: { hide: true } }, async (req, reply) => {
      const s = formSession(req);
      const b = formOf(req);
      const slug = b.slug ?? '';
      const days = /^\d{1,3}$/.test(b.days ?? '') ? Number(b.days) : Number.NaN;
      let created: Awaited<ReturnType<typeof createDeployToken>>;
      try {
        created = await createDeployToken(publishDeps, s.account, slug, {
          name: b.name ?? '',
          expiresInDays: days,
        });
      } catch (err) {
        if (err instanceof ApiError && err.status < 500)
          return web.back(reply, s, sitePage(b), `${err.code}: ${err.message}`);
        throw err;
      }
      const sealed = sealNewToken(newTokenKey(deps.sessions.csrfKey, s.token, slug), {
        token: created.token,
        expiresAt: created.expiresAt,
      });
      return reply
        .header('set-cookie', newTokenCookie(slug, sealed, NEW_TOKEN_TTL_S))
        .redirect(newTokenPath(slug), 303);
    });
    app.get('/dashboard/sites/:slug/analytics', { schema: { hide: true } }, async (req, reply) => {
      const { slug } = req.params as { slug: string };
      if (!SLUG_SHAPE.test(slug)) return siteNotFound(reply);
      const s = req.webSession;
      if (!s) return signInFirst(reply, encodeURIComponent(req.url));
      const asked = (req.query as { range?: string }).range;
      const range: AnalyticsRange = asked === '24h' || asked === '30d' ? asked : '7d';
      const spec = ANALYTICS_RANGES[range];
      const now = publishDeps.clock.now();
      let counting: boolean;
      try {
        counting = await analyticsEnabled(publishDeps, s.account, slug);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return siteNotFound(reply);
        throw err;
      }
      const report = await siteAnalytics(publishDeps, s.account, slug, {
        from: new Date(now - spec.ms + (spec.granularity === 'hour' ? 3_600_000 : 86_400_000)).toISOString(),
        to: new Date(now).toISOString(),
        granularity: spec.granularity,
      });
      return sendPage(
        reply,
        200,
        `Analytics of ${slug}`,
        html`<p><a href="/dashboard/sites/${slug}">← ${slug}</a></p>
<h1>Analytics of ${slug}</h1>${web.notice(req, s) ?? ''}
${analyticsBody(report, slug, range, counting, web.csrfField(s.token))}`,
      );
    });

    app.get('/dashboard/sites/:slug/new-token', { schema: { hide: true } }, async (req, reply) => {
      const { slug } = req.params as { slug: string };
      // Not a slug at all: the 404 page, as the site page answers it.
      if (!SLUG_SHAPE.test(slug)) {
        return siteNotFound(reply);
      }
      const s = req.webSession;
      if (!s) return signInFirst(reply, encodeURIComponent(`/dashboard/sites/${slug}`));
      const shown = openNewToken(
        newTokenKey(deps.sessions.csrfKey, s.token, slug),
        cookieValue(req.headers.cookie, `${https ? '__Secure-' : ''}${NEW_TOKEN_COOKIE}`),
      );
      reply.header('set-cookie', newTokenCookie(slug, '', 0));
      return newTokenPage(reply, slug, shown);
    });
    action('/dashboard/sites/tokens/revoke', sitePage, async (s, b) => {
      await revokeDeployToken(publishDeps, s.account, b.slug ?? '', b.id ?? '');
      return 'Deploy token revoked: it no longer works.';
    });
    action('/dashboard/sites/restore', sitePage, async (s, b) => {
      await restoreVersion(publishDeps, s.account, b.slug ?? '', b.versionId ?? '');
      return 'Version promoted: it is live now.';
    });
    action('/dashboard/sites/duplicate', home, async (s, b) => {
      const copy = await duplicateSite(publishDeps, s.account, b.slug ?? '');
      return `Copied to ${copy.slug}.`;
    });
    action('/dashboard/sites/delete', sitePage, async (s, b, reply) => {
      if (b.confirm !== b.slug) return 'Tick the box to confirm the deletion.';
      await deleteSite(publishDeps, s.account, b.slug ?? '');
      web.back(reply, s, '/dashboard', `${b.slug} deleted.`);
      return undefined;
    });
    action('/dashboard/domains', home, async (s, b) => {
      const added = await addDomain(hostDeps, s.account, b.domain ?? '');
      return `${added.domain} added: create its DNS records, then verify.`;
    });
    // Core's messages name the API's next call; on this page the next step is the Links form.
    action('/dashboard/domains/verify', home, async (s, b) => {
      const result = await verifyDomain(hostDeps, s.account, b.domain ?? '');
      return result.verified
        ? `${result.domain} is verified: link a site to it under Links.`
        : result.message;
    });
    action('/dashboard/domains/delete', home, async (s, b) => {
      await deleteDomain(hostDeps, s.account, b.domain ?? '');
      return `${b.domain} deleted.`;
    });
    action('/dashboard/links', home, async (s, b) => {
      const link = await createLink(hostDeps, s.account, {
        slug: b.slug ?? '',
        ...(b.domain ? { domain: b.domain } : {}),
        location: b.location || '/',
      });
      return `${link.slug} is linked at ${link.url}.`;
    });
    action('/dashboard/links/delete', home, async (s, b) => {
      await deleteLink(hostDeps, s.account, b.id ?? '');
      return 'Link removed.';
    });
    action('/dashboard/handle', home, async (s, b) => {
      const hadHandle = s.account.handle !== null;
      const result = await putHandle(hostDeps, s.account, b.handle ?? '');
      return hadHandle ? result.message : `Your handle is ${result.handle}: link sites to it under Links.`;
    });
    action('/dashboard/upgrade', home, async (s, _b, reply) => {
      const started = await checkout(billingDeps, s.account);
      reply.redirect(started.checkoutUrl, 303);
      return undefined;
    });
    action('/dashboard/portal', home, async (s, _b, reply) => {
      reply.redirect((await portal(billingDeps, s.account)).portalUrl, 303);
      return undefined;
    });
    // The new key is shown once, on this response; it is never stored in clear or shown again.
    app.post('/dashboard/api-key', { schema: { hide: true } }, async (req, reply) => {
      const s = formSession(req);
      const apiKey = await regenerateApiKey(deps.sessions, s.account, s.token);
      return sendPage(
        reply,
        200,
        'New API key',
        html`<h1>Your new API key</h1>
<p class="warn" role="alert">Copy it now: it is shown once. The old key no longer works, and your other browser sessions were signed out.</p>
<pre data-copy="the API key"><code id="api-key">${apiKey}</code></pre><p><a href="/dashboard">Back to the dashboard</a></p>`,
      );
    });
  };
}
