// The audit log (issue 26, CONTRACT "Operators, reports and the audit log"): every mutating route of the
// running app is either audited (AUDITED: its action) or on EXEMPT with the reason; the scenario calls
// every audited route, as an API key, a dashboard session and a deploy token, each from its own address
// (X-Forwarded-For under TRUST_PROXY=1, resolved as src/http/client-address.ts does), and checks each call
// left exactly one entry with the right actor, address, action and target. Then: no secret anywhere in the
// log, nothing recorded for a change that failed, another account reads nothing, paging, retention.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { registeredRoutes } from '../../src/http/errors.js';
import type { AuditRow } from '../../src/store/db/tables/audit.js';
import { type ApiInit, lastCodeFor, signIn, startTestApp, sweepNow, type TestApp } from '../helpers/app.js';
import { type DnsPeer, startDnsPeer } from '../helpers/dns.js';
import { assertPublished, manifestOf, publish, putUpload } from '../helpers/publish.js';
import { fileEntries, tgz } from '../helpers/tar.js';
import { Browser, csrfOf } from '../helpers/web.js';

/** Each mutating route that records, with the action(s) one call of it records. */
const AUDITED: Record<string, string[]> = {
  'POST /api/v1/publish': ['site.create'],
  'PUT /api/v1/publish/:slug': ['version.create'],
  'POST /api/v1/publish/:slug/finalize': ['version.finalize'],
  'DELETE /api/v1/publish/:slug': ['site.delete'],
  'POST /api/v1/publish/:slug/duplicate': ['site.duplicate'],
  'POST /api/v1/publish/:slug/claim': ['site.claim'],
  'PATCH /api/v1/publish/:slug/metadata': ['site.update'],
  'POST /api/v1/publish/:slug/versions/:versionId/restore': ['version.restore'],
  // A one-request deploy is two changes: the version (or site) made, then made live.
  'POST /api/v1/publish/:slug/archive': ['version.create', 'version.finalize'],
  'POST /api/v1/publish/archive': ['site.create', 'version.finalize'],
  'PUT /api/v1/publish/:slug/aliases/:name': ['alias.set'],
  'DELETE /api/v1/publish/:slug/aliases/:name': ['alias.delete'],
  'POST /api/v1/publish/:slug/tokens': ['token.create'],
  'DELETE /api/v1/publish/:slug/tokens/:id': ['token.revoke'],
  'PUT /api/v1/publish/:slug/variables': ['variable.set'],
  'DELETE /api/v1/publish/:slug/variables/:name': ['variable.delete'],
  'PUT /api/v1/publish/:slug/proxy-hosts': ['proxy_host.add'],
  'DELETE /api/v1/publish/:slug/proxy-hosts/:hostname': ['proxy_host.delete'],
  'PUT /api/v1/handle': ['handle.set'],
  'DELETE /api/v1/handle': ['handle.delete'],
  'POST /api/v1/links': ['link.create'],
  'DELETE /api/v1/links/:id': ['link.delete'],
  'POST /api/v1/domains': ['domain.add'],
  'POST /api/v1/domains/:domain/verify': ['domain.verify'],
  'DELETE /api/v1/domains/:domain': ['domain.delete'],
  'POST /api/v1/webhooks': ['webhook.create'],
  'DELETE /api/v1/webhooks/:id': ['webhook.delete'],
  'POST /api/v1/webhooks/:id/deliveries/:deliveryId/redeliver': ['webhook.redeliver'],
  // A sign-in's new key (an existing account) or new account.
  'POST /api/auth/agent/verify-code': ['key.issue'],
  'POST /login/code': ['account.create'],
  'POST /claim': ['site.claim'],
  'POST /dashboard/sites/metadata': ['site.update'],
  'POST /dashboard/sites/password': ['site.update'],
  'POST /dashboard/sites/analytics': ['site.update'],
  'POST /dashboard/sites/variables': ['variable.set'],
  'POST /dashboard/sites/variables/delete': ['variable.delete'],
  'POST /dashboard/sites/hosts': ['proxy_host.add'],
  'POST /dashboard/sites/hosts/delete': ['proxy_host.delete'],
  'POST /dashboard/sites/tokens': ['token.create'],
  'POST /dashboard/sites/tokens/revoke': ['token.revoke'],
  'POST /dashboard/sites/restore': ['version.restore'],
  'POST /dashboard/sites/duplicate': ['site.duplicate'],
  'POST /dashboard/sites/delete': ['site.delete'],
  'POST /dashboard/domains': ['domain.add'],
  'POST /dashboard/domains/verify': ['domain.verify'],
  'POST /dashboard/domains/delete': ['domain.delete'],
  'POST /dashboard/links': ['link.create'],
  'POST /dashboard/links/delete': ['link.delete'],
  'POST /dashboard/handle': ['handle.set'],
  'POST /dashboard/api-key': ['key.regenerate'],
  // Operators (ADMIN_EMAILS): actor operator (their account id), in the owner's log; blocks in no account's.
  'POST /api/admin/sites/:slug/takedown': ['site.takedown'],
  'POST /api/admin/reports/:id/close': ['report.close'],
  'POST /admin/reports/close': ['report.close'],
  'DELETE /api/admin/sites/:slug/takedown': ['site.takedown_lift'],
  'DELETE /api/admin/sites/:slug': ['site.delete'],
  'POST /api/admin/accounts/:id/suspend': ['account.suspend'],
  'DELETE /api/admin/accounts/:id/suspend': ['account.unsuspend'],
  'PUT /api/admin/accounts/:id/plan': ['plan.change'],
  'POST /api/admin/blocks': ['block.add'],
  'DELETE /api/admin/blocks/:id': ['block.remove'],
  'POST /admin/sites/takedown': ['site.takedown'],
  'POST /admin/sites/restore': ['site.takedown_lift'],
  'POST /admin/sites/delete': ['site.delete'],
  'POST /admin/accounts/suspend': ['account.suspend'],
  'POST /admin/accounts/unsuspend': ['account.unsuspend'],
  'POST /admin/accounts/plan': ['plan.change'],
  'POST /admin/blocks': ['block.add'],
  'POST /admin/blocks/delete': ['block.remove'],
};

