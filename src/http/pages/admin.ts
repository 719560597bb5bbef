// The operators' pages (issue 26; docs/admin.md): /admin (search), /admin/accounts/:id, /admin/sites/:slug,
// /admin/blocks. Same sign-in, sessions and CSRF rules as the dashboard (session.ts); every action is a form
// with a confirmation the server checks (the `confirm` box), and data-confirm asks again in the browser.
// Each action calls the same core function as the admin API. Anyone but an operator's session gets the
// 404 page on every /admin address, GET or POST, before the CSRF check or anything else.

import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_PAGE_DEFAULT, listAllAudit, type OperatorAuditEntry } from '../../core/audit.js';
import { ApiError } from '../../core/errors.js';
import {
  addBlock,
  BLOCK_KINDS,
  blocks,
  deleteSiteAsOperator,
  isOperator,
  type OperatorAccount,
  type OperatorDeps,
  type OperatorSite,
  operatorAccount,
  operatorSite,
  removeBlock,
  restoreSite,
  search,
  setAccountPlan,
  suspendAccount,
  takedownSite,
  unsuspendAccount,
} from '../../core/operators.js';
import { closeReport, listReports, type ReportView } from '../../core/reports.js';
import type { SessionDeps } from '../../core/sessions.js';
import { html, type SafeHtml, timeTag } from '../../shared/html.js';
import { type Form, formOf, sendPage } from './page.js';
import { formSession, type Session, webSessions } from './session.js';

export interface AdminPagesDeps {
  sessions: SessionDeps;
  operators: OperatorDeps;
}

const notFoundPage = (reply: FastifyReply) =>
  sendPage(reply, 404, 'Not found', html`<h1>404 — Not found</h1><p>There is no page at this address.</p>`);

const KIND_LABELS: Record<(typeof BLOCK_KINDS)[number], string> = {
  email: 'Email address (sign-in)',
  email_domain: 'Email domain (sign-in)',
  ip: 'Client address or range (anonymous publishing)',
  hash: 'File hash (publishing)',
};

/** The box every action form carries: the server refuses the action without it. */
const confirmBox = (id: string, text: string) =>
  html`<p><label for="${id}"><input id="${id}" type="checkbox" name="confirm" value="yes" required> ${text}</label></p>`;

const adminNav = html`<p class="admin-nav"><a href="/admin">Search</a> · <a href="/admin/reports">Reports</a> · <a href="/admin/blocks">Blocklists</a> · <a href="/admin/audit">Audit log</a></p>`;

const CATEGORY_LABELS: Record<ReportView['category'], string> = {
  phishing: 'Phishing',
  malware: 'Malware',
  spam: 'Spam',
  copyright: 'Copyright',
  other: 'Other',
};

/** One abuse report: what was sent (escaped; the URL as text, never a link to a suspect page) and the site. */
function reportItem(r: ReportView, csrf: SafeHtml): SafeHtml {
  const site = r.site;
  const closeForm =
    r.status !== 'open'
      ? ''
      : html`<details><summary>Close without acting on the site</summary>
<form method="post" action="/admin/reports/close" data-confirm="Close this report without acting on the site?">${csrf}<input type="hidden" name="id" value="${r.id}">
<label for="close-reason-${r.id}">Reason (kept in the audit log)</label><input id="close-reason-${r.id}" name="reason" required maxlength="1000">
${confirmBox(`confirm-close-${r.id}`, 'Close this report')}<button type="submit">Close the report</button></form></details>`;
  return html`<li class="report"><p><strong>${CATEGORY_LABELS[r.category]}</strong> · ${timeTag(r.createdAt)} · from <code>${r.reporterIp}</code>${r.contact ? html` · contact <code>${r.contact}</code>` : ''}</p>
<p><code class="record">${r.url}</code></p>
<p class="report-details">${r.details}</p>
<p>${
    site === null
      ? html`<span class="muted">No site of this service at that address now.</span>`
      : html`Site <a href="/admin/sites/${site.slug}">${site.slug}</a>${site.deleted ? ' (deleted)' : ''}${site.passwordProtected ? ' (password protected)' : ''}, ${site.accountId === null ? 'anonymous' : html`<a href="/admin/accounts/${site.accountId}">owner's account</a>`}, created ${timeTag(site.createdAt)}${r.openReportsForHost > 1 ? html` · <strong>${String(r.openReportsForHost)} open reports</strong> for this address` : ''}`
  }</p>${closeForm}</li>`;
}

