// Billing (spec "Billing", CONTRACT "Billing"): POST /api/billing/checkout, /api/billing/portal and the
// provider callback /api/billing/webhook.

import { type Static, Type } from 'typebox';
import { ERRORS, errorExample, NullableString, operation, SECURITY } from './common.js';
import { later } from './examples.js';

export const Checkout = Type.Object({
  subscriptionId: Type.String(),
  paymentKeyId: Type.String(),
  shortUrl: Type.String(),
  checkoutUrl: Type.String(),
});
export type Checkout = Static<typeof Checkout>;

export const Portal = Type.Object({
  portalUrl: Type.String(),
  status: Type.String(),
  currentEnd: NullableString,
});
export type Portal = Static<typeof Portal>;

/** The provider's callback: read as raw bytes (the signature covers them), so documented, not validated. */
export const WebhookEvent = Type.Object(
  {
    event: Type.String({ description: 'e.g. subscription.activated, subscription.charged' }),
    created_at: Type.Optional(Type.Number()),
    payload: Type.Object({
      subscription: Type.Object({
        entity: Type.Object({ id: Type.String(), current_end: Type.Optional(Type.Number()) }),
      }),
    }),
  },
  { additionalProperties: true, description: "Razorpay's event body, signed with X-Razorpay-Signature" },
);

/** A provider call of checkout or portal failed: the 5xx those two answer. */
const providerFailure = errorExample(
  'INTERNAL_ERROR',
  500,
  'The payment provider call failed; try again shortly.',
);

export const checkout = operation({
  method: 'POST',
  url: '/api/billing/checkout',
  schema: {
    tags: ['billing'],
    summary: 'Start (or resume) a Hobby subscription: open checkoutUrl in a browser to pay',
    security: SECURITY,
    response: { 200: Checkout, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => {
        const url = `${c.baseUrl}/billing/test-checkout/xm1RjJuttzw25wfNlSd-TKhHVtSsIxel4Qb0vYf7Zk2`;
        return {
          responses: {
            200: {
              subscriptionId: 'sub_test_LIgkvRdiDfv-',
              paymentKeyId: 'test_key_slipway',
              shortUrl: url,
              checkoutUrl: url,
            },
          },
          error: errorExample(
            'INVALID_REQUEST',
            400,
            'This account is already on the Hobby plan.',
            'POST /api/billing/portal manages it.',
          ),
          failure: providerFailure,
        };
      },
    },
  },
});

export const portal = operation({
  method: 'POST',
  url: '/api/billing/portal',
  schema: {
    tags: ['billing'],
    summary: 'A link to manage (or cancel) the subscription, with its status',
    security: SECURITY,
    response: { 200: Portal, ...ERRORS },
  },
  config: {
    api: {
      examples: (c) => ({
        responses: {
          200: { portalUrl: `${c.baseUrl}/billing/portal?token=…`, status: 'active', currentEnd: later },
        },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'This account has no subscription to manage.',
          'POST /api/billing/checkout starts one.',
        ),
        failure: providerFailure,
      }),
    },
  },
});

export const webhook = operation({
  method: 'POST',
  url: '/api/billing/webhook',
  schema: {
    tags: ['billing'],
    summary: "The payment provider's callback (X-Razorpay-Signature over the raw body)",
    response: { 200: Type.Object({ ok: Type.Literal(true) }), ...ERRORS },
  },
  config: {
    api: {
      rawBody: { mediaType: 'application/json', schema: WebhookEvent },
      examples: () => ({
        request: {
          entity: 'event',
          event: 'subscription.charged',
          created_at: 1795512600,
          payload: { subscription: { entity: { id: 'sub_Nq2b8Yc4LkP0aZ', current_end: 1798104600 } } },
        },
        responses: { 200: { ok: true } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'Bad or missing X-Razorpay-Signature; nothing was changed.',
        ),
      }),
    },
  },
});
