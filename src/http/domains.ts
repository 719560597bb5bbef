// Custom domains: /api/v1/domains[/:domain[/verify]] (spec "Custom domains"), and the TLS front end's
// question GET /internal/tls-ask?domain= (CONTRACT "Custom domains"; not under /api/, not rate limited).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/domains.js';
import { addDomain, type DomainDeps, deleteDomain, listDomains, verifyDomain } from '../core/domains.js';
import { type TlsAskDeps, tlsAllowed } from '../core/tls-ask.js';
import { requireAccount } from './rate-limit.js';

export function domainRoutes(deps: DomainDeps & TlsAskDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.addDomain,
      handler: async (req, reply) =>
        reply.code(201).send(await addDomain(deps, requireAccount(req), req.body.domain)),
    });
    app.route({
      ...api.verifyDomain,
      handler: async (req) => verifyDomain(deps, requireAccount(req), req.params.domain),
    });
    app.route({ ...api.listDomains, handler: async (req) => listDomains(deps, requireAccount(req)) });
    app.route({
      ...api.deleteDomain,
      handler: async (req) => deleteDomain(deps, requireAccount(req), req.params.domain),
    });
    app.route({
      ...api.tlsAsk,
      handler: async (req, reply) =>
        reply.code((await tlsAllowed(deps, req.query.domain ?? '')) ? 200 : 404).send(),
    });
  };
}
