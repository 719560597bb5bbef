// The composition root of the HTTP service: one node:http server whose requests are routed by Host.
// The BASE_URL host (and bare IP hosts) goes to Fastify (API, pages, ops); every other host goes to
// the site server directly, so site traffic pays no framework routing or hooks (DESIGN "House style" 10).
// Plain site GET/HEAD requests do not even reach node:http's request objects: the site fast path
// (src/serve/http1/) reads them off the connection and hands node:http everything else.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { accountRoutes } from './http/account.js';
import { authRoutes } from './http/auth.js';
import { billingRoutes } from './http/billing.js';
import { registerClientAddress } from './http/client-address.js';
import { coreDeps } from './http/deps.js';
import { domainRoutes } from './http/domains.js';
import {
  clientErrorResponse,
  frameworkErrorHandler,
  MAX_PARAM_LENGTH,
  registerErrorHandling,
} from './http/errors.js';
import { handleRoutes } from './http/handle.js';
import { JSON_BODY_LIMIT_BYTES, registerJsonParser } from './http/json.js';
import { linkRoutes } from './http/links.js';
import { createMetrics, observeRequest, registerFastPathMetrics } from './http/metrics.js';
import { openApiOptions } from './http/openapi.js';
import { opsRoutes } from './http/ops.js';
import { registerPages } from './http/pages.js';
import { proxyRoutes } from './http/proxy.js';
import { proxyHostRoutes } from './http/proxy-hosts.js';
import { limitRequest, registerRateLimit } from './http/rate-limit.js';
import { registerRequestBodies } from './http/request-body.js';
import { siteRoutes } from './http/sites.js';
import { uploadRoutes } from './http/uploads.js';
import { variableRoutes } from './http/variables.js';
import { webRoutes } from './http/web.js';
import { MAX_REQUEST_HEAD_BYTES, NodeSiteResponse } from './serve/exchange.js';
import { installSiteFastPath } from './serve/http1/connection.js';
import { hostnameOf } from './serve/resolve-host.js';
import { createSiteServer } from './serve/site-server.js';

export type HostTarget = 'api' | 'site';

/** The policy of the BASE_URL host's answers that are not pages: nothing may load, run or frame them. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** CONTRACT "Hosts": BASE_URL's host -> API and pages; anything else -> the site server. */
export function hostTarget(hostname: string, baseHost: string): HostTarget {
  if (hostname === baseHost) return 'api';
  // No Host, or an IP literal: nothing a site or custom domain can be, so the API answers
  // (lets health checks and clients reach http://127.0.0.1:PORT/api/... directly). Site hosts end in
  // a letter (a TLD or `localhost`), so the isIP check only runs for the rare candidates.
  if (hostname === '') return 'api';
  const last = hostname.charCodeAt(hostname.length - 1);
  if (hostname.charCodeAt(0) === 91 /* [ */ || (last >= 48 && last <= 57) /* digit */) {
    if (isIP(hostname.replace(/^\[|\]$/g, '')) !== 0) return 'api';
  }
  return 'site';
}

/**
 * The authority a request is for: the Host field, or the target's own for an absolute-form target, which
 * an origin server must use instead (RFC 9112 §3.2.2). The site fast path never sees that form.
 */
export function targetAuthority(req: IncomingMessage): string | undefined {
  const target = req.url ?? '/';
  if (target.charCodeAt(0) === 0x2f /* / */ || !URL.canParse(target)) return req.headers.host;
  return new URL(target).host;
}

/** The asterisk form is OPTIONS only (RFC 9112 §3.2.4): the server's methods, or a 400 for anything else. */
function answerAsteriskForm(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { Allow: 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' }).end();
    return;
  }
  const body = JSON.stringify({
    error: 'The request target * is only for OPTIONS; send a path.',
    code: 'INVALID_REQUEST',
    status: 400,
  });
  res
    .writeHead(400, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    })
    .end(body);
}

export type App = FastifyInstance;

