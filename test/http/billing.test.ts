// Billing through real HTTP (spec "Billing", "Plan", "Events"; CONTRACT "Billing"): checkout and portal
// against a local stand-in of the Razorpay API, signed callbacks, and the built-in test provider.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { reachable } from '../helpers/publish.js';
import {
  postWebhook,
  RZP,
  razorpayEnv,
  type StandIn,
  sign,
  startRazorpayStandIn,
  webhookBody,
} from '../helpers/razorpay.js';

const DAY_S = 86_400;
const RATE_LIMITS = { RATE_LIMIT_ANONYMOUS: '1000', RATE_LIMIT_FREE: '60', RATE_LIMIT_HOBBY: '200' };

function assertError(res: { status: number; body: unknown }, status: number, code: string) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const body = res.body as { error: string; code: string; status: number };
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(typeof body.error, 'string');
}

async function planOf(t: TestApp, key: string) {
  const res = await t.api('/api/v1/account', { key });
  assert.equal(res.status, 200, res.text);
  return { plan: res.body.plan as string, limit: res.headers.get('x-ratelimit-limit') };
}

describe('billing with the Razorpay provider (local stand-in of its API)', () => {
  let rzp: StandIn;
  let t: TestApp;
  const nowS = () => Math.floor(t.clock.now() / 1000);

  before(async () => {
    rzp = await startRazorpayStandIn();
    t = await startTestApp({ ...razorpayEnv(rzp), ...RATE_LIMITS });
  });
  after(async () => {
    await t.close();
    await rzp.close();
  });

  /** A signed-in account with a checkout created at the stand-in; returns its key and subscription id. */
  async function withCheckout(email: string) {
    const key = await signIn(t, email);
    const res = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(res.status, 200, res.text);
    return { key, subId: res.body.subscriptionId as string };
  }

  async function activate(subId: string, createdAtS: number, currentEndS: number, eventId?: string) {
    const res = await postWebhook(
      t,
      webhookBody(
        'subscription.activated',
        { id: subId, status: 'active', current_end: currentEndS },
        createdAtS,
      ),
      eventId ? { eventId } : {},
    );
    assert.equal(res.status, 200, res.text);
  }

  test('POST /api/billing/checkout creates a subscription at the provider with Basic auth', async () => {
    const key = await signIn(t, 'checkout@example.com');
    rzp.requests.length = 0;
    const res = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(res.status, 200, res.text);
    const { subscriptionId, paymentKeyId, shortUrl, checkoutUrl } = res.body;
    assert.match(subscriptionId, /^sub_/);
    assert.equal(paymentKeyId, RZP.keyId);
    assert.match(shortUrl, /^https:\/\/rzp\.io\/i\//);
    assert.equal(checkoutUrl, shortUrl);
    assert.equal(rzp.requests.length, 1);
    const [call] = rzp.requests;
    assert.equal(call!.method, 'POST');
    assert.equal(call!.path, '/v1/subscriptions');
    assert.ok(call!.authorized, 'Basic auth of key id and secret');
    const sent = call!.body as Record<string, unknown>;
    assert.equal(sent.plan_id, RZP.planId);
    assert.equal(typeof sent.total_count, 'number');
    assert.equal(sent.customer_notify, 1);
    const account = await t.ctx.db.kysely
      .selectFrom('accounts')
      .select('id')
      .where('email', '=', 'checkout@example.com')
      .executeTakeFirstOrThrow();
    assert.equal((sent.notes as Record<string, string>).account_id, account.id);

    // A second checkout while that one is unpaid reuses it.
    const again = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(again.status, 200);
    assert.equal(again.body.subscriptionId, subscriptionId);
    assert.equal(again.body.checkoutUrl, shortUrl);
    assert.equal(rzp.requests.length, 1, 'no second subscription at the provider');
  });

  test('a signed activation makes the account Hobby at once: plan, limits and rate-limit headers', async () => {
    const { key, subId } = await withCheckout('activate@example.com');
    assert.deepEqual(await planOf(t, key), { plan: 'free', limit: '60' });
    await activate(subId, nowS(), nowS() + 30 * DAY_S);
    const account = await t.api('/api/v1/account', { key });
    assert.equal(account.body.plan, 'hobby');
    assert.equal(account.body.usage.sites.limit, 'unlimited');
    assert.equal(account.headers.get('x-ratelimit-limit'), '200');
    // Checkout when already Hobby.
    assertError(await t.api('/api/billing/checkout', { method: 'POST', key }), 400, 'INVALID_REQUEST');
  });

  test('a bad, missing or re-serialized signature answers 400 and changes nothing', async () => {
    const { key, subId } = await withCheckout('badsig@example.com');
    const body = webhookBody(
      'subscription.activated',
      { id: subId, status: 'active', current_end: nowS() + 30 * DAY_S },
      nowS(),
    );
    assertError(await postWebhook(t, body, { signature: null }), 400, 'INVALID_REQUEST');
    assertError(
      await postWebhook(t, body, { signature: sign(body, 'not-the-secret') }),
      400,
      'INVALID_REQUEST',
    );
    assertError(await postWebhook(t, body, { signature: 'zz' }), 400, 'INVALID_REQUEST');
    // Signed over the JSON re-serialized with other spacing: the raw bytes differ.
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    assertError(await postWebhook(t, pretty, { signature: sign(body) }), 400, 'INVALID_REQUEST');
    assert.equal((await planOf(t, key)).plan, 'free');
  });

  test('a replayed event has no second effect; an older event never undoes a newer state', async () => {
    const { key, subId } = await withCheckout('order@example.com');
    const t0 = nowS();
    const end = t0 + 30 * DAY_S;
    // The cancellation was created first but arrives after the activation.
    const cancellation = webhookBody(
      'subscription.cancelled',
      { id: subId, status: 'cancelled', current_end: end },
      t0 - 60,
    );
    await activate(subId, t0, end, 'evt_activation_1');
    assert.equal((await postWebhook(t, cancellation, { eventId: 'evt_cancel_old' })).status, 200);
    const sub = () =>
      t.ctx.db.kysely
        .selectFrom('subscriptions')
        .selectAll()
        .where('id', '=', subId)
        .executeTakeFirstOrThrow();
    assert.equal((await sub()).status, 'active', 'the older cancellation must not win');
    assert.equal((await planOf(t, key)).plan, 'hobby');
    t.clock.advance(31 * DAY_S * 1000);
    assert.equal((await planOf(t, key)).plan, 'hobby', 'active has no end date');

    // A real (newer) cancellation, then the same callback again: applied once.
    const newer = webhookBody(
      'subscription.cancelled',
      { id: subId, status: 'cancelled', current_end: nowS() + DAY_S },
      nowS(),
    );
    assert.equal((await postWebhook(t, newer, { eventId: 'evt_cancel_new' })).status, 200);
    const afterCancel = await sub();
    t.clock.advance(1000);
    assert.equal((await postWebhook(t, newer, { eventId: 'evt_cancel_new' })).status, 200);
    assert.deepEqual(await sub(), afterCancel, 'the replay changed the subscription');
    // Without an event id the body's hash identifies it.
    const charged = webhookBody(
      'subscription.charged',
      { id: subId, status: 'active', current_end: nowS() + 60 * DAY_S },
      nowS() - 10,
    );
    const recorded = async () =>
      (await t.ctx.db.kysely.selectFrom('billing_events').select('id').execute()).length;
    const before = await recorded();
    assert.equal((await postWebhook(t, charged)).status, 200);
    const afterFirst = await recorded();
    assert.ok(afterFirst > before, 'the first delivery is recorded');
    assert.equal((await postWebhook(t, charged)).status, 200);
    assert.equal(await recorded(), afterFirst, 'the second delivery was recorded as a new event');
    assert.equal(
      (await sub()).status,
      'cancelled',
      'a charge older than the cancellation does not revive it',
    );
  });

  test('a signed callback sent again with a fresh X-Razorpay-Event-Id has no effect', async () => {
    const { subId } = await withCheckout('replay-fresh-id@example.com');
    const t0 = nowS();
    await activate(subId, t0, t0 + 30 * DAY_S, 'evt_replay_activation');
    const cancel = webhookBody(
      'subscription.cancelled',
      { id: subId, status: 'cancelled', current_end: t0 + 30 * DAY_S },
      t0 + 5,
    );
    assert.equal((await postWebhook(t, cancel, { eventId: 'evt_replay_cancel' })).status, 200);
    const stored = () =>
      t.ctx.db.kysely
        .selectFrom('subscriptions')
        .selectAll()
        .where('id', '=', subId)
        .executeTakeFirstOrThrow();
    const applied = await stored();
    assert.equal(applied.status, 'cancelled');
    // The header is not signed: whoever captured the body can send it again under any id.
    for (const eventId of ['evt_forged_1', 'evt_forged_2', undefined]) {
      t.clock.advance(1000);
      const res = await postWebhook(t, cancel, eventId ? { eventId } : {});
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(await stored(), applied, `the replay under ${eventId} was applied again`);
    }
  });

  test('a same-second replay of the activation cannot undo a cancel; same-second events have a set order', async () => {
    const { key, subId } = await withCheckout('replay-same-second@example.com');
    const t0 = nowS();
    const end = t0 + 30 * DAY_S;
    const activation = webhookBody(
      'subscription.activated',
      { id: subId, status: 'active', current_end: end },
      t0,
    );
    const cancellation = webhookBody(
      'subscription.cancelled',
      { id: subId, status: 'cancelled', current_end: end },
      t0,
    );
    assert.equal((await postWebhook(t, activation, { eventId: 'evt_ss_activation' })).status, 200);
    assert.equal((await postWebhook(t, cancellation, { eventId: 'evt_ss_cancel' })).status, 200);
    const status = async (id: string) =>
      (
        await t.ctx.db.kysely
          .selectFrom('subscriptions')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status;
    assert.equal(await status(subId), 'cancelled');
    assert.equal((await postWebhook(t, activation, { eventId: 'evt_ss_activation_again' })).status, 200);
    assert.equal(await status(subId), 'cancelled', 'the replayed activation undid the cancel');
    t.clock.advance(31 * DAY_S * 1000);
    assert.equal((await planOf(t, key)).plan, 'free');

    // Never seen before, out of order within one second: the cancel still wins (a later state of the
    // subscription's life cycle goes first on a tie) ...
    const other = await withCheckout('same-second-order@example.com');
    const t1 = nowS();
    const [act, can] = (['subscription.activated', 'subscription.cancelled'] as const).map((event) =>
      webhookBody(
        event,
        {
          id: other.subId,
          status: event === 'subscription.activated' ? 'active' : 'cancelled',
          current_end: t1 + DAY_S,
        },
        t1,
      ),
    );
    assert.equal((await postWebhook(t, can!)).status, 200);
    assert.equal((await postWebhook(t, act!)).status, 200);
    assert.equal(await status(other.subId), 'cancelled');
    // ... and a charge in the same second as the activation extends the paid period.
    const third = await withCheckout('same-second-charge@example.com');
    const t2 = nowS();
    await activate(third.subId, t2, t2 + DAY_S);
    const charged = webhookBody(
      'subscription.charged',
      { id: third.subId, status: 'active', current_end: t2 + 31 * DAY_S },
      t2,
    );
    assert.equal((await postWebhook(t, charged)).status, 200);
    const row = await t.ctx.db.kysely
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', third.subId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(row.current_end), (t2 + 31 * DAY_S) * 1000);
  });

  test('a cancellation keeps Hobby until currentEnd, then the account is free (moved clock)', async () => {
    const { key, subId } = await withCheckout('cancel@example.com');
    await activate(subId, nowS(), nowS() + 30 * DAY_S);
    const end = nowS() + 2 * DAY_S;
    const res = await postWebhook(
      t,
      webhookBody('subscription.cancelled', { id: subId, status: 'cancelled', current_end: end }, nowS() + 1),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(await planOf(t, key), { plan: 'hobby', limit: '200' });
    t.clock.advance(2 * DAY_S * 1000 - 5000);
    assert.equal((await planOf(t, key)).plan, 'hobby');
    t.clock.advance(10_000);
    assert.deepEqual(await planOf(t, key), { plan: 'free', limit: '60' });
    const account = await t.api('/api/v1/account', { key });
    assert.equal(account.body.usage.sites.limit, 500);
  });

  test('pending and halted keep the plan until currentEnd', async () => {
    const { key, subId } = await withCheckout('halted@example.com');
    await activate(subId, nowS(), nowS() + 30 * DAY_S);
    const end = nowS() + DAY_S;
    for (const [event, status] of [
      ['subscription.pending', 'pending'],
      ['subscription.halted', 'halted'],
    ] as const) {
      const res = await postWebhook(
        t,
        webhookBody(event, { id: subId, status, current_end: end }, nowS() + 2),
      );
      assert.equal(res.status, 200);
      t.clock.advance(1000);
    }
    assert.equal((await planOf(t, key)).plan, 'hobby');
    t.clock.advance(DAY_S * 1000);
    assert.equal((await planOf(t, key)).plan, 'free');
    // A charge that goes through afterwards makes it Hobby again.
    await activate(subId, nowS(), nowS() + 30 * DAY_S);
    assert.equal((await planOf(t, key)).plan, 'hobby');
  });

  test('unknown events and events for unknown subscriptions are acknowledged and ignored', async () => {
    const other = JSON.stringify({
      entity: 'event',
      event: 'payment.captured',
      payload: { payment: { entity: { id: 'pay_1' } } },
      created_at: nowS(),
    });
    assert.equal((await postWebhook(t, other)).status, 200);
    const stray = webhookBody(
      'subscription.activated',
      { id: 'sub_NotOurs', status: 'active', current_end: nowS() + DAY_S },
      nowS(),
    );
    assert.equal((await postWebhook(t, stray)).status, 200);
    assert.ok(t.logs.some((l) => l.includes('unknown subscription') && l.includes('sub_NotOurs')));
  });

  test('the callback is not rate limited and carries no rate-limit headers', async () => {
    const stray = webhookBody(
      'subscription.activated',
      { id: 'sub_NotOurs2', status: 'active', current_end: null },
      nowS(),
    );
    const res = await postWebhook(t, stray);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-ratelimit-limit'), null);
  });

  test('POST /api/billing/portal: 400 without a subscription; a portal page whose cancel calls the provider', async () => {
    const fresh = await signIn(t, 'noportal@example.com');
    assertError(await t.api('/api/billing/portal', { method: 'POST', key: fresh }), 400, 'INVALID_REQUEST');

    const { key, subId } = await withCheckout('portal@example.com');
    // An unpaid checkout is not a subscription to manage yet.
    assertError(await t.api('/api/billing/portal', { method: 'POST', key }), 400, 'INVALID_REQUEST');
    const end = nowS() + 30 * DAY_S;
    await activate(subId, nowS(), end);
    const res = await t.api('/api/billing/portal', { method: 'POST', key });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'active');
    assert.equal(res.body.currentEnd, new Date(end * 1000).toISOString());
    const portalUrl: string = res.body.portalUrl;
    assert.ok(portalUrl.startsWith(`http://localhost:${t.port}/billing/portal?token=`), portalUrl);

    const page = await fetch(reachable(portalUrl));
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /active/);
    assert.match(html, /Cancel subscription/);
    // A forged token opens nothing.
    assert.equal((await fetch(reachable(`${portalUrl}x`))).status, 403);

    rzp.requests.length = 0;
    const token = new URL(portalUrl).searchParams.get('token')!;
    const cancel = await fetch(`${t.url}/billing/portal/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    assert.equal(cancel.status, 200);
    assert.deepEqual(
      rzp.requests.map((r) => [r.method, r.path, r.authorized]),
      [['POST', `/v1/subscriptions/${subId}/cancel`, true]],
    );
    const after = await t.api('/api/billing/portal', { method: 'POST', key });
    assert.equal(after.body.status, 'cancelled');
    assert.equal((await planOf(t, key)).plan, 'hobby', 'Hobby runs to the end of the paid period');
  });

  test('a provider error or a provider that does not answer gives 500 INTERNAL_ERROR within the 10 s timeout', async () => {
    const key = await signIn(t, 'provider-down@example.com');
    rzp.mode = 'error';
    const failed = await t.api('/api/billing/checkout', { method: 'POST', key });
    assertError(failed, 500, 'INTERNAL_ERROR');
    assert.match(failed.body.error, /payment provider/i);
    assert.ok(!failed.text.includes(RZP.keySecret));
    rzp.mode = 'slow';
    const started = Date.now();
    const slow = await t.api('/api/billing/checkout', { method: 'POST', key });
    const elapsed = Date.now() - started;
    assertError(slow, 500, 'INTERNAL_ERROR');
    assert.match(slow.body.error, /did not answer/);
    assert.ok(elapsed >= 9_000 && elapsed < 13_000, `answered after ${elapsed} ms`);
    rzp.mode = 'ok';
    // Nothing was recorded for the failed attempts: the next checkout creates one.
    const ok = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe('billing with an unreachable provider', () => {
  test('POST /api/billing/checkout answers 500 INTERNAL_ERROR at once', async () => {
    const rzp = await startRazorpayStandIn();
    const env = razorpayEnv(rzp);
    await rzp.close();
    const t = await startTestApp(env);
    try {
      const key = await signIn(t, 'unreachable@example.com');
      const res = await t.api('/api/billing/checkout', { method: 'POST', key });
      assertError(res, 500, 'INTERNAL_ERROR');
      assert.match(res.body.error, /could not be reached/);
    } finally {
      await t.close();
    }
  });
});

describe('billing with the built-in test provider (PAYMENT_PROVIDER=test)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(RATE_LIMITS);
  });
  after(() => t.close());

  test('checkout page GET 200, POST pays once: Hobby with a 200/h limit; the URL used again upgrades nothing', async () => {
    const key = await signIn(t, 'tester@example.com');
    const res = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(res.status, 200, res.text);
    const { checkoutUrl, shortUrl, subscriptionId, paymentKeyId } = res.body;
    assert.equal(checkoutUrl, shortUrl);
    assert.ok(checkoutUrl.startsWith(`http://localhost:${t.port}/billing/test-checkout/`), checkoutUrl);
    assert.match(subscriptionId, /^sub_test_/);
    assert.equal(typeof paymentKeyId, 'string');

    const page = await fetch(reachable(checkoutUrl));
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    const html = await page.text();
    assert.match(html, /<form method="post"><button type="submit">Pay<\/button><\/form>/);
    assert.match(html, /tester@example\.com/);

    const paid = await fetch(reachable(checkoutUrl), { method: 'POST' });
    assert.equal(paid.status, 200);
    assert.deepEqual(await planOf(t, key), { plan: 'hobby', limit: '200' });
    const portal = await t.api('/api/billing/portal', { method: 'POST', key });
    assert.equal(portal.body.status, 'active');
    const currentEnd = portal.body.currentEnd;

    // Used again: a clear page, no second upgrade (the period is not extended).
    const again = await fetch(reachable(checkoutUrl), { method: 'POST' });
    assert.equal(again.status, 410);
    assert.match(await again.text(), /already/i);
    assert.equal((await fetch(reachable(checkoutUrl))).status, 410);
    const portalAfter = await t.api('/api/billing/portal', { method: 'POST', key });
    assert.equal(portalAfter.body.currentEnd, currentEnd);
    const events = await t.ctx.db.kysely.selectFrom('billing_events').select('id').execute();
    assert.equal(events.filter((e) => e.id.includes(subscriptionId)).length, 1);

    // The checkout token (it pays for the account) never reaches a log line; the portal's neither.
    const checkoutToken = checkoutUrl.split('/').pop()!;
    const portalToken = new URL(portal.body.portalUrl).searchParams.get('token')!;
    await fetch(reachable(portal.body.portalUrl));
    const lines = t.logs.join('\n');
    assert.ok(lines.includes('/billing/test-checkout/***'), 'the checkout path is logged, masked');
    assert.ok(!lines.includes(checkoutToken), 'checkout token absent from logs');
    assert.ok(!lines.includes(portalToken), 'portal token absent from logs');

    // An unknown token.
    const unknown = await fetch(`${t.url}/billing/test-checkout/not-a-real-token`, { method: 'POST' });
    assert.equal(unknown.status, 404);
    assertError(await t.api('/api/billing/checkout', { method: 'POST', key }), 400, 'INVALID_REQUEST');
  });

  test('no column of the database holds the checkout token; the link still works, once', async () => {
    /** Every row of every table, as text. */
    const everyRow = async () => {
      const tables = await t.ctx.db.kysely.introspection.getTables();
      assert.ok(tables.some((table) => table.name === 'subscriptions'));
      const dumps = await Promise.all(
        tables.map(async (table) => {
          const rows = await sql`select * from ${sql.table(table.name)}`.execute(t.ctx.db.kysely);
          return `${table.name}: ${JSON.stringify(rows.rows)}`;
        }),
      );
      return dumps.join('\n');
    };
    const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
    const key = await signIn(t, 'token-at-rest@example.com');
    const first = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(first.status, 200, first.text);
    assert.ok(!(await everyRow()).includes(tokenOf(first.body.checkoutUrl)), 'the token is stored in clear');

    // Checking out again before paying hands out the same link, though it was never stored.
    const second = await t.api('/api/billing/checkout', { method: 'POST', key });
    assert.equal(second.body.subscriptionId, first.body.subscriptionId);
    const url = second.body.checkoutUrl;
    assert.equal(url, first.body.checkoutUrl);
    assert.equal((await fetch(reachable(url))).status, 200);
    assert.equal((await fetch(reachable(url), { method: 'POST' })).status, 200);
    assert.equal((await planOf(t, key)).plan, 'hobby');
    assert.equal((await fetch(reachable(url), { method: 'POST' })).status, 410, 'paid twice');
    assert.equal((await fetch(reachable(url))).status, 410);
    assert.ok(!(await everyRow()).includes(tokenOf(url)), 'the token is stored in clear after the payment');

    // An open checkout whose stored hash names another token (kept from before migration 008, or
    // SECRETS_KEY changed since): the next checkout's link is the one that pays.
    const other = await signIn(t, 'token-rekeyed@example.com');
    const started = await t.api('/api/billing/checkout', { method: 'POST', key: other });
    await t.ctx.db.kysely
      .updateTable('subscriptions')
      .set({ checkout_token_hash: 'f'.repeat(64) })
      .where('id', '=', started.body.subscriptionId)
      .execute();
    assert.equal((await fetch(reachable(started.body.checkoutUrl))).status, 404);
    const again = await t.api('/api/billing/checkout', { method: 'POST', key: other });
    assert.equal((await fetch(reachable(again.body.checkoutUrl), { method: 'POST' })).status, 200);
    assert.equal((await planOf(t, other)).plan, 'hobby');
  });

  test('the test checkout page and pay action are not counted as API requests', async () => {
    const key = await signIn(t, 'pages@example.com');
    const res = await t.api('/api/billing/checkout', { method: 'POST', key });
    const page = await fetch(reachable(res.body.checkoutUrl));
    assert.equal(page.headers.get('x-ratelimit-limit'), null);
  });

  test('the portal cancel of a test subscription keeps Hobby until the end of the paid period', async () => {
    const key = await signIn(t, 'test-cancel@example.com');
    const res = await t.api('/api/billing/checkout', { method: 'POST', key });
    await fetch(reachable(res.body.checkoutUrl), { method: 'POST' });
    const portal = await t.api('/api/billing/portal', { method: 'POST', key });
    const token = new URL(portal.body.portalUrl).searchParams.get('token')!;
    const cancel = await fetch(`${t.url}/billing/portal/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    assert.equal(cancel.status, 200);
    const after = await t.api('/api/billing/portal', { method: 'POST', key });
    assert.equal(after.body.status, 'cancelled');
    assert.equal((await planOf(t, key)).plan, 'hobby');
    t.clock.advance(31 * DAY_S * 1000);
    assert.equal((await planOf(t, key)).plan, 'free');
  });
});
