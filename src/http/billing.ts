// Billing: POST /api/billing/checkout, /api/billing/portal and the provider callback /api/billing/webhook
// (spec "Billing", CONTRACT "Billing"). The pages they link to (the test checkout and the portal) are in
// src/http/pages/billing.ts.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type BillingDeps, checkout, portal, receiveWebhook } from '../core/billing.js';
import { JSON_BODY_LIMIT_BYTES } from './json.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, NullableString, SECURITY } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };

export function billingRoutes(deps: BillingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/billing/checkout',
      {
        schema: {
          tags: ['billing'],
          summary: 'Start (or resume) a Hobby subscription: open checkoutUrl in a browser to pay',
          security: SECURITY,
          response: {
            200: Type.Object({
              subscriptionId: Type.String(),
              paymentKeyId: Type.String(),
              shortUrl: Type.String(),
              checkoutUrl: Type.String(),
            }),
            ...errors,
          },
        },
      },
      async (req) => checkout(deps, requireAccount(req)),
    );

    app.post(
      '/api/billing/portal',
      {
        schema: {
          tags: ['billing'],
          summary: 'A link to manage (or cancel) the subscription, with its status',
          security: SECURITY,
          response: {
            200: Type.Object({ portalUrl: Type.String(), status: Type.String(), currentEnd: NullableString }),
            ...errors,
          },
        },
      },
      async (req) => portal(deps, requireAccount(req)),
    );

    // The callback is verified over its raw bytes: this plugin keeps JSON bodies as a Buffer.
    app.register(async (raw) => {
      raw.removeContentTypeParser('application/json');
      raw.addContentTypeParser(
        'application/json',
        { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT_BYTES },
        (_req, body, done) => done(null, body),
      );
      raw.post(
        '/api/billing/webhook',
        {
          schema: {
            tags: ['billing'],
            summary: "The payment provider's callback (X-Razorpay-Signature over the raw body)",
            response: { 200: Type.Object({ ok: Type.Literal(true) }), ...errors },
          },
        },
        async (req) => {
          const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
          const signature = req.headers['x-razorpay-signature'];
          await receiveWebhook(deps, rawBody, Array.isArray(signature) ? signature[0] : signature);
          return { ok: true as const };
        },
      );
    });
  };
}