const ACTOR_LABELS: Record<OperatorAuditEntry['actor']['kind'], string> = {
  key: 'API key',
  session: 'Dashboard',
  token: 'Deploy token',
  operator: 'Operator',
  system: 'System',
};

const auditDetail = (e: OperatorAuditEntry) =>
  Object.entries(e.details)
    .map(
      ([k, v]) =>
        `${k}: ${Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join('; ');

function accountsTable(accounts: OperatorAccount[]): SafeHtml {
  if (accounts.length === 0) return html`<p class="muted">No accounts.</p>`;
  return html`<table class="stack"><thead><tr><th scope="col">Email</th><th scope="col">Plan</th><th scope="col">Sites</th><th scope="col">State</th><th scope="col">Since</th></tr></thead><tbody>${accounts.map(
    (a) =>
      html`<tr><td data-label="Email"><a href="/admin/accounts/${a.id}">${a.email}</a>${a.operator ? html` <span class="muted">(operator)</span>` : ''}</td><td data-label="Plan">${a.plan}</td><td data-label="Sites">${String(a.siteCount)}</td><td data-label="State">${a.suspended ? html`<strong class="error">suspended</strong>` : 'active'}</td><td data-label="Since">${timeTag(a.createdAt)}</td></tr>`,
  )}</tbody></table>`;
}

function sitesTable(sites: OperatorSite[]): SafeHtml {
  if (sites.length === 0) return html`<p class="muted">No sites.</p>`;
  return html`<table class="stack"><thead><tr><th scope="col">Site</th><th scope="col">Status</th><th scope="col">Owner</th><th scope="col">Created</th></tr></thead><tbody>${sites.map(
    (s) =>
      html`<tr><td data-label="Site"><a href="/admin/sites/${s.slug}">${s.slug}</a></td><td data-label="Status">${s.takenDown ? html`<strong class="error">taken down</strong>` : s.status}</td><td data-label="Owner">${s.accountId === null ? html`<span class="muted">anonymous</span>` : html`<a href="/admin/accounts/${s.accountId}">account</a>`}</td><td data-label="Created">${timeTag(s.createdAt)}</td></tr>`,
  )}</tbody></table>`;
}

export function adminPages(deps: AdminPagesDeps): FastifyPluginAsync {
  const web = webSessions(deps.sessions);
  const ops = deps.operators;

  return async (app) => {
    // Before the guard's CSRF check: a form posted by anyone else is a 404 too, not a "form refused".
    app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
      const s = await web.current(req);
      if (!isOperator(ops.config, s?.account)) return notFoundPage(reply);
    });
    web.guard(app);

    const operator = (req: FastifyRequest): Session => {
      const s = req.webSession;
      if (!s || !isOperator(ops.config, s.account))
        throw new Error('an /admin route reached its handler without an operator');
      return s;
    };

    /** An action: refused without the confirmation box; core refusals come back as the notice. */
    const action = (
      path: string,
      returnTo: (body: Form) => string,
      run: (s: Session, body: Form) => Promise<string>,
    ) =>
      app.post(path, { schema: { hide: true } }, async (req, reply) => {
        const s = formSession(req);
        operator(req);
        const body = formOf(req);
        if (body.confirm !== 'yes') {
          return web.back(reply, s, returnTo(body), 'Nothing was done: tick the confirmation box first.');
        }
        try {
          return web.back(reply, s, returnTo(body), await run(s, body));
        } catch (err) {
          if (err instanceof ApiError && err.status < 500)
            return web.back(reply, s, returnTo(body), `${err.code}: ${err.message}`);
          throw err;
        }
      });

    app.get('/admin', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const q = typeof (req.query as { q?: unknown }).q === 'string' ? (req.query as { q: string }).q : '';
      let results: SafeHtml | string = '';
      if (q.trim() !== '') {
        try {
          const found = await search(ops, q);
          results = html`<h2>Accounts</h2>${accountsTable(found.accounts)}<h2>Sites</h2>${sitesTable(found.sites)}`;
        } catch (err) {
          if (!(err instanceof ApiError) || err.status >= 500) throw err;
          results = html`<p class="error" role="alert">${err.message}</p>`;
        }
      }
      return sendPage(
        reply,
        200,
        'Operators',
        html`<h1>Operators</h1>${adminNav}${web.notice(req, s) ?? ''}
<form method="get" action="/admin" role="search"><label for="q">Find accounts and sites</label>
<input id="q" name="q" value="${q}" placeholder="email, slug, handle, domain, content hash or a site URL" autocapitalize="none" spellcheck="false" required>
<button type="submit">Search</button></form>
${results}`,
      );
    });

    app.get('/admin/accounts/:id', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const { id } = req.params as { id: string };
      let view: Awaited<ReturnType<typeof operatorAccount>>;
      try {
        view = await operatorAccount(ops, id);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return notFoundPage(reply);
        throw err;
      }
      const a = view.account;
      const csrf = web.csrfField(s.token);
      const idField = html`<input type="hidden" name="id" value="${a.id}">`;
      return sendPage(
        reply,
        200,
        `Account ${a.email}`,
        html`${adminNav}<h1>${a.email}</h1>${web.notice(req, s) ?? ''}
<p>Account <code>${a.id}</code>, plan <strong>${a.plan}</strong>${a.handle ? html`, handle <code>${a.handle}</code>` : ''}, since ${timeTag(a.createdAt)}.${a.operator ? ' An operator (ADMIN_EMAILS).' : ''}</p>
${
  a.suspension
    ? html`<p class="warn" role="status"><strong>Suspended</strong> ${timeTag(a.suspension.at)}: ${a.suspension.reason}</p>
<form method="post" action="/admin/accounts/unsuspend" data-confirm="Lift the suspension of ${a.email}? Its key, tokens, sessions and sites work again at once.">${csrf}${idField}
${confirmBox('confirm-unsuspend', `Lift the suspension of ${a.email}`)}<button type="submit">Lift the suspension</button></form>`
    : html`<h2>Suspend</h2><p>Its API key, deploy tokens and sessions stop working and its sites answer 403, on every node at once. Nothing is deleted.</p>
<form method="post" action="/admin/accounts/suspend" data-confirm="Suspend ${a.email}?">${csrf}${idField}
<label for="suspend-reason">Reason</label><input id="suspend-reason" name="reason" required maxlength="1000">
${confirmBox('confirm-suspend', `Suspend ${a.email}`)}<button class="danger" type="submit">Suspend the account</button></form>`
}
<h2>Plan</h2>
<form method="post" action="/admin/accounts/plan" data-confirm="Change the plan of ${a.email}?">${csrf}${idField}
<label for="plan">Plan</label><select id="plan" name="plan">${(['free', 'hobby'] as const).map(
          (p) => html`<option value="${p}"${p === a.plan ? html` selected` : ''}>${p}</option>`,
        )}</select>
${confirmBox('confirm-plan', 'Set this plan by hand (no end date)')}<button type="submit">Set the plan</button></form>
<h2>Sites</h2>${sitesTable(view.sites)}
<p><a href="/admin/audit?account=${encodeURIComponent(a.id)}">This account's audit log</a></p>`,
      );
    });

    app.get('/admin/sites/:slug', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const { slug } = req.params as { slug: string };
      let site: Awaited<ReturnType<typeof operatorSite>>;
      try {
        site = await operatorSite(ops, slug);
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return notFoundPage(reply);
        throw err;
      }
      const csrf = web.csrfField(s.token);
      const slugField = html`<input type="hidden" name="slug" value="${slug}">`;
      const deleted = site.status === 'deleted';
      return sendPage(
        reply,
        200,
        `Site ${slug}`,
        html`${adminNav}<h1>${slug}</h1>${web.notice(req, s) ?? ''}
<p>Status <strong>${site.status}</strong>, ${String(site.fileCount)} files, created ${timeTag(site.createdAt)}, owner ${
          site.accountId === null
            ? 'anonymous'
            : html`<a href="/admin/accounts/${site.accountId}">${site.accountId}</a>`
        }.</p>
${
  deleted
    ? html`<p class="muted">Deleted: nothing is kept and nothing is served.</p>`
    : site.takedown
      ? html`<p class="warn" role="status"><strong>Taken down</strong> ${timeTag(site.takedown.at)}: ${site.takedown.reason}</p>
<form method="post" action="/admin/sites/restore" data-confirm="Serve ${slug} again?">${csrf}${slugField}
${confirmBox('confirm-restore', `Serve ${slug} again on every address`)}<button type="submit">Restore the site</button></form>`
      : html`<h2>Take down</h2><p>Every address of the site answers 451 on every node at once; the owner sees the reason. Its files are kept, so this can be undone.</p>
<form method="post" action="/admin/sites/takedown" data-confirm="Take ${slug} down?">${csrf}${slugField}
<label for="takedown-reason">Reason (shown to the owner)</label><input id="takedown-reason" name="reason" required maxlength="1000">
<p><label for="block-content"><input id="block-content" type="checkbox" name="blockContent" value="yes"> Also block its files from being published again (files other live sites serve are left out)</label></p>
${confirmBox('confirm-takedown', `Take ${slug} down`)}<button class="danger" type="submit">Take the site down</button></form>`
}
${
  deleted
    ? ''
    : html`<h2>Delete</h2><p>Deletes its versions and files for good (the slug is never reissued).</p>
<form method="post" action="/admin/sites/delete" data-confirm="Delete ${slug} and its files for good?">${csrf}${slugField}
${confirmBox('confirm-delete', `Delete ${slug} permanently`)}<button class="danger" type="submit">Delete the site</button></form>`
}`,
      );
    });

    app.get('/admin/reports', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const closed = (req.query as { status?: unknown }).status === 'closed';
      const list = await listReports(ops.db, { status: closed ? 'closed' : 'open' });
      const csrf = web.csrfField(s.token);
      return sendPage(
        reply,
        200,
        'Abuse reports',
        html`${adminNav}<h1>Abuse reports</h1>${web.notice(req, s) ?? ''}
<p>${closed ? html`Closed reports (a takedown closes the reports of its site; a report can also be closed without acting). <a href="/admin/reports">Open reports</a>` : html`Open reports, newest first; open a site to take it down (that closes its reports), or close a report without acting on the site. <a href="/admin/reports?status=closed">Closed reports</a>`}</p>
${list.length === 0 ? html`<p class="muted">No ${closed ? 'closed' : 'open'} reports.</p>` : html`<ul class="reports">${list.map((r) => reportItem(r, csrf))}</ul>`}`,
      );
    });

    app.get('/admin/blocks', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const list = await blocks(ops);
      const csrf = web.csrfField(s.token);
      return sendPage(
        reply,
        200,
        'Blocklists',
        html`${adminNav}<h1>Blocklists</h1>${web.notice(req, s) ?? ''}
<h2>Add a block</h2>
<form method="post" action="/admin/blocks" data-confirm="Add this block?">${csrf}
<label for="kind">What</label><select id="kind" name="kind">${BLOCK_KINDS.map((k) => html`<option value="${k}">${KIND_LABELS[k]}</option>`)}</select>
<label for="value">Value</label><input id="value" name="value" required maxlength="320" placeholder="spam@example.com, example.com, 203.0.113.0/24 or a SHA-256" autocapitalize="none" spellcheck="false">
<label for="block-reason">Reason</label><input id="block-reason" name="reason" required maxlength="1000">
${confirmBox('confirm-block', 'Add this block')}<button class="danger" type="submit">Block</button></form>
<h2>Blocks</h2>
${
  list.length === 0
    ? html`<p class="muted">Nothing is blocked.</p>`
    : html`<table class="stack"><thead><tr><th scope="col">What</th><th scope="col">Value</th><th scope="col">Reason</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${list.map(
        (b) =>
          html`<tr><td data-label="What">${KIND_LABELS[b.kind]}</td><td data-label="Value"><code class="record">${b.value}</code></td><td data-label="Reason">${b.reason}</td><td data-label="Since">${timeTag(b.createdAt)}</td>
<td class="actions"><form method="post" action="/admin/blocks/delete" data-confirm="Remove this block?">${csrf}<input type="hidden" name="id" value="${b.id}"><input type="hidden" name="confirm" value="yes"><button class="secondary" type="submit" aria-label="Remove the block of ${b.value}">Remove</button></form></td></tr>`,
      )}</tbody></table>`
}`,
      );
    });

    app.get('/admin/audit', { schema: { hide: true } }, async (req, reply) => {
      const s = operator(req);
      const q = req.query as { before?: unknown; account?: unknown };
      const account = typeof q.account === 'string' ? q.account.trim() : '';
      const before = typeof q.before === 'string' ? q.before : '';
      let entries: OperatorAuditEntry[] = [];
      let problem: SafeHtml | string = '';
      try {
        entries = (await listAllAudit(ops.db, { before, account })).entries;
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        problem = html`<p class="error" role="alert">${err.message}</p>`;
      }
      const rows = entries.map(
        (e) =>
          html`<tr><td data-label="When" class="nowrap">${timeTag(e.at)}</td><td data-label="What"><code>${e.action}</code> <code class="record">${e.target}</code><br><span class="muted">in ${
            e.accountId === null
              ? 'no account'
              : html`<a href="/admin/audit?account=${encodeURIComponent(e.accountId)}"><code class="record">${e.accountId}</code></a>`
          }</span></td><td data-label="Who">${ACTOR_LABELS[e.actor.kind]}${
            e.actor.id ? html` <code class="record muted">${e.actor.id}</code>` : ''
          }<br><span class="muted">from</span> <code>${e.ip ?? '-'}</code></td><td data-label="Details" class="muted"><span class="url">${auditDetail(e)}</span></td></tr>`,
      );
      const last = entries[entries.length - 1];
      const older =
        entries.length === AUDIT_PAGE_DEFAULT && last
          ? `/admin/audit?before=${encodeURIComponent(last.id)}${account ? `&account=${encodeURIComponent(account)}` : ''}`
          : '';
      return sendPage(
        reply,
        200,
        'Audit log',
        html`${adminNav}<h1>Audit log</h1>${web.notice(req, s) ?? ''}
<p>Every account's changes and every operator action, newest first.</p>
<form method="get" action="/admin/audit"><label for="account">Account id (empty: every account)</label>
<input id="account" name="account" value="${account}" maxlength="100" autocapitalize="none" spellcheck="false">
<button type="submit">Show</button></form>
${problem}${
  rows.length === 0
    ? html`<p class="muted">Nothing ${before ? 'older' : 'recorded'}.</p>`
    : html`<table class="stack"><thead><tr><th scope="col">When</th><th scope="col">What (in whose log)</th><th scope="col">Who, from where</th><th scope="col">Details</th></tr></thead><tbody>${rows}</tbody></table>`
}
${older ? html`<p><a href="${older}">Older entries</a></p>` : ''}`,
      );
    });

    const sitePage = (body: Form) => `/admin/sites/${encodeURIComponent(body.slug ?? '')}`;
    const accountPage = (body: Form) => `/admin/accounts/${encodeURIComponent(body.id ?? '')}`;
    const blocksPage = () => '/admin/blocks';
    const reportsPage = () => '/admin/reports';

    action('/admin/sites/takedown', sitePage, async (s, body) => {
      const r = await takedownSite(ops, s.account, body.slug ?? '', {
        reason: body.reason,
        blockContent: body.blockContent === 'yes',
      });
      return `Taken down.${r.blockedHashes > 0 ? ` ${r.blockedHashes} file hashes blocked.` : ''}`;
    });
    action('/admin/sites/restore', sitePage, async (s, body) => {
      await restoreSite(ops, s.account, body.slug ?? '');
      return 'Restored: the site is served again.';
    });
    action('/admin/sites/delete', sitePage, async (s, body) => {
      await deleteSiteAsOperator(ops, s.account, body.slug ?? '');
      return 'Deleted.';
    });
    action('/admin/accounts/suspend', accountPage, async (s, body) => {
      await suspendAccount(ops, s.account, body.id ?? '', { reason: body.reason });
      return 'Suspended.';
    });
    action('/admin/accounts/unsuspend', accountPage, async (s, body) => {
      await unsuspendAccount(ops, s.account, body.id ?? '');
      return 'The suspension is lifted.';
    });
    action('/admin/accounts/plan', accountPage, async (s, body) => {
      const r = await setAccountPlan(ops, s.account, body.id ?? '', body.plan);
      return `Plan set to ${r.plan}.`;
    });
    action('/admin/blocks', blocksPage, async (s, body) => {
      const b = await addBlock(ops, s.account, {
        kind: body.kind,
        value: body.value ?? '',
        reason: body.reason,
      });
      return `Blocked ${b.value}.`;
    });
    action('/admin/reports/close', reportsPage, async (s, body) => {
      await closeReport(ops, s.account, body.id ?? '', { reason: body.reason });
      return 'Report closed.';
    });
    action('/admin/blocks/delete', blocksPage, async (s, body) => {
      await removeBlock(ops, s.account, body.id ?? '');
      return 'Block removed.';
    });
  };
}
