// Billing: POST /api/billing/checkout, /api/billing/portal, the provider callback /api/billing/webhook
// (spec "Billing", CONTRACT "Billing"), and the two pages they link to on the BASE_URL host: the test
// provider's checkout (`/billing/test-checkout/:token`, GET shows it, POST pays) and the portal
// (`/billing/portal?token=`, with its cancel action).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import * as api from '../api/billing.js';
import {
  type BillingDeps,
  cancelFromPortal,
  checkout,
  completeTestCheckout,
  portal,
  portalAccount,
  portalView,
  receiveWebhook,
  testCheckoutState,
} from '../core/billing.js';
import { html, type SafeHtml, timeTag } from '../shared/html.js';
import { JSON_BODY_LIMIT_BYTES } from './json.js';
import { sendPage as sendLayoutPage } from './pages.js';
import { requireAccount } from './rate-limit.js';

const TOKEN = Type.String({ maxLength: 300 });

/** Billing pages carry tokens in their URL: no Referer leaves them. */
function sendPage(reply: FastifyReply, status: number, title: string, body: SafeHtml) {
  return sendLayoutPage(reply, status, title, body, { referrerPolicy: 'no-referrer' });
}

const BACK = html`<p><a href="/dashboard">Go to your dashboard</a></p>`;

export function billingRoutes(deps: BillingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // A browser's Pay button posts an (empty) urlencoded form to the test checkout page.
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 4096 },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    app.route({ ...api.checkout, handler: async (req) => checkout(deps, requireAccount(req)) });
    app.route({ ...api.portal, handler: async (req) => portal(deps, requireAccount(req)) });

    // The callback is verified over its raw bytes: this plugin keeps JSON bodies as a Buffer.
    app.register(async (raw) => {
      raw.removeContentTypeParser('application/json');
      raw.addContentTypeParser(
        'application/json',
        { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT_BYTES },
        (_req, body, done) => done(null, body),
      );
      raw.route({
        ...api.webhook,
        handler: async (req) => {
          const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const signature = req.headers['x-razorpay-signature'];
          await receiveWebhook(deps, rawBody, Array.isArray(signature) ? signature[0] : signature);
          return { ok: true as const };
        },
      });
    });

    // The test provider's checkout page (CONTRACT "Billing": GET shows a Pay button, POST pays).
    app.get(
      '/billing/test-checkout/:token',
      { schema: { hide: true, params: Type.Object({ token: TOKEN }) } },
      async (req, reply) => {
        const state = await testCheckoutState(deps, req.params.token);
        if (state.kind === 'unknown') {
          return sendPage(
            reply,
            404,
            'Checkout not found',
            html`<h1>Checkout not found</h1><p>This checkout link is not valid.</p>${BACK}`,
          );
        }
        if (state.kind === 'used') {
          return sendPage(
            reply,
            410,
            'Already paid',
            html`<h1>Already paid</h1><p>This checkout was completed; the account is on Hobby.</p>${BACK}`,
          );
        }
        return sendPage(
          reply,
          200,
          'Test checkout',
          html`<h1>Slipway Hobby: test checkout</h1>
<p>Test payment for <strong>${state.email}</strong> (subscription ${state.subscriptionId}).
No money moves: this deployment uses the built-in test provider.</p>
<form method="post"><button type="submit">Pay</button></form>`,
        );
      },
    );

    app.post(
      '/billing/test-checkout/:token',
      { schema: { hide: true, params: Type.Object({ token: TOKEN }) } },
      async (req, reply) => {
        if (await completeTestCheckout(deps, req.params.token)) {
          return sendPage(
            reply,
            200,
            'Payment complete',
            html`<h1>Payment complete</h1><p>The account is on the Hobby plan now.</p>${BACK}`,
          );
        }
        const state = await testCheckoutState(deps, req.params.token);
        return state.kind === 'used'
          ? sendPage(
              reply,
              410,
              'Already paid',
              html`<h1>Already paid</h1><p>This checkout was already completed; nothing was charged again.</p>${BACK}`,
            )
          : sendPage(
              reply,
              404,
              'Checkout not found',
              html`<h1>Checkout not found</h1><p>This checkout link is not valid.</p>${BACK}`,
            );
      },
    );

    const portalPage = async (token: string, reply: FastifyReply, notice: SafeHtml | '' = '') => {
      const account = await portalAccount(deps, token);
      if (!account) {
        return sendPage(
          reply,
          403,
          'Link expired',
          html`<h1>Link expired</h1><p>Open a new portal link from your dashboard (or POST /api/billing/portal).</p>${BACK}`,
        );
      }
      const view = await portalView(deps, account);
      if (!view) return sendPage(reply, 404, 'No subscription', html`<h1>No subscription</h1>${BACK}`);
      const cancel = view.cancellable
        ? html`<form method="post" action="/billing/portal/cancel" data-confirm="Cancel the Hobby subscription? Hobby stays until the end of the paid period."><input type="hidden" name="token" value="${token}"><button class="danger" type="submit">Cancel subscription</button></form>
<p>Hobby stays until the end of the paid period.</p>`
        : '';
      return sendPage(
        reply,
        200,
        'Subscription',
        html`<h1>Your subscription</h1>${notice}
<p>Account: ${view.email}<br>Plan: <strong>${view.plan}</strong><br>
Subscription ${view.subscriptionId}: <strong>${view.status}</strong><br>
Paid until: ${timeTag(view.currentEnd, 'not charged yet')}</p>${cancel}${BACK}`,
      );
    };

    app.get(
      '/billing/portal',
      { schema: { hide: true, querystring: Type.Object({ token: Type.Optional(TOKEN) }) } },
      async (req, reply) => portalPage(req.query.token ?? '', reply),
    );

    // The portal's cancel form (its urlencoded parser is the plugin's, above).
    app.register(async (form) => {
      form.post(
        '/billing/portal/cancel',
        { schema: { hide: true, body: Type.Object({ token: TOKEN }) } },
        async (req, reply) => {
          const { token } = req.body as { token: string };
          const account = await portalAccount(deps, token);
          if (account) await cancelFromPortal(deps, account);
          return portalPage(token, reply, html`<p class="ok" role="status"><strong>Cancelled.</strong></p>`);
        },
      );
    });
  };
}