/** Mutating routes that record nothing themselves, and why. */
const EXEMPT: Record<string, string> = {
  'PUT /api/v1/_upload/*': 'bytes of a version whose creation and finalize are recorded',
  'POST /api/auth/agent/request-code': 'mails a sign-in code; changes no account',
  'POST /login': 'mails a sign-in code; changes no account',
  'POST /logout': 'ends the caller’s own browser session',
  'POST /api/billing/checkout': 'opens a checkout at the provider; the plan change is recorded when it lands',
  'POST /dashboard/upgrade': 'opens a checkout at the provider; the plan change is recorded when it lands',
  'POST /api/billing/portal': 'a link to the billing portal; changes nothing',
  'POST /dashboard/portal': 'a link to the billing portal; changes nothing',
  'POST /api/billing/webhook': 'the provider’s callback: records plan.change (system) when the plan changes',
  'POST /billing/test-checkout/:token': 'the test payment: records plan.change when the plan changes',
  'POST /billing/portal/cancel': 'the portal’s cancel: records plan.change when the plan changes',
  'POST /api/v1/proxy/:slug': 'a visitor’s call through the site proxy; changes nothing',
  'POST /api/v1/reports': 'an abuse report from anyone: stored in the reports table, changes no account',
  'POST /report': 'the report form: stored in the reports table, changes no account',
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_IP = '203.0.113.7';
const SESSION_IP = '2001:db8::42';
const TOKEN_IP = '198.51.100.9';
const OPERATOR_IP = '192.0.2.77';
const OPERATOR_PAGE_IP = '2001:db8::77';
const OPERATOR_EMAIL = 'ops-audit@example.com';
const VARIABLE_VALUE = 'sk-live-audit-variable-value-93f1c2';
const DASH_VARIABLE_VALUE = 'dashboard-variable-value-77aa01';
const SITE_PASSWORD = 'hunter2-audit-password';
const DASH_PASSWORD = 'dash-audit-password-5c1e';
const TARGET = 'edge.audit-target.example';

describe('audit log', () => {
  let t: TestApp;
  let dns: DnsPeer;
  let key: string;
  let otherKey: string;
  let accountId: string;
  /** Every secret the scenario handled: none may appear in the log. */
  const secrets: string[] = [VARIABLE_VALUE, DASH_VARIABLE_VALUE, SITE_PASSWORD, DASH_PASSWORD];
  /** Routes the scenario called and saw recorded. */
  const covered = new Set<string>();

  const api = (path: string, init: ApiInit = {}, ip = KEY_IP) =>
    t.api(path, { ...init, headers: { ...init.headers, 'x-forwarded-for': ip } });

  /** The account's log; null: the entries on no account (operator blocks). */
  const rows = (account: string | null): Promise<AuditRow[]> =>
    t.ctx.db.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where((eb) => (account === null ? eb('account_id', 'is', null) : eb('account_id', '=', account)))
      .orderBy('id')
      .execute();

  /**
   * Runs `call` (after `setup`, whose own entries do not count) and checks it left exactly the entries
   * AUDITED names for `route`, in `account`'s log, with this actor kind and address and target.
   */
  async function step(
    route: string,
    expect: {
      actor: 'key' | 'session' | 'token' | 'operator' | 'system';
      ip: string;
      target?: string;
      /** Whose log (default the audited account); null: no account's (a block). */
      account?: string | null;
      /** The actor's id when it is known in advance (an operator's account id). */
      actorId?: string;
    },
    call: () => Promise<{ status: number; text: string }>,
  ): Promise<AuditRow[]> {
    const account = expect.account === undefined ? accountId : expect.account;
    const beforeCount = (await rows(account)).length;
    const res = await call();
    assert.ok(res.status < 400, `${route}: ${res.status} ${res.text.slice(0, 300)}`);
    const added = (await rows(account)).slice(beforeCount);
    assert.deepEqual(
      added.map((r) => r.action),
      AUDITED[route],
      `${route}: entries ${JSON.stringify(added.map((r) => r.action))}`,
    );
    for (const r of added) {
      assert.equal(r.actor_kind, expect.actor, `${route}: actor`);
      assert.equal(r.ip, expect.ip, `${route}: ip`);
      if (expect.actorId !== undefined) assert.equal(r.actor_id, expect.actorId, `${route}: actor id`);
      if (expect.target !== undefined) assert.equal(r.target, expect.target, `${route}: target`);
    }
    covered.add(route);
    return added;
  }

  async function newSite(k = key, files = { 'index.html': `<h1>${Math.random()}</h1>` }) {
    return assertPublished(await publish(t, files, { key: k })).slug;
  }

  async function finalizedVersions(slug: string): Promise<string[]> {
    const res = await api(`/api/v1/publish/${slug}/versions`, { key });
    return res.body.versions.map((v: { versionId: string }) => v.versionId);
  }

  before(async () => {
    dns = await startDnsPeer({ [TARGET]: { A: ['203.0.113.10'] } });
    t = await startTestApp({
      TRUST_PROXY: '1',
      DNS_SERVERS: dns.server,
      CNAME_TARGET: TARGET,
      ADMIN_EMAILS: OPERATOR_EMAIL,
    });
    key = await signIn(t, 'audited@example.com');
    otherKey = await signIn(t, 'other-auditor@example.com');
    const acct = await t.ctx.db.kysely
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', 'audited@example.com')
      .executeTakeFirstOrThrow();
    accountId = acct.id;
    secrets.push(key, otherKey);
  });
  after(async () => {
    await t.close();
    await dns.close();
  });

  test('every mutating route is audited or exempt with a reason (a new route must choose)', () => {
    const mutating = registeredRoutes(t.app)
      .filter((r) => MUTATING.has(r.method))
      .map((r) => `${r.method} ${r.url}`);
    const unlisted = mutating.filter((r) => !(r in AUDITED) && !(r in EXEMPT));
    assert.deepEqual(unlisted, [], 'add each to AUDITED (recording it in core) or to EXEMPT with the reason');
    for (const r of [...Object.keys(AUDITED), ...Object.keys(EXEMPT)]) {
      assert.ok(mutating.includes(r), `${r} is listed but not registered`);
    }
  });

  test('API key calls: one entry each, actor key, the client address, action and target', async () => {
    // Create, upload (exempt), finalize.
    const files = { 'index.html': '<h1>audit</h1>' };
    let created: {
      status: number;
      text: string;
      body?: {
        slug: string;
        upload: {
          versionId: string;
          uploads: Array<{ path: string; url: string; headers: Record<string, string> }>;
        };
      };
    } = { status: 0, text: '' };
    await step('POST /api/v1/publish', { actor: 'key', ip: KEY_IP }, async () => {
      created = await api('/api/v1/publish', { method: 'POST', key, body: { files: manifestOf(files) } });
      return created;
    });
    const slug = created.body!.slug;
    const v1 = created.body!.upload.versionId;
    for (const u of created.body!.upload.uploads) {
      await putUpload(u.url, files[u.path as 'index.html'], u.headers['Content-Type']!, u.path);
    }
    await step('POST /api/v1/publish/:slug/finalize', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/finalize`, { method: 'POST', key, body: { versionId: v1 } }),
    );

    // A new version made with the key, finalized with a deploy token (actor token, its own address).
    const tok = await api(`/api/v1/publish/${slug}/tokens`, { method: 'POST', key, body: { name: 'ci' } });
    secrets.push(tok.body.token);
    const files2 = { 'index.html': '<h1>audit two</h1>' };
    let v2 = '';
    await step('PUT /api/v1/publish/:slug', { actor: 'token', ip: TOKEN_IP, target: slug }, async () => {
      const res = await api(
        `/api/v1/publish/${slug}`,
        { method: 'PUT', key: tok.body.token, body: { files: manifestOf(files2) } },
        TOKEN_IP,
      );
      v2 = res.body.upload.versionId;
      for (const u of res.body.upload.uploads) {
        await putUpload(u.url, files2[u.path as 'index.html'], u.headers['Content-Type'], u.path);
      }
      return res;
    });
    const [fin] = await step(
      'POST /api/v1/publish/:slug/finalize',
      { actor: 'token', ip: TOKEN_IP, target: slug },
      () =>
        api(
          `/api/v1/publish/${slug}/finalize`,
          { method: 'POST', key: tok.body.token, body: { versionId: v2 } },
          TOKEN_IP,
        ),
    );
    assert.equal(fin!.actor_id, tok.body.id, 'the token entry names the token by its id');

    const [madeToken] = await step(
      'POST /api/v1/publish/:slug/tokens',
      { actor: 'key', ip: KEY_IP, target: slug },
      async () => {
        const res = await api(`/api/v1/publish/${slug}/tokens`, {
          method: 'POST',
          key,
          body: { name: 'gh' },
        });
        secrets.push(res.body.token);
        return res;
      },
    );
    const tokenId = JSON.parse(madeToken!.details).id as string;
    assert.deepEqual(JSON.parse(madeToken!.details).name, 'gh');
    await step('DELETE /api/v1/publish/:slug/tokens/:id', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/tokens/${tokenId}`, { method: 'DELETE', key }),
    );

    await step('PATCH /api/v1/publish/:slug/metadata', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/metadata`, {
        method: 'PATCH',
        key,
        body: { title: 'Audited', password: SITE_PASSWORD },
      }),
    );
    await step(
      'POST /api/v1/publish/:slug/versions/:versionId/restore',
      { actor: 'key', ip: KEY_IP, target: slug },
      () => api(`/api/v1/publish/${slug}/versions/${v1}/restore`, { method: 'POST', key }),
    );
    await step('PUT /api/v1/publish/:slug/aliases/:name', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/aliases/staging`, { method: 'PUT', key, body: { versionId: v2 } }),
    );
    await step('DELETE /api/v1/publish/:slug/aliases/:name', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/aliases/staging`, { method: 'DELETE', key }),
    );
    const [setVar] = await step(
      'PUT /api/v1/publish/:slug/variables',
      { actor: 'key', ip: KEY_IP, target: slug },
      () =>
        api(`/api/v1/publish/${slug}/variables`, {
          method: 'PUT',
          key,
          body: { OPENAI_API_KEY: VARIABLE_VALUE },
        }),
    );
    assert.deepEqual(JSON.parse(setVar!.details), { names: ['OPENAI_API_KEY'] });
    await step(
      'DELETE /api/v1/publish/:slug/variables/:name',
      { actor: 'key', ip: KEY_IP, target: slug },
      () => api(`/api/v1/publish/${slug}/variables/OPENAI_API_KEY`, { method: 'DELETE', key }),
    );
    await step('PUT /api/v1/publish/:slug/proxy-hosts', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/proxy-hosts`, {
        method: 'PUT',
        key,
        body: { hosts: ['api.example.com'] },
      }),
    );
    await step(
      'DELETE /api/v1/publish/:slug/proxy-hosts/:hostname',
      { actor: 'key', ip: KEY_IP, target: slug },
      () => api(`/api/v1/publish/${slug}/proxy-hosts/api.example.com`, { method: 'DELETE', key }),
    );
    const [dup] = await step('POST /api/v1/publish/:slug/duplicate', { actor: 'key', ip: KEY_IP }, () =>
      api(`/api/v1/publish/${slug}/duplicate`, { method: 'POST', key }),
    );
    await step('DELETE /api/v1/publish/:slug', { actor: 'key', ip: KEY_IP, target: dup!.target }, () =>
      api(`/api/v1/publish/${dup!.target}`, { method: 'DELETE', key }),
    );

    const anon = assertPublished(await publish(t, { 'index.html': '<h1>anon</h1>' }));
    secrets.push(anon.create.body.claimToken);
    await step('POST /api/v1/publish/:slug/claim', { actor: 'key', ip: KEY_IP, target: anon.slug }, () =>
      api(`/api/v1/publish/${anon.slug}/claim`, {
        method: 'POST',
        key,
        body: { claimToken: anon.create.body.claimToken },
      }),
    );

    const archive = tgz(fileEntries({ 'index.html': '<h1>archived</h1>' }));
    await step('POST /api/v1/publish/:slug/archive', { actor: 'key', ip: KEY_IP, target: slug }, () =>
      api(`/api/v1/publish/${slug}/archive`, {
        method: 'POST',
        key,
        body: archive,
        headers: { 'content-type': 'application/gzip' },
      }),
    );
    await step('POST /api/v1/publish/archive', { actor: 'key', ip: KEY_IP }, () =>
      api('/api/v1/publish/archive', {
        method: 'POST',
        key,
        body: archive,
        headers: { 'content-type': 'application/gzip' },
      }),
    );

    // Handles and links need the Hobby plan.
    await t.ctx.db.kysely
      .updateTable('accounts')
      .set({ plan: 'hobby' })
      .where('id', '=', accountId)
      .execute();
    await step('PUT /api/v1/handle', { actor: 'key', ip: KEY_IP, target: 'auditor' }, () =>
      api('/api/v1/handle', { method: 'PUT', key, body: { handle: 'auditor' } }),
    );
    const [link] = await step('POST /api/v1/links', { actor: 'key', ip: KEY_IP }, () =>
      api('/api/v1/links', { method: 'POST', key, body: { slug, location: '/blog' } }),
    );
    await step('DELETE /api/v1/links/:id', { actor: 'key', ip: KEY_IP, target: link!.target }, () =>
      api(`/api/v1/links/${link!.target}`, { method: 'DELETE', key }),
    );
    await step('DELETE /api/v1/handle', { actor: 'key', ip: KEY_IP, target: 'auditor' }, () =>
      api('/api/v1/handle', { method: 'DELETE', key }),
    );

    const domain = 'shop.audited.example';
    await step('POST /api/v1/domains', { actor: 'key', ip: KEY_IP, target: domain }, () =>
      api('/api/v1/domains', { method: 'POST', key, body: { domain } }),
    );
    const txt = (await api('/api/v1/domains', { key })).body.domains[0].verificationTxtValue;
    dns.records[`_service.${domain}`] = { TXT: [txt] };
    dns.records[domain] = { CNAME: TARGET };
    await step('POST /api/v1/domains/:domain/verify', { actor: 'key', ip: KEY_IP, target: domain }, () =>
      api(`/api/v1/domains/${domain}/verify`, { method: 'POST', key }),
    );
    await step('DELETE /api/v1/domains/:domain', { actor: 'key', ip: KEY_IP, target: domain }, () =>
      api(`/api/v1/domains/${domain}`, { method: 'DELETE', key }),
    );

    const [hook] = await step('POST /api/v1/webhooks', { actor: 'key', ip: KEY_IP }, async () => {
      const res = await api('/api/v1/webhooks', {
        method: 'POST',
        key,
        body: { url: 'https://hooks.example.com/in?auth=url-secret-0042', events: ['site.published'] },
      });
      secrets.push(res.body.secret, 'url-secret-0042');
      return res;
    });
    await t.ctx.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        id: 'msg_audit1',
        endpoint_id: hook!.target,
        event: 'site.published',
        payload: '{}',
        status: 'failed',
        attempts: 1,
        next_attempt_at: null,
        give_up_at: 0,
        last_status_code: 500,
        last_error: null,
        created_at: 0,
        delivered_at: null,
        updated_at: 0,
      })
      .execute();
    await step(
      'POST /api/v1/webhooks/:id/deliveries/:deliveryId/redeliver',
      { actor: 'key', ip: KEY_IP, target: hook!.target },
      () => api(`/api/v1/webhooks/${hook!.target}/deliveries/msg_audit1/redeliver`, { method: 'POST', key }),
    );
    await step('DELETE /api/v1/webhooks/:id', { actor: 'key', ip: KEY_IP, target: hook!.target }, () =>
      api(`/api/v1/webhooks/${hook!.target}`, { method: 'DELETE', key }),
    );

    // A sign-in of the existing account issues a new key: recorded under that key's fingerprint.
    await api('/api/auth/agent/request-code', { method: 'POST', body: { email: 'audited@example.com' } });
    const [issued] = await step(
      'POST /api/auth/agent/verify-code',
      { actor: 'key', ip: KEY_IP, target: accountId },
      async () => {
        const res = await api('/api/auth/agent/verify-code', {
          method: 'POST',
          body: { email: 'audited@example.com', code: lastCodeFor(t, 'audited@example.com') },
        });
        key = res.body.apiKey;
        secrets.push(key);
        return res;
      },
    );
    assert.match(issued!.actor_id!, /^key_[0-9a-f]{12}$/);
    assert.ok(!key.includes(issued!.actor_id!.slice(4)), 'a fingerprint, not a piece of the key');
  });

  test('dashboard forms: one entry each, actor session, the client address', async () => {
    const b = new Browser(t);
    const h = { 'x-forwarded-for': SESSION_IP };
    const login = await b.request('/login', { headers: h });
    const sent = await b.request('/login', {
      method: 'POST',
      headers: h,
      form: { email: 'audited@example.com', next: '/dashboard', _csrf: csrfOf(login.text) },
    });
    const done = await b.request('/login/code', {
      method: 'POST',
      headers: h,
      form: {
        email: 'audited@example.com',
        code: lastCodeFor(t, 'audited@example.com'),
        next: '/dashboard',
        _csrf: csrfOf(sent.text),
      },
    });
    assert.equal(done.status, 303, done.text);
    const csrf = csrfOf((await b.request('/dashboard', { headers: h })).text);
    const form = (path: string, fields: Record<string, string>) =>
      b.request(path, { method: 'POST', headers: h, form: { _csrf: csrf, ...fields } });
    const as = (target?: string) => ({
      actor: 'session' as const,
      ip: SESSION_IP,
      ...(target ? { target } : {}),
    });

    const slug = await newSite();
    const [v] = await finalizedVersions(slug);
    await step('POST /dashboard/sites/metadata', as(slug), () =>
      form('/dashboard/sites/metadata', { slug, title: 'From the dashboard' }),
    );
    const [counting] = await step('POST /dashboard/sites/analytics', as(slug), () =>
      form('/dashboard/sites/analytics', { slug, analytics: 'off' }),
    );
    assert.ok(JSON.stringify(JSON.parse(counting!.details)).includes('analytics'), counting!.details);
    await step('POST /dashboard/sites/password', as(slug), () =>
      form('/dashboard/sites/password', { slug, password: DASH_PASSWORD }),
    );
    await step('POST /dashboard/sites/variables', as(slug), () =>
      form('/dashboard/sites/variables', { slug, name: 'DB_URL', value: DASH_VARIABLE_VALUE }),
    );
    await step('POST /dashboard/sites/variables/delete', as(slug), () =>
      form('/dashboard/sites/variables/delete', { slug, name: 'DB_URL' }),
    );
    await step('POST /dashboard/sites/hosts', as(slug), () =>
      form('/dashboard/sites/hosts', { slug, hostname: 'api.stripe.com' }),
    );
    await step('POST /dashboard/sites/hosts/delete', as(slug), () =>
      form('/dashboard/sites/hosts/delete', { slug, hostname: 'api.stripe.com' }),
    );
    const [made] = await step('POST /dashboard/sites/tokens', as(slug), async () => {
      const res = await form('/dashboard/sites/tokens', { slug, name: 'from the dashboard', days: '30' });
      const page = await b.request(`/dashboard/sites/${slug}/new-token`, { headers: h });
      const shown = /id="deploy-token">([^<]+)</.exec(page.text);
      assert.ok(shown, 'the new token is shown once');
      secrets.push(shown[1]!);
      return res;
    });
    await step('POST /dashboard/sites/tokens/revoke', as(slug), () =>
      form('/dashboard/sites/tokens/revoke', { slug, id: JSON.parse(made!.details).id }),
    );
    const files2 = { 'index.html': '<h1>second</h1>' };
    await publish(t, files2, { key }); // another site; then a second version of this one
    const up = await t.api(`/api/v1/publish/${slug}`, {
      method: 'PUT',
      key,
      body: { files: manifestOf(files2) },
    });
    for (const u of up.body.upload.uploads)
      await putUpload(u.url, files2['index.html'], u.headers['Content-Type'], u.path);
    await t.api(`/api/v1/publish/${slug}/finalize`, {
      method: 'POST',
      key,
      body: { versionId: up.body.upload.versionId },
    });
    await step('POST /dashboard/sites/restore', as(slug), () =>
      form('/dashboard/sites/restore', { slug, versionId: v! }),
    );
    const [copy] = await step('POST /dashboard/sites/duplicate', as(), () =>
      form('/dashboard/sites/duplicate', { slug }),
    );
    await step('POST /dashboard/sites/delete', as(copy!.target), () =>
      form('/dashboard/sites/delete', { slug: copy!.target, confirm: copy!.target }),
    );

    const domain = 'www.dash-audited.example';
    await step('POST /dashboard/domains', as(domain), () => form('/dashboard/domains', { domain }));
    const txt = (await t.api('/api/v1/domains', { key })).body.domains.find(
      (d: { domain: string }) => d.domain === domain,
    ).verificationTxtValue;
    dns.records[`_service.${domain}`] = { TXT: [txt] };
    dns.records[domain] = { CNAME: TARGET };
    await step('POST /dashboard/domains/verify', as(domain), () =>
      form('/dashboard/domains/verify', { domain }),
    );
    await step('POST /dashboard/handle', as('dashhandle'), () =>
      form('/dashboard/handle', { handle: 'dashhandle' }),
    );
    const [link] = await step('POST /dashboard/links', as(), () =>
      form('/dashboard/links', { slug, domain, location: '/' }),
    );
    await step('POST /dashboard/links/delete', as(link!.target), () =>
      form('/dashboard/links/delete', { id: link!.target }),
    );
    await step('POST /dashboard/domains/delete', as(domain), () =>
      form('/dashboard/domains/delete', { domain }),
    );

    const anon = assertPublished(await publish(t, { 'index.html': '<h1>claim me</h1>' }));
    secrets.push(anon.create.body.claimToken);
    await step('POST /claim', as(anon.slug), () =>
      form('/claim', { slug: anon.slug, token: anon.create.body.claimToken }),
    );

    // The dashboard's view of the log: this account's entries, newest first, no value.
    const view = await b.request('/dashboard/audit', { headers: h });
    assert.equal(view.status, 200);
    assert.match(view.text, /<code>site\.claim<\/code>/);
    assert.match(view.text, /<code>variable\.set<\/code>/);
    assert.ok(view.text.includes(SESSION_IP) && view.text.includes(KEY_IP));
    assert.ok(view.text.indexOf('site.claim') < view.text.indexOf('variable.set'), 'newest first');
    for (const secret of secrets) assert.ok(!view.text.includes(secret), 'the page shows no secret');
    const signedOut = await new Browser(t).request('/dashboard/audit');
    assert.equal(signedOut.status, 303, 'signed out: sent to sign in');

    await step('POST /dashboard/api-key', as(accountId), async () => {
      const res = await form('/dashboard/api-key', {});
      const shown = /(svc_live_[0-9a-f]{32})/.exec(res.text);
      assert.ok(shown, 'the new key is shown');
      key = shown[1]!;
      secrets.push(key);
      return res;
    });

    // A new account through the web sign-in: its first entry, from the signing-in client (no actor yet).
    const nb = new Browser(t);
    const p = await nb.request('/login', { headers: h });
    const s2 = await nb.request('/login', {
      method: 'POST',
      headers: h,
      form: { email: 'brand-new@example.com', next: '/dashboard', _csrf: csrfOf(p.text) },
    });
    const newId = async () =>
      (
        await t.ctx.db.kysely
          .selectFrom('accounts')
          .select('id')
          .where('email', '=', 'brand-new@example.com')
          .executeTakeFirst()
      )?.id;
    const r = await nb.request('/login/code', {
      method: 'POST',
      headers: h,
      form: {
        email: 'brand-new@example.com',
        code: lastCodeFor(t, 'brand-new@example.com'),
        next: '/dashboard',
        _csrf: csrfOf(s2.text),
      },
    });
    assert.equal(r.status, 303, r.text);
    const id = await newId();
    assert.ok(id);
    const entries = await rows(id);
    assert.deepEqual(
      entries.map((e) => [e.action, e.actor_kind, e.ip]),
      [['account.create', 'system', SESSION_IP]],
    );
    covered.add('POST /login/code');
  });

  test('a payment that changes the plan records plan.change (system, the paying client address)', async () => {
    const payer = await signIn(t, 'payer@example.com');
    const id = (
      await t.ctx.db.kysely
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', 'payer@example.com')
        .executeTakeFirstOrThrow()
    ).id;
    const before = (await rows(id)).length;
    const checkout = await api('/api/billing/checkout', { method: 'POST', key: payer });
    assert.equal(checkout.status, 200, checkout.text);
    assert.equal((await rows(id)).length, before, 'opening a checkout changes no plan');
    const paid = await fetch(checkout.body.checkoutUrl.replace('//localhost:', '//127.0.0.1:'), {
      method: 'POST',
      headers: { 'x-forwarded-for': TOKEN_IP },
    });
    assert.equal(paid.status, 200);
    const added = (await rows(id)).slice(before);
    assert.deepEqual(
      added.map((r) => [r.action, r.actor_kind, r.ip]),
      [['plan.change', 'system', TOKEN_IP]],
    );
    assert.equal(JSON.parse(added[0]!.details).plan, 'hobby');
  });

  let opKey = '';
  let opId = '';
  const idOf = async (email: string) =>
    (
      await t.ctx.db.kysely
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', email)
        .executeTakeFirstOrThrow()
    ).id;

  test('operator actions (admin API and /admin forms): actor operator, the owner’s log, the client address', async () => {
    opKey = await signIn(t, OPERATOR_EMAIL);
    opId = await idOf(OPERATOR_EMAIL);
    const ownerKey = await signIn(t, 'op-owner@example.com');
    const ownerId = await idOf('op-owner@example.com');
    secrets.push(opKey, ownerKey);
    const admin = (path: string, init: ApiInit = {}) =>
      api(`/api/admin${path}`, { ...init, key: opKey }, OPERATOR_IP);
    const byApi = (account: string | null, target?: string) => ({
      actor: 'operator' as const,
      actorId: opId,
      ip: OPERATOR_IP,
      account,
      ...(target ? { target } : {}),
    });

    const slug = await newSite(ownerKey);
    const [down] = await step('POST /api/admin/sites/:slug/takedown', byApi(ownerId, slug), () =>
      admin(`/sites/${slug}/takedown`, {
        method: 'POST',
        body: { reason: 'Phishing page', blockContent: false },
      }),
    );
    assert.deepEqual(JSON.parse(down!.details), {
      reason: 'Phishing page',
      blockedHashes: 0,
      reportsClosed: 0,
    });
    // The owner reads what an operator did to their site, from their own log.
    const seen = await t.api('/api/v1/account/audit', { key: ownerKey });
    assert.equal(seen.status, 200, seen.text);
    const entry = seen.body.entries.find((e: { action: string }) => e.action === 'site.takedown');
    assert.ok(entry, 'the owner sees the takedown');
    assert.deepEqual(entry.actor, { kind: 'operator', id: opId });
    assert.equal(entry.target, slug);
    assert.equal(entry.ip, OPERATOR_IP);
    assert.equal(entry.details.reason, 'Phishing page');
    await step('DELETE /api/admin/sites/:slug/takedown', byApi(ownerId, slug), () =>
      admin(`/sites/${slug}/takedown`, { method: 'DELETE' }),
    );
    await step('DELETE /api/admin/sites/:slug', byApi(ownerId, slug), () =>
      admin(`/sites/${slug}`, { method: 'DELETE' }),
    );
    await step('POST /api/admin/accounts/:id/suspend', byApi(ownerId, ownerId), () =>
      admin(`/accounts/${ownerId}/suspend`, { method: 'POST', body: { reason: 'Spam' } }),
    );
    await step('DELETE /api/admin/accounts/:id/suspend', byApi(ownerId, ownerId), () =>
      admin(`/accounts/${ownerId}/suspend`, { method: 'DELETE' }),
    );
    const [plan] = await step('PUT /api/admin/accounts/:id/plan', byApi(ownerId, ownerId), () =>
      admin(`/accounts/${ownerId}/plan`, { method: 'PUT', body: { plan: 'hobby' } }),
    );
    assert.deepEqual(JSON.parse(plan!.details), { from: 'free', to: 'hobby' });
    const reportOf = async (about: string) =>
      (
        await api('/api/v1/reports', {
          method: 'POST',
          body: { url: `http://${about}.${t.ctx.config.siteDomain}/`, category: 'spam', details: 'Ads' },
        })
      ).body.id as string;
    const reportId = await reportOf(await newSite(ownerKey));
    const [closed] = await step('POST /api/admin/reports/:id/close', byApi(null, reportId), () =>
      admin(`/reports/${reportId}/close`, { method: 'POST', body: { reason: 'Not spam' } }),
    );
    assert.equal(JSON.parse(closed!.details).reason, 'Not spam');
    let blockId = '';
    const [blocked] = await step('POST /api/admin/blocks', byApi(null), async () => {
      const res = await admin('/blocks', {
        method: 'POST',
        body: { kind: 'email', value: 'spam-audit@bad.example', reason: 'Spam' },
      });
      blockId = res.body.id;
      return res;
    });
    assert.equal(blocked!.target, blockId);
    await step('DELETE /api/admin/blocks/:id', byApi(null, blockId), () =>
      admin(`/blocks/${blockId}`, { method: 'DELETE' }),
    );
    // None of it is in the operator's own log: it is the owner's (or no account's) record.
    assert.ok((await rows(opId)).every((r) => r.actor_kind !== 'operator'));

    // The same actions from the /admin pages, as the operator's browser session.
    const b = new Browser(t);
    const h = { 'x-forwarded-for': OPERATOR_PAGE_IP };
    const login = await b.request('/login', { headers: h });
    const sent = await b.request('/login', {
      method: 'POST',
      headers: h,
      form: { email: OPERATOR_EMAIL, next: '/admin', _csrf: csrfOf(login.text) },
    });
    const done = await b.request('/login/code', {
      method: 'POST',
      headers: h,
      form: {
        email: OPERATOR_EMAIL,
        code: lastCodeFor(t, OPERATOR_EMAIL),
        next: '/admin',
        _csrf: csrfOf(sent.text),
      },
    });
    assert.equal(done.status, 303, done.text);
    const csrf = csrfOf((await b.request('/admin/blocks', { headers: h })).text);
    const form = (path: string, fields: Record<string, string>) =>
      b.request(path, { method: 'POST', headers: h, form: { _csrf: csrf, confirm: 'yes', ...fields } });
    const byPage = (account: string | null, target?: string) => ({
      ...byApi(account, target),
      ip: OPERATOR_PAGE_IP,
    });

    const slug2 = await newSite(ownerKey);
    // Without the confirmation box nothing is done, so nothing is recorded.
    const count = (await rows(ownerId)).length;
    const unconfirmed = await b.request('/admin/sites/takedown', {
      method: 'POST',
      headers: h,
      form: { _csrf: csrf, slug: slug2, reason: 'x' },
    });
    assert.equal(unconfirmed.status, 303);
    assert.equal((await rows(ownerId)).length, count);
    await step('POST /admin/sites/takedown', byPage(ownerId, slug2), () =>
      form('/admin/sites/takedown', { slug: slug2, reason: 'Malware' }),
    );
    await step('POST /admin/sites/restore', byPage(ownerId, slug2), () =>
      form('/admin/sites/restore', { slug: slug2 }),
    );
    await step('POST /admin/sites/delete', byPage(ownerId, slug2), () =>
      form('/admin/sites/delete', { slug: slug2 }),
    );
    await step('POST /admin/accounts/suspend', byPage(ownerId, ownerId), () =>
      form('/admin/accounts/suspend', { id: ownerId, reason: 'Abuse' }),
    );
    await step('POST /admin/accounts/unsuspend', byPage(ownerId, ownerId), () =>
      form('/admin/accounts/unsuspend', { id: ownerId }),
    );
    await step('POST /admin/accounts/plan', byPage(ownerId, ownerId), () =>
      form('/admin/accounts/plan', { id: ownerId, plan: 'free' }),
    );
    const [added] = await step('POST /admin/blocks', byPage(null), () =>
      form('/admin/blocks', { kind: 'email_domain', value: 'bad-audit.example', reason: '<b>bulk spam</b>' }),
    );
    assert.equal(JSON.parse(added!.details).blocked, 'bad-audit.example');
    await step('POST /admin/blocks/delete', byPage(null, added!.target), () =>
      form('/admin/blocks/delete', { id: added!.target }),
    );
    const pageReport = await reportOf(await newSite(ownerKey));
    await step('POST /admin/reports/close', byPage(null, pageReport), () =>
      form('/admin/reports/close', { id: pageReport, reason: 'Settled with the owner' }),
    );

    // The operators' audit page: every account's entries, newest first, escaped; 404 to anyone else.
    const page = await b.request('/admin/audit', { headers: h });
    assert.equal(page.status, 200);
    assert.match(page.text, /<code>block\.remove<\/code>/);
    assert.ok(page.text.includes(`/admin/audit?account=${ownerId}`), 'links to the owner’s log');
    assert.ok(page.text.indexOf('block.remove') < page.text.indexOf('block.add'), 'newest first');
    assert.ok(page.text.includes('&#60;b&#62;bulk spam') && !page.text.includes('<b>bulk spam'), 'escaped');
    assert.ok(page.text.includes('Older entries'), 'more than one page: a link to the next');
    const own = await b.request(`/admin/audit?account=${ownerId}`, { headers: h });
    assert.match(own.text, /<code>site\.takedown<\/code>/);
    assert.ok(!own.text.includes('<code>block.add</code>'), 'filtered to the account');
    assert.ok(!own.text.includes('<code>variable.set</code>'), 'not another account’s entries');
    const owner = await new Browser(t).request('/admin/audit');
    assert.equal(owner.status, 404);
  });

  test('operators read every account’s log through GET /api/admin/audit, page by page; nobody else can', async () => {
    const admin = (path: string, k = opKey) => t.api(path, { key: k });
    const all = (
      await t.ctx.db.kysely.selectFrom('audit_log').selectAll().orderBy('id', 'desc').execute()
    ).map((r) => r.id);
    assert.ok(all.length > 60, `${all.length} entries`);
    const pages: string[] = [];
    const accounts = new Set<string | null>();
    let cursor = '';
    for (;;) {
      const res = await admin(`/api/admin/audit?limit=25${cursor ? `&before=${cursor}` : ''}`);
      assert.equal(res.status, 200, res.text);
      const entries = res.body.entries as Array<{ id: string; accountId: string | null }>;
      for (const e of entries) accounts.add(e.accountId);
      pages.push(...entries.map((e) => e.id));
      if (entries.length < 25) break;
      cursor = entries[entries.length - 1]!.id;
    }
    assert.deepEqual(pages, all, 'the pages, in order, are every entry newest first');
    assert.ok(
      accounts.has(accountId) && accounts.has(null) && accounts.has(await idOf('op-owner@example.com')),
    );
    const first = (await admin('/api/admin/audit?limit=1')).body.entries[0];
    assert.deepEqual(Object.keys(first).sort(), [
      'accountId',
      'action',
      'actor',
      'at',
      'details',
      'id',
      'ip',
      'target',
    ]);

    // One account's log: the same entries its owner reads.
    const filtered = await admin(`/api/admin/audit?account=${accountId}&limit=200`);
    const ownerView = await t.api('/api/v1/account/audit?limit=200', { key });
    assert.deepEqual(
      filtered.body.entries.map(({ accountId: a, ...e }: { accountId: string }) => {
        assert.equal(a, accountId);
        return e;
      }),
      ownerView.body.entries,
    );
    for (const bad of ['limit=0', 'limit=x', 'before=%3Cscript%3E']) {
      assert.equal((await admin(`/api/admin/audit?${bad}`)).status, 400, bad);
    }
    // Anyone else: 404, as the rest of /api/admin/.
    for (const k of [key, otherKey, undefined]) {
      const res = await t.api('/api/admin/audit', k ? { key: k } : {});
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
  });

  test('every audited route was called above', () => {
    const missing = Object.keys(AUDITED).filter((r) => !covered.has(r));
    assert.deepEqual(missing, []);
  });

  test('the whole log holds no variable value, key, token, claim token, password or webhook secret', async () => {
    const all = JSON.stringify(await t.ctx.db.kysely.selectFrom('audit_log').selectAll().execute());
    assert.ok(secrets.length >= 12, `${secrets.length} secrets handled`);
    for (const s of secrets) assert.ok(!all.includes(s), `the log holds a secret (${s.slice(0, 6)}...)`);
    const own = await t.api('/api/v1/account/audit?limit=200', { key });
    for (const s of secrets) assert.ok(!own.text.includes(s), 'the API answer holds a secret');
  });

  test('a change that fails or rolls back leaves no entry', async () => {
    const slug = await newSite();
    const count = (await rows(accountId)).length;
    // Refused before any write: a bad variable name, an unknown token, an unknown version.
    const refused = [
      await api(`/api/v1/publish/${slug}/variables`, { method: 'PUT', key, body: { 'bad name': 'x' } }),
      await api(`/api/v1/publish/${slug}/tokens/dtk_nope`, { method: 'DELETE', key }),
      await api(`/api/v1/publish/${slug}/finalize`, { method: 'POST', key, body: { versionId: 'ver_nope' } }),
      await api(`/api/v1/publish/${slug}/metadata`, { method: 'PATCH', key, body: { title: 5 } }),
    ];
    for (const r of refused) assert.ok(r.status >= 400 && r.status < 500, r.text);
    assert.equal((await rows(accountId)).length, count);
    // Rolled back: 100 variables are stored (one entry), then one more is refused inside the transaction
    // that would have recorded it.
    const full = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`V${i}`, 'x']));
    assert.equal(
      (await api(`/api/v1/publish/${slug}/variables`, { method: 'PUT', key, body: full })).status,
      200,
    );
    const over = await api(`/api/v1/publish/${slug}/variables`, { method: 'PUT', key, body: { EXTRA: 'x' } });
    assert.equal(over.status, 400, over.text);
    const after = await rows(accountId);
    assert.deepEqual(
      after.slice(count).map((r) => r.action),
      ['variable.set'],
    );
  });

  test('another account reads none of them; the owner pages with limit and before', async () => {
    const other = await t.api('/api/v1/account/audit?limit=200', { key: otherKey });
    assert.equal(other.status, 200);
    assert.ok(other.body.entries.every((e: { target: string }) => !e.target.startsWith('shop.audited')));
    const otherIds = new Set(other.body.entries.map((e: { id: string }) => e.id));
    const mine = (await rows(accountId)).map((r) => r.id);
    assert.ok(
      mine.every((id) => !otherIds.has(id)),
      'no entry of this account in the other’s log',
    );
    assert.equal((await t.api('/api/v1/account/audit')).status, 401);

    const all = (await t.api('/api/v1/account/audit?limit=200', { key })).body.entries as Array<
      Record<string, unknown>
    >;
    assert.equal(all.length, mine.length);
    assert.deepEqual(Object.keys(all[0]!).sort(), ['action', 'actor', 'at', 'details', 'id', 'ip', 'target']);
    const pages: string[] = [];
    let cursor = '';
    for (;;) {
      const res = await t.api(`/api/v1/account/audit?limit=7${cursor ? `&before=${cursor}` : ''}`, { key });
      assert.equal(res.status, 200, res.text);
      const ids = res.body.entries.map((e: { id: string }) => e.id);
      assert.ok(ids.length <= 7);
      pages.push(...ids);
      if (ids.length < 7) break;
      cursor = ids[ids.length - 1];
    }
    assert.deepEqual(
      pages,
      all.map((e) => e.id),
      'the pages, in order, are the whole log newest first',
    );
    assert.deepEqual(pages, [...mine].reverse());
    for (const bad of ['0', '201', 'x', '1.5']) {
      const res = await t.api(`/api/v1/account/audit?limit=${bad}`, { key });
      assert.equal(res.status, 400, `limit=${bad}`);
    }
  });

  test('retention: the sweeper removes entries older than AUDIT_RETENTION_DAYS, keeps the rest', async () => {
    const count = (await rows(accountId)).length;
    t.clock.advance(200 * 86_400_000);
    await newSite();
    t.clock.advance(166 * 86_400_000);
    const report = await sweepNow(t);
    assert.equal(report.auditPruned >= count, true, JSON.stringify(report));
    const left = await rows(accountId);
    assert.deepEqual(
      left.map((r) => r.action),
      ['site.create', 'version.finalize'],
    );
  });
});
