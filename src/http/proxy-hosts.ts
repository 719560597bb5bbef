// Proxy host allowlist: GET/PUT /api/v1/publish/:slug/proxy-hosts, DELETE .../proxy-hosts/:hostname
// (spec "Proxy host allowlist"; owner only, 404 for anyone else).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { deleteProxyHost, listProxyHosts, type ProxyHostDeps, putProxyHosts } from '../core/proxy-hosts.js';
import { requireAccount } from './rate-limit.js';
import { ErrorBody, SECURITY, Timestamp } from './schemas.js';

const errors = { '4xx': ErrorBody, '5xx': ErrorBody };
const SlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) });
const Stored = Type.Object({ ok: Type.Literal(true), stored: Type.Array(Type.String()) });

export function proxyHostRoutes(deps: ProxyHostDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/publish/:slug/proxy-hosts',
      {
        schema: {
          tags: ['proxy-hosts'],
          summary: 'Hostnames the site proxy may call for this site',
          security: SECURITY,
          params: SlugParams,
          response: {
            200: Type.Object({
              hosts: Type.Array(
                Type.Object({ hostname: Type.String(), createdAt: Timestamp, updatedAt: Timestamp }),
              ),
            }),
            ...errors,
          },
        },
      },
      async (req) => ({ hosts: await listProxyHosts(deps, requireAccount(req), req.params.slug) }),
    );

    app.put(
      '/api/v1/publish/:slug/proxy-hosts',
      {
        schema: {
          tags: ['proxy-hosts'],
          summary: 'Allow exact HTTPS hostnames (no wildcard, scheme, port, path or IP); others are kept',
          security: SECURITY,
          params: SlugParams,
          // `hosts` is checked entry by entry in core, so each refusal names its entry.
          body: Type.Object({ hosts: Type.Unknown({ description: 'array of exact hostnames' }) }),
          response: { 200: Stored, ...errors },
        },
      },
      async (req) => putProxyHosts(deps, requireAccount(req), req.params.slug, req.body.hosts),
    );

    app.delete(
      '/api/v1/publish/:slug/proxy-hosts/:hostname',
      {
        schema: {
          tags: ['proxy-hosts'],
          summary: 'Remove one hostname',
          security: SECURITY,
          params: Type.Object({
            slug: Type.String({ maxLength: 63 }),
            hostname: Type.String({ maxLength: 300 }),
          }),
          response: {
            200: Type.Object({ ok: Type.Literal(true), deleted: Type.String() }),
            ...errors,
          },
        },
      },
      async (req) => deleteProxyHost(deps, requireAccount(req), req.params.slug, req.params.hostname),
    );
  };
}
