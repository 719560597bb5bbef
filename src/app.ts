// The HTTP app: one node:http server whose requests are routed by Host, built from the services the
// composition root (src/compose.ts) hands it.
// The BASE_URL host (and bare IP hosts) goes to Fastify (API, pages, ops); every other host goes to
// the site server directly, so site traffic pays no framework routing or hooks (DESIGN "House style" 10).
// Plain site GET/HEAD requests do not even reach node:http's request objects: the site fast path
// (src/serve/http1/) reads them off the connection and hands node:http everything else.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { AccountDeps } from './core/account.js';
import type { BillingDeps } from './core/billing.js';
import type { BodyPace } from './core/body-pace.js';
import { ACME_CHALLENGE_PREFIX } from './core/certificates.js';
import type { DomainDeps } from './core/domains.js';
import type { HandleDeps } from './core/handle.js';
import { hostnameOf, hostTarget } from './core/hosts.js';
import type { LinkDeps } from './core/links.js';
import type { OperatorDeps } from './core/operators.js';
import type { ProxyDeps } from './core/proxy.js';
import type { ProxyHostDeps } from './core/proxy-hosts.js';
import type { PublishDeps } from './core/publish.js';
import type { ReportDeps } from './core/reports.js';
import type { SessionDeps } from './core/sessions.js';
import type { SignInDeps } from './core/signin.js';
import type { TlsAskDeps } from './core/tls-ask.js';
import type { UploadDeps } from './core/upload.js';
import type { VariableDeps } from './core/variables.js';
import type { WebhookDeps } from './core/webhooks.js';
import { accountRoutes } from './http/account.js';
import { adminRoutes } from './http/admin.js';
import { aliasRoutes } from './http/aliases.js';
import { analyticsRoutes } from './http/analytics.js';
import { archiveRoutes } from './http/archive.js';
import { registerAuditCaller } from './http/audit.js';
import { authRoutes } from './http/auth.js';
import { billingRoutes } from './http/billing.js';
import { registerClientAddress } from './http/client-address.js';
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
import { type Metrics, observeRequest, registerFastPathMetrics } from './http/metrics.js';
import { openApiOptions } from './http/openapi.js';
import { type HealthDeps, opsRoutes } from './http/ops.js';
import { adminPages } from './http/pages/admin.js';
import { billingPages } from './http/pages/billing.js';
import { claimPages } from './http/pages/claim.js';
import { dashboardPages } from './http/pages/dashboard.js';
import { landingPages } from './http/pages/landing.js';
import { loginPages } from './http/pages/login.js';
import { registerFormBodies } from './http/pages/page.js';
import { reportPages } from './http/pages/report.js';
import { proxyRoutes } from './http/proxy.js';
import { proxyHostRoutes } from './http/proxy-hosts.js';
import { limitRequest, type RateLimitDeps, registerRateLimit } from './http/rate-limit.js';
import { reportRoutes } from './http/reports.js';
import { registerRequestBodies } from './http/request-body.js';
import { siteRoutes } from './http/sites.js';
import { tokenRoutes } from './http/tokens.js';
import { uploadRoutes } from './http/uploads.js';
import { variableRoutes } from './http/variables.js';
import { webhookRoutes } from './http/webhooks.js';
import { MAX_REQUEST_HEAD_BYTES, NodeSiteResponse } from './serve/exchange.js';
import { installSiteFastPath } from './serve/http1/connection.js';
import { MEMO_MAX_CHARGE_BYTES, type MemoEntry } from './serve/http1/memo.js';
import type { SiteServer } from './serve/site-server.js';
import type { Clock } from './shared/clock.js';

/** The policy of the BASE_URL host's answers that are not pages: nothing may load, run or frame them. */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";

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

/**
 * How long a whole request may take to arrive. node:http's default (300 s) cut a 200 MB archive deploy or
 * upload on a link under 0.7 MB/s; bodies are bounded by the pace rule (src/core/body-pace.ts) and heads
 * by headersTimeout, so this only caps a body that keeps the pace for very long: an hour, the life of an
 * upload address.
 */
export const REQUEST_TIMEOUT_MS = 3_600_000;

/** Two years, without includeSubDomains: sites and handles under SITE_DOMAIN decide for themselves. */
const HSTS = 'max-age=63072000';

const isEncrypted = (socket: Socket): boolean => (socket as TLSSocket).encrypted === true;

