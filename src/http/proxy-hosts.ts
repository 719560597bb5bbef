// Proxy host allowlist: GET/PUT /api/v1/publish/:slug/proxy-hosts, DELETE .../proxy-hosts/:hostname
// (spec "Proxy host allowlist"; owner only, 404 for anyone else).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/proxy-hosts.js';
import { deleteProxyHost, listProxyHosts, type ProxyHostDeps, putProxyHosts } from '../core/proxy-hosts.js';
import { requireAccount } from './rate-limit.js';

export function proxyHostRoutes(deps: ProxyHostDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.listProxyHosts,
      handler: async (req) => ({ hosts: await listProxyHosts(deps, requireAccount(req), req.params.slug) }),
    });

    app.route({
      ...api.putProxyHosts,
      handler: async (req) => putProxyHosts(deps, requireAccount(req), req.params.slug, req.body.hosts),
    });

    app.route({
      ...api.deleteProxyHost,
      handler: async (req) =>
        deleteProxyHost(deps, requireAccount(req), req.params.slug, req.params.hostname),
    });
  };
}
