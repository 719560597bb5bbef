// The site proxy: POST /api/v1/proxy/:slug (spec "Site proxy"; CONTRACT "Variables, proxy hosts, proxy"),
// and its CORS preflight. Public: the caller is a page of the site, checked by its Origin. The answer is
// the upstream's own status, filtered headers and body, not JSON.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { checkProxyCaller, forwardProxyCall, type ProxyDeps } from '../core/proxy.js';
import { JSON_BODY_LIMIT_BYTES, parseJsonBody } from './json.js';

const SlugParams = Type.Object({ slug: Type.String({ maxLength: 63 }) });
const PREFLIGHT_MAX_AGE_S = 600;

export function proxyRoutes(deps: ProxyDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // `fetch(url, {method: 'POST', body: JSON.stringify(call)})` sends text/plain: a CORS "simple
    // request", so the page's call needs no preflight (which would count against the caller's hourly
    // window too). The body is JSON all the same. (Registered in this plugin only.)
    app.removeContentTypeParser('text/plain');
    app.addContentTypeParser(
      'text/plain',
      { parseAs: 'string', bodyLimit: JSON_BODY_LIMIT_BYTES },
      parseJsonBody,
    );

    // The page's origin (a site host) differs from the API host: browsers need CORS, for the preflight
    // and for the answer. Only origins of the site get it; the answer itself is checked the same way.
    app.addHook('onSend', (req, reply, payload, done) => {
      const origin = req.headers.origin;
      if (origin !== undefined && req.corsAllowed) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Vary', 'Origin');
      }
      done(null, payload);
    });

    app.options('/api/v1/proxy/:slug', { schema: { hide: true, params: SlugParams } }, async (req, reply) => {
      await checkProxyCaller(deps, req.params.slug, req.headers.origin);
      req.corsAllowed = true;
      return reply
        .code(204)
        .headers({
          'Access-Control-Allow-Methods': 'POST',
          'Access-Control-Allow-Headers': 'Content-Type',
          'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_S),
        })
        .send();
    });

    app.post(
      '/api/v1/proxy/:slug',
      {
        schema: {
          tags: ['proxy'],
          summary:
            'Call an allowlisted HTTPS API from a page of the site, {{VARIABLE}} placeholders filled server side',
          params: SlugParams,
          // Checked in core after the caller checks (CONTRACT order: disabled, site, origin, then the body).
          body: Type.Unknown({
            description:
              '{url: "https://...", method?: "GET", headers?: {name: value}, body?: string}; values may hold {{NAME}}',
          }),
          // No response schema: the answer is the upstream's own body (errors have the spec's body).
        },
      },
      async (req, reply) => {
        await checkProxyCaller(deps, req.params.slug, req.headers.origin);
        req.corsAllowed = true;
        const res = await forwardProxyCall(deps, req.params.slug, req.body);
        return reply.code(res.status).headers(res.headers).send(res.body);
      },
    );
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the Origin is known to be one of the site's: the answer may carry CORS headers. */
    corsAllowed?: boolean;
  }
}