/** No Host, or an IP literal (`127.0.0.1`, `[::1]`). */
const isAddressHost = (hostname: string): boolean =>
  hostname === '' || isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;

/** RFC 8555 §8.3: the key authorization as text, for any host; 404 for a token nobody published. */
function answerAcmeChallenge(
  acme: NonNullable<AppServices['acme']>,
  req: IncomingMessage,
  res: ServerResponse,
  logger: Logger,
): void {
  const token = (req.url ?? '').slice(ACME_CHALLENGE_PREFIX.length);
  acme.httpChallenge(token).then(
    (answer) => {
      const body = answer ?? 'Not Found';
      res
        .writeHead(answer === null ? 404 : 200, {
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          'Cache-Control': 'no-store',
        })
        .end(req.method === 'HEAD' ? undefined : body);
    },
    (err: unknown) => {
      logger.error({ err }, 'ACME challenge lookup failed');
      res.writeHead(503, { 'Content-Length': 0, 'Retry-After': '5' }).end();
    },
  );
}

/** 301 to the same host and target over https (BASE_URL's port, none for 443). */
function redirectToHttps(req: IncomingMessage, res: ServerResponse, port: string): void {
  const hostname = hostnameOf(targetAuthority(req));
  const target = req.url ?? '/';
  if (!/^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/.test(hostname) || target.charCodeAt(0) !== 0x2f) {
    const body = JSON.stringify({
      error: 'Plain HTTP is redirected to https; send a Host header and a path.',
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
    return;
  }
  const location = `https://${hostname}${port === '' ? '' : `:${port}`}${target}`;
  res.writeHead(301, { Location: location, 'Content-Length': 0 }).end();
}

export type App = FastifyInstance;

/** What the HTTP app uses: one core dependency object per area, each built once (src/compose.ts). */
export interface AppServices {
  config: Config;
  logger: Logger;
  clock: Clock;
  health: HealthDeps;
  rateLimit: RateLimitDeps;
  signIn: SignInDeps;
  sessions: SessionDeps;
  account: AccountDeps;
  /** Sites: publish, update, finalize (with the secret scan), list, claim, metadata, versions. */
  publish: PublishDeps;
  uploads: UploadDeps & { uploadsPerClient: number };
  /** Site variables and proxy hosts. */
  secrets: VariableDeps & ProxyHostDeps;
  proxy: ProxyDeps;
  /** Handle, custom domains, links, site aliases, the TLS front end's question. */
  hosts: HandleDeps & DomainDeps & LinkDeps & TlsAskDeps;
  billing: BillingDeps;
  /** Webhook endpoints and their delivery log. */
  webhooks: WebhookDeps;
  /** Abuse reports: the API, the /report page and the operators' list. */
  reports: ReportDeps;
  /** How slowly request bodies may arrive. */
  bodyPace: BodyPace;
  /** The operators' API and pages (ADMIN_EMAILS). */
  operators: OperatorDeps;
  /** ACME HTTP-01 challenges answered on the plain port (only with on-demand certificates). */
  acme?: { httpChallenge(token: string): Promise<string | null> };
}

/** The site server the non-API hosts go to, and /metrics. */
export interface AppSites {
  siteServer: SiteServer;
  metrics: Metrics;
}

export async function buildApp(services: AppServices, sites: AppSites): Promise<App> {
  const { config, logger, clock } = services;
  const { siteServer, metrics } = sites;
  const { baseHost } = config;
  const { acme } = services;
  // TLS_PORT with an https BASE_URL: the plain port answers ACME challenges and redirects the rest.
  const redirectPlain = config.tls !== undefined && config.scheme === 'https';
  const httpsPort = new URL(config.baseUrl).port;

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
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
    frameworkErrors: frameworkErrorHandler(async (req, reply) =>
      limitRequest(services.rateLimit, req, reply),
    ),
    clientErrorHandler: clientErrorResponse,
    serverFactory: (handler) =>
      createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, (req: IncomingMessage, res: ServerResponse) => {
        if (acme !== undefined && req.url?.startsWith(ACME_CHALLENGE_PREFIX) && !isEncrypted(req.socket)) {
          answerAcmeChallenge(acme, req, res, logger);
          return;
        }
        const hostname = hostnameOf(targetAuthority(req));
        // An IP literal (or no Host) can have no certificate, so https cannot serve it: a health check
        // or metrics scrape by address keeps its plain answer (decisions.md "HTTPS in Slipway"), unless
        // the address is BASE_URL's own host, which CONTRACT says is redirected like every other request.
        if (
          redirectPlain &&
          !isEncrypted(req.socket) &&
          (!isAddressHost(hostname) || hostname === baseHost)
        ) {
          redirectToHttps(req, res, httpsPort);
          return;
        }
        if (req.url === '*') {
          answerAsteriskForm(req, res);
          return;
        }
        if (hostTarget(hostname, baseHost) === 'api') handler(req, res);
        else siteServer.handle(req, new NodeSiteResponse(res, services.bodyPace), hostname);
      }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.server.requestTimeout = REQUEST_TIMEOUT_MS;
  registerClientAddress(app, config.trustProxy);
  registerRequestBodies(app, services.bodyPace);
  registerJsonParser(app);
  registerErrorHandling(app);
  // Every handler runs as its caller, whom the audit log's entries name (src/http/audit.ts).
  registerAuditCaller(app);

  await app.register(swagger, openApiOptions(config));

  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // Every answer of the BASE_URL host, where the dashboard's session lives: JSON that quotes a caller's
  // input (or anything else without a policy of its own) is never sniffed into a page, never runs and is
  // never framed. Pages set their own, looser policy (http/pages/page.ts); the proxy a stricter one.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (redirectPlain && isEncrypted(req.raw.socket)) reply.header('strict-transport-security', HSTS);
    if (!reply.hasHeader('x-content-type-options')) reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', API_CSP);
    done(null, payload);
  });
  registerRateLimit(app, services.rateLimit);
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

  await app.register(opsRoutes({ ...services.health, metrics }));
  // The web pages (src/http/pages/) share one scope, the only one that parses form bodies: the API's
  // routes take JSON. Each page plugin checks its own sessions and forms (src/http/pages/session.ts).
  await app.register(async (pages) => {
    await registerFormBodies(pages);
    await pages.register(landingPages(config));
    await pages.register(loginPages(services));
    await pages.register(dashboardPages(services));
    await pages.register(claimPages(services));
    await pages.register(billingPages(services.billing));
    await pages.register(reportPages({ sessions: services.sessions, reports: services.reports, config }));
    await pages.register(adminPages({ sessions: services.sessions, operators: services.operators }));
  });
  await app.register(authRoutes(services.signIn));
  await app.register(accountRoutes(services.account));
  await app.register(siteRoutes(services.publish));
  await app.register(archiveRoutes(services.publish));
  await app.register(uploadRoutes(services.uploads));
  await app.register(aliasRoutes(services.hosts));
  await app.register(variableRoutes(services.secrets));
  await app.register(proxyHostRoutes(services.secrets));
  await app.register(billingRoutes(services.billing));
  await app.register(handleRoutes(services.hosts));
  await app.register(domainRoutes(services.hosts));
  await app.register(linkRoutes(services.hosts));
  await app.register(proxyRoutes(services.proxy));
  await app.register(tokenRoutes(services.publish));
  await app.register(webhookRoutes(services.webhooks));
  await app.register(reportRoutes(services.reports));
  await app.register(adminRoutes(services.operators));
  await app.register(analyticsRoutes(services.publish));

  if (config.serveFastPath) {
    const fastPath = installSiteFastPath(app.server, {
      isSiteHost: (hostname) => hostTarget(hostname, baseHost) === 'site',
      handle: (req, res, hostname) => siteServer.handle(req, res, hostname),
      memoStore: (onDrop) => siteServer.memoStore<MemoEntry>(MEMO_MAX_CHARGE_BYTES, onDrop),
      generation: () => siteServer.generation(),
      unchangedSince: (slug, host, generation) => siteServer.unchangedSince(slug, host, generation),
      now: () => clock.now(),
      countResponse: (status) => siteServer.countResponse(status),
      countReuse: (tally, req, now) => siteServer.countReuse(tally, req, now),
      ...(redirectPlain ? { servesConnection: isEncrypted } : {}),
      ...(acme !== undefined ? { reservedPrefix: ACME_CHALLENGE_PREFIX } : {}),
    });
    if (fastPath === null) {
      logger.warn('site fast path unavailable on this Node release: node:http serves every request');
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
