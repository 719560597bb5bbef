// Signed deploy webhooks (CONTRACT "Webhooks"): POST/GET /api/v1/webhooks, DELETE /api/v1/webhooks/:id,
// GET /api/v1/webhooks/:id/deliveries and POST .../deliveries/:deliveryId/redeliver. The secret is shown
// once, in the 201 answer.

import { type Static, Type } from 'typebox';
import {
  MAX_WEBHOOK_URL_CHARS,
  MAX_WEBHOOKS_PER_ACCOUNT,
  MIN_WEBHOOK_PORT,
  WEBHOOK_EVENTS,
  WEBHOOK_LOG_PAGE,
} from '../core/webhooks.js';
import { ERRORS, errorExample, NullableString, operation, SECURITY, Slug, Timestamp } from './common.js';
import { at, later, slug, unauthorized } from './examples.js';

const Id = Type.String({ maxLength: 100 });
export const WebhookParams = Type.Object({ id: Id });
export const DeliveryParams = Type.Object({ id: Id, deliveryId: Type.String({ maxLength: 200 }) });

export const WebhookBody = Type.Object({
  url: Type.String({
    maxLength: MAX_WEBHOOK_URL_CHARS,
    description: `the https:// address that receives the events (a public DNS name or address; port 443 or ${MIN_WEBHOOK_PORT} and up; no credentials)`,
  }),
  events: Type.Array(Type.String({ maxLength: 100 }), {
    maxItems: 50,
    description: `one or more of ${WEBHOOK_EVENTS.join(', ')}`,
  }),
  slug: Type.Optional(
    Type.Union([Slug, Type.Null()], {
      description:
        "one of your sites: only its events; omitted = every site of the account (and its domains' events)",
    }),
  ),
});
export type WebhookBody = Static<typeof WebhookBody>;

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  slug: NullableString,
  createdAt: Timestamp,
});
export type Webhook = Static<typeof Webhook>;

export const WebhookCreated = Type.Object({
  ...Webhook.properties,
  secret: Type.String({
    description:
      'whsec_ + base64 of the signing key: shown this once. Each delivery carries webhook-signature = v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the base64-decoded part after whsec_>',
  }),
});
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });
export type WebhookList = Static<typeof WebhookList>;

export const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
export type WebhookDeleted = Static<typeof WebhookDeleted>;

export const WebhookDelivery = Type.Object({
  id: Type.String({ description: 'the webhook-id header: the same on every attempt and redelivery' }),
  event: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Number(),
  lastStatusCode: Type.Union([Type.Number(), Type.Null()], {
    description:
      "the receiver's status code at the last attempt; null when it gave none (refused, timed out)",
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'why the last attempt failed, in a few words (the receiver’s body is not kept)',
  }),
  nextAttemptAt: Type.Union([Timestamp, Type.Null()], {
    description: 'when a pending delivery is tried next',
  }),
  createdAt: Timestamp,
  deliveredAt: Type.Union([Timestamp, Type.Null()]),
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(WebhookDelivery) });
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;

const webhookId = 'whk_Qm9zY2hldHRvIGV4YW1wbGUh';
const deliveryId = 'msg_2mQxQ0u6Zz8b1cR7.whk_Qm9zY2hldHRvIGV4YW1wbGUh';
const webhookUrl = 'https://hooks.example.com/slipway';
const webhookMissing = errorExample('NOT_FOUND', 404, `Webhook ${webhookId} not found`);
const exampleWebhook = (events: string[] = ['site.published', 'site.publish_refused']) => ({
  id: webhookId,
  url: webhookUrl,
  events,
  slug,
  createdAt: at,
});
const exampleDelivery = {
  id: deliveryId,
  event: 'site.published',
  status: 'delivered',
  attempts: 2,
  lastStatusCode: 200,
  lastError: null,
  nextAttemptAt: null,
  createdAt: at,
  deliveredAt: later,
};

export const createWebhook = operation({
  method: 'POST',
  url: '/api/v1/webhooks',
  schema: {
    tags: ['webhooks'],
    summary: `Register an HTTPS endpoint for events of one site or all (at most ${MAX_WEBHOOKS_PER_ACCOUNT} per account); the signing secret is shown once`,
    security: SECURITY,
    body: WebhookBody,
    response: { 201: WebhookCreated, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        request: { url: webhookUrl, events: ['site.published', 'site.publish_refused'], slug },
        responses: {
          201: { ...exampleWebhook(), secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3x9J0d1p6Fo=' },
        },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'url points at 10.0.0.7, a loopback, private, link-local or otherwise internal address; webhooks go to public addresses only.',
        ),
      }),
    },
  },
});

export const listWebhooks = operation({
  method: 'GET',
  url: '/api/v1/webhooks',
  schema: {
    tags: ['webhooks'],
    summary: 'Your webhook endpoints (secrets are never shown again)',
    security: SECURITY,
    response: { 200: WebhookList, ...ERRORS },
  },
  config: {
    api: { examples: () => ({ responses: { 200: { webhooks: [exampleWebhook()] } }, error: unauthorized }) },
  },
});

export const deleteWebhook = operation({
  method: 'DELETE',
  url: '/api/v1/webhooks/:id',
  schema: {
    tags: ['webhooks'],
    summary: 'Remove an endpoint and its delivery log; nothing more is sent to it',
    security: SECURITY,
    params: WebhookParams,
    response: { 200: WebhookDeleted, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({ responses: { 200: { id: webhookId, deleted: true } }, error: webhookMissing }),
    },
  },
});

export const listDeliveries = operation({
  method: 'GET',
  url: '/api/v1/webhooks/:id/deliveries',
  schema: {
    tags: ['webhooks'],
    summary: `The endpoint's newest ${WEBHOOK_LOG_PAGE} deliveries: pending ones are retried with exponential backoff for 24 h, then failed`,
    security: SECURITY,
    params: WebhookParams,
    response: { 200: WebhookDeliveryList, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({ responses: { 200: { deliveries: [exampleDelivery] } }, error: webhookMissing }),
    },
  },
});

export const redeliver = operation({
  method: 'POST',
  url: '/api/v1/webhooks/:id/deliveries/:deliveryId/redeliver',
  schema: {
    tags: ['webhooks'],
    summary: 'Send a delivery again now (same webhook-id, signed anew), retried for another 24 h',
    security: SECURITY,
    params: DeliveryParams,
    response: { 202: WebhookDelivery, ...ERRORS },
  },
  config: {
    api: {
      examples: () => ({
        responses: {
          202: { ...exampleDelivery, status: 'pending', nextAttemptAt: later, deliveredAt: null },
        },
        error: errorExample('NOT_FOUND', 404, `Delivery ${deliveryId} of webhook ${webhookId} not found`),
      }),
    },
  },
});
