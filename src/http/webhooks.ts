// Webhook endpoints and their delivery log (CONTRACT "Webhooks"): an account's own, by API key or session.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/webhooks.js';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  type WebhookDeps,
} from '../core/webhooks.js';
import { requireAccount } from './rate-limit.js';

export function webhookRoutes(deps: WebhookDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.createWebhook,
      handler: async (req, reply) =>
        reply.code(201).send(await createWebhook(deps, requireAccount(req), req.body)),
    });
    app.route({ ...api.listWebhooks, handler: async (req) => listWebhooks(deps, requireAccount(req)) });
    app.route({
      ...api.deleteWebhook,
      handler: async (req) => deleteWebhook(deps, requireAccount(req), req.params.id),
    });
    app.route({
      ...api.listDeliveries,
      handler: async (req) => listDeliveries(deps, requireAccount(req), req.params.id),
    });
    app.route({
      ...api.redeliver,
      handler: async (req, reply) =>
        reply
          .code(202)
          .send(await redeliver(deps, requireAccount(req), req.params.id, req.params.deliveryId)),
    });
  };
}
