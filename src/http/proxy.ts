// The site proxy: POST /api/v1/proxy/:slug (spec "Site proxy"; CONTRACT "Variables, proxy hosts, proxy"),
// and its CORS preflight. Public: the caller is a page of the site, checked by its Origin. The answer is
// the upstream's own status, filtered headers and body, not JSON.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { SlugParams } from '../api/common.js';
import * as api from '../api/proxy.js';
import { limitKey } from '../core/client-address.js';
import { ApiError } from '../core/errors.js';
import {
  checkProxyCaller,
  forwardProxyCall,
  isOriginOfLiveSite,
  type ProxyCaller,
  type ProxyDeps,
} from '../core/proxy.js';
import { limitProxyCall, peekProxyWindow, rateHeaders } from '../core/proxy-rate.js';
import type { RateDecision } from '../core/rate-limit.js';
import { unavailable } from './errors.js';
import { JSON_BODY_LIMIT_BYTES, parseJsonBody } from './json.js';

const PREFLIGHT_MAX_AGE_S = 600;

/** Answer fields a page of the site may read besides the CORS-safelisted ones: why and until when it waits. */
const EXPOSED_HEADERS = 'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

/**
 * On every proxy answer, refusals included. The answer comes from the service's own origin (the API host,
 * where the dashboard lives) with a body an upstream chose: it must never run, render or be framed there.
 * A CSP sandbox with nothing allowed (no script, no same-origin), no sniffing into an active type, never a
 * frame, and a download rather than a page if a browser ever opens it. fetch() callers read the body as
 * before: CORS requests are not subject to Cross-Origin-Resource-Policy (Fetch §3.2.4 "cross-origin
 * resource policy check" applies to no-cors requests only), which keeps <script>/<img> loads out.
 */
const PROXY_ANSWER_HEADERS = {
  'Content-Security-Policy': "sandbox; default-src 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Content-Disposition': 'attachment; filename="proxy-response"',
};

/** Sec-Fetch-Dest values of requests that load a document or a plugin (Fetch Metadata, W3C). */
const DOCUMENT_DESTINATIONS = new Set(['document', 'iframe', 'frame', 'object', 'embed', 'fencedframe']);

/**
 * Whether the browser says this request loads a document: a navigation (a link, a form submission, a
 * frame) or an object/embed. Browsers without Fetch Metadata send neither field; the answer headers above
 * keep those safe too.
 */
export function isDocumentRequest(headers: { [name: string]: string | string[] | undefined }): boolean {
  const mode = String(headers['sec-fetch-mode'] ?? '').toLowerCase();
  const dest = String(headers['sec-fetch-dest'] ?? '').toLowerCase();
  return mode === 'navigate' || mode === 'nested-navigate' || DOCUMENT_DESTINATIONS.has(dest);
}

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
    // and for the answer. Only origins of the site get it, on every answer to them (refusals, 400, 429,
    // 502/504 included) so the page reads the status and the reason instead of "Failed to fetch".
    app.addHook('onSend', async (req, reply, payload) => {
      reply.headers(PROXY_ANSWER_HEADERS);
      // The proxy's own window, over any X-RateLimit-* an upstream sent (CONTRACT "Rate limits"); a call
      // refused before it was counted shows the visitor's window as it stands.
      if (!req.proxyRate && req.method === 'POST' && !reply.hasHeader('X-RateLimit-Limit')) {
        const slug = String((req.params as { slug?: unknown }).slug ?? '');
        req.proxyRate = await peekProxyWindow(deps, slug, limitKey(req.clientAddress)).catch(() => undefined);
      }
      if (req.proxyRate) reply.headers(rateHeaders(req.proxyRate));
      const origin = req.headers.origin;
      if (origin !== undefined && req.corsAllowed) {
        reply.header('Access-Control-Allow-Origin', origin);
        reply.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
        reply.header('Vary', 'Origin');
      }
      return payload;
    });

    // Who is calling is checked before the body is read, so nothing the caller sends is parsed for a
    // disabled proxy, an unknown site, a foreign origin or a navigation (CONTRACT order: disabled, site,
    // origin, then the limit, then the body). A foreign origin spends no one's window.
    app.addHook('preParsing', async (req, _reply, payload) => {
      const slug = (req.params as { slug: string }).slug;
      let site: Awaited<ReturnType<typeof checkProxyCaller>>;
      try {
        site = await checkProxyCaller(deps, slug, callerOf(req));
      } catch (err) {
        // A disabled proxy's refusal is readable by a page of the site (the other refusals are not to one).
        if (!deps.config.proxyEnabled) {
          req.corsAllowed = await isOriginOfLiveSite(deps, slug, req.headers.origin);
        }
        throw err;
      }
      req.corsAllowed = true;
      if (req.method !== 'POST') return payload;
      try {
        req.proxyRate = await limitProxyCall(deps, site, limitKey(req.clientAddress));
      } catch (err) {
        if (err instanceof ApiError) throw err;
        // Fail closed, as the API's limiter: without the shared counter no limit can be promised.
        throw unavailable(err);
      }
      return payload;
    });

    app.options(
      '/api/v1/proxy/:slug',
      { schema: { hide: true, params: SlugParams } },
      async (_req, reply) => {
        return reply
          .code(204)
          .headers({
            'Access-Control-Allow-Methods': 'POST',
            'Access-Control-Allow-Headers': 'Content-Type',
            'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_S),
          })
          .send();
      },
    );

    // The body is checked after the caller checks (the preParsing hook above).
    app.route({
      ...api.proxyCall,
      handler: async (req, reply) => {
        const res = await forwardProxyCall(deps, req.params.slug, req.body);
        return reply.code(res.status).headers(res.headers).send(res.body);
      },
    });
  };
}

const callerOf = (req: FastifyRequest): ProxyCaller => ({
  origin: req.headers.origin,
  navigation: isDocumentRequest(req.headers),
  preflight: req.method === 'OPTIONS',
});

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the Origin is known to be one of the site's: the answer may carry CORS headers. */
    corsAllowed?: boolean;
    /** The proxy window this call was counted in (the tighter of visitor and site), for its headers. */
    proxyRate?: RateDecision;
  }
}