export async function buildApp(ctx: AppContext): Promise<App> {
  const metrics = createMetrics();
  // SERVE_CACHE_MB bounds all serving memory: with the fast path, its response memo takes an eighth.
  const memoBytes = ctx.config.serveFastPath ? Math.floor(ctx.config.serveCacheBytes / 8) : 0;
  const siteServer = createSiteServer(ctx, metrics.registry, ctx.config.serveCacheBytes - memoBytes);
  const { baseHost } = ctx.config;

  const app = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Fastify reads no X-Forwarded-* field (its `ip` is the socket's peer): the client is req.clientAddress,
    // decided by the one rule of src/core/client-address.ts for the API and the site server alike.
    trustProxy: false,
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    requestIdHeader: false,
    genReqId: () => `req-${randomBytes(8).toString('hex')}`,
    // Bodies are validated exactly as sent: no type coercion, no silent removal of fields.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Refusals before any route or hook runs leave with the spec's error body too.
    frameworkErrors: frameworkErrorHandler(async (req, reply) => limitRequest(ctx, req, reply)),
    clientErrorHandler: clientErrorResponse,
    serverFactory: (handler) =>
      createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, (req: IncomingMessage, res: ServerResponse) => {
        if (req.url === '*') {
          answerAsteriskForm(req, res);
          return;
        }
        const hostname = hostnameOf(targetAuthority(req));
        if (hostTarget(hostname, baseHost) === 'api') handler(req, res);
        else siteServer.handle(req, new NodeSiteResponse(res, ctx.bodyPace), hostname);
      }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerClientAddress(app, ctx.config.trustProxy);
  registerRequestBodies(app, ctx.bodyPace);
  registerJsonParser(app);
  registerErrorHandling(app);

  await app.register(swagger, openApiOptions(ctx.config));

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // Every answer of the BASE_URL host, where the dashboard's session lives: JSON that quotes a caller's
  // input (or anything else without a policy of its own) is never sniffed into a page, never runs and is
  // never framed. Pages set their own, looser policy (http/pages.ts); the proxy a stricter one.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (!reply.hasHeader('x-content-type-options')) reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', API_CSP);
    done(null, payload);
  });
  registerRateLimit(app, ctx);
  app.addHook('onResponse', (req, reply, done) => {
    observeRequest(
      metrics,
      req.method,
      req.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  await app.register(opsRoutes(ctx, metrics));
  await registerPages(app, ctx.config);
  const deps = coreDeps(ctx);
  await app.register(authRoutes(deps.signIn));
  await app.register(accountRoutes(ctx));
  await app.register(siteRoutes(deps.publish));
  await app.register(uploadRoutes(deps.publish, ctx.uploadsPerClient));
  await app.register(webRoutes(ctx, deps));
  await app.register(variableRoutes(deps.secrets));
  await app.register(proxyHostRoutes(deps.secrets));
  await app.register(billingRoutes(deps.billing));
  await app.register(handleRoutes(deps.hosts));
  await app.register(domainRoutes(deps.hosts));
  await app.register(linkRoutes(deps.hosts));
  await app.register(
    proxyRoutes({ ...deps.secrets, config: ctx.config, resolve: ctx.resolveHost, ca: ctx.proxyCa }),
  );

  if (ctx.config.serveFastPath) {
    const fastPath = installSiteFastPath(app.server, {
      isSiteHost: (hostname) => hostTarget(hostname, baseHost) === 'site',
      handle: (req, res, hostname) => siteServer.handle(req, res, hostname),
      memoBytes,
      generation: () => siteServer.generation(),
      now: () => ctx.clock.now(),
      countResponse: (status) => siteServer.countResponse(status),
    });
    if (fastPath === null) {
      ctx.logger.warn('site fast path unavailable on this Node release: node:http serves every request');
    } else {
      registerFastPathMetrics(metrics, () => fastPath.stats());
      // node:http closes its idle connections on close; the fast path's are its own to close.
      app.addHook('preClose', (done) => {
        fastPath.closeIdle();
        done();
      });
    }
  }
  app.addHook('onClose', async () => siteServer.close());
  await app.ready();
  return app;
}

/** The node:http server behind the app (for listen/close in tests and server.ts). */
export const httpServerOf = (app: App): Server => app.server;
