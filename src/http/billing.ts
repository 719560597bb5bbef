// Billing: POST /api/billing/checkout, /api/billing/portal and the provider callback /api/billing/webhook
// (spec "Billing", CONTRACT "Billing"). The pages they link to (the test checkout and the portal) are in
// src/http/pages/billing.ts.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/billing.js';
import { type BillingDeps, checkout, portal, receiveWebhook } from '../core/billing.js';
import { JSON_BODY_LIMIT_BYTES } from './json.js';
import { requireAccount } from './rate-limit.js';

export function billingRoutes(deps: BillingDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
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
  };
}
