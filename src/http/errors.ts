// One error handler for the API host: every failure leaves as the spec's body `{error, code, status}`.
// Framework errors (validation, body parsing, unknown route, wrong method) map here, in one place.

import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { BodyTooSlowError, bodyTooSlow } from '../core/body-pace.js';
import { ApiError, invalid } from '../core/errors.js';
import { html } from '../shared/html.js';
import { LogThrottle } from '../shared/log-throttle.js';
import { isUnstorableText } from '../store/db/db.js';
import { isBackendUnavailable } from '../store/unavailable.js';
import { sendPage } from './pages/page.js';
import { validationMessage } from './validation.js';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** An outage is reported at warn level once per this interval (one process serves one app). */
const outageLog = new LogThrottle(10_000);

/** Longest path parameter the router accepts (a domain is at most 253 characters, a file path 500). */
export const MAX_PARAM_LENGTH = 1024;

/** Maps anything thrown by a handler, hook or the framework (while serving `req`) to an ApiError. */
export function toApiError(err: FastifyError | ApiError | Error, req: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof BodyTooSlowError) return bodyTooSlow(err);
  const e = err as FastifyError;
  if (e.validation) {
    return invalid(`Invalid request: ${validationMessage(e, req)}.`, {
      hint: 'See /api/openapi.json for the expected shape.',
    });
  }
  if (isBackendUnavailable(err)) return unavailable(err);
  if (isUnstorableText(err)) {
    return invalid('The request holds text that cannot be stored (a NUL character or invalid UTF-8).');
  }
  switch (e.code) {
    case 'FST_ERR_BAD_URL':
      return invalid('The URL path holds an invalid percent-encoding (not UTF-8, or a lone surrogate).', {
        hint: 'Percent-encode path segments as UTF-8 (encodeURIComponent).',
      });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return invalid(`A path segment is longer than ${MAX_PARAM_LENGTH} characters.`, { status: 414 });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return invalid('Request body is too large (JSON bodies are limited to 2 MB).', { status: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return invalid(`Unsupported Content-Type; send JSON with Content-Type: application/json.`, {
        status: 415,
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return invalid('Content-Length does not match the body.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalid('Malformed JSON body.');
  }
  const status = e.statusCode ?? 500;
  if (status >= 400 && status < 500) return invalid(e.message || 'Bad request', { status });
  return new ApiError(
    'INTERNAL_ERROR',
    'Internal error; the request id in x-request-id helps support find it.',
  );
}

/** 503 for a request that needs a backing service (database, Redis, object store) that is down. */
export const unavailable = (cause: unknown) =>
  new ApiError('SERVICE_UNAVAILABLE', 'The service is briefly unavailable; try again in a few seconds.', {
    headers: { 'Retry-After': '5' },
    cause,
  });

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

/**
 * Node's `clientError` (a head node:http could not parse, one over the header limit, a header timeout):
 * answered with the spec's body before any route or host is known, then the connection is closed.
 *
 * Closed by a lingering close, as nginx does: the answer is sent with a FIN and what the client is still
 * sending is read and dropped until it closes, for at most LINGER_MS. Destroying the socket at once (node's
 * and Fastify's default) closes it with unread bytes in the kernel's buffer, which sends a reset; a client
 * still writing a 2 MB head then sees ECONNRESET instead of the 431, more often over TLS.
 * Replaces Fastify's own body, which lacks `code` and `status`.
 */
export function clientErrorResponse(err: NodeJS.ErrnoException, socket: Socket): void {
  // The errored parser answers every later chunk with the same error: the first call already answered.
  if (lingering.has(socket)) return;
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request head did not arrive in time.']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request head is larger than the server accepts.']
        : [400, 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ error: message, code: 'INVALID_REQUEST', status });
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  lingering.add(socket);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** How long a refused connection is read and drained after its answer before it is destroyed. */
const LINGER_MS = 2000;
const lingering = new WeakSet<Socket>();

/** Every route registered on an app, as registered (HEAD twins included), for tests and docs. */
const routeLists = new WeakMap<FastifyInstance, Array<{ method: string; url: string }>>();
export const registeredRoutes = (app: FastifyInstance): ReadonlyArray<{ method: string; url: string }> =>
  routeLists.get(app) ?? [];

export function registerErrorHandling(app: FastifyInstance): void {
  // A shadow router of every registered route tells "wrong method" (405) from "unknown route" (404).
  const probe = FindMyWay();
  const routes: Array<{ method: string; url: string }> = [];
  routeLists.set(app, routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      routes.push({ method: m, url: route.url });
      if (METHODS.includes(m as HTTPMethod) && !probe.find(m as HTTPMethod, route.url)) {
        probe.on(m as HTTPMethod, route.url, () => {});
      }
    }
  });

  app.setErrorHandler((err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply) => {
    return sendApiError(reply, logged(req, err));
  });

  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((m) => probe.find(m, path) !== null);
    if (allowed.length > 0) {
      return sendApiError(
        reply,
        new ApiError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed on ${path}; use ${allowed.join(', ')}.`,
          {
            headers: { Allow: allowed.join(', ') },
          },
        ),
      );
    }
    // A person's browser asking for a page that does not exist: the 404 page, in the pages' layout.
    // The API's namespaces always answer with the spec's JSON body.
    if (
      (req.method === 'GET' || req.method === 'HEAD') &&
      !/^\/(api|internal)(\/|$)/.test(path) &&
      /\btext\/html\b/.test(req.headers.accept ?? '')
    ) {
      return sendPage(
        reply,
        404,
        'Page not found',
        html`<h1>Page not found</h1><p>There is no page at this address.</p>
<p><a href="/">Home</a> · <a href="/dashboard">Your sites</a> · <a href="/docs">API reference</a></p>`,
      );
    }
    return sendApiError(reply, new ApiError('NOT_FOUND', `No route ${req.method} ${path}`));
  });
}

/**
 * Maps `err`, logging it at the level its kind deserves: 5xx as errors with their stack; a backend outage
 * (which the store's own throttled warning reports) and 4xx as one info line; a proxy upstream's failure
 * as one warning.
 */
function logged(req: FastifyRequest, err: FastifyError | ApiError | Error): ApiError {
  const apiError = toApiError(err, req);
  if (apiError.code === 'SERVICE_UNAVAILABLE') {
    // Every request of an outage lands here: a warning once per interval, an info line (no stack) each.
    const cause = String(((apiError.cause ?? err) as { message?: unknown }).message);
    outageLog.run((suppressed) => req.log.warn({ cause, suppressed }, 'backend unavailable: answering 503'));
    req.log.info({ code: apiError.code, status: apiError.status, cause }, 'backend unavailable');
  } else if (apiError.code === 'UPSTREAM_ERROR') {
    // The site proxy's upstream failed, not this service: one line, no stack (the message names no secret).
    req.log.warn({ code: apiError.code, status: apiError.status }, apiError.message);
  } else if (apiError.status >= 500) req.log.error({ err }, 'request failed');
  else req.log.info({ code: apiError.code, status: apiError.status }, apiError.message);
  return apiError;
}

/**
 * Fastify's `frameworkErrors`: refusals raised while routing (a path parameter that is not valid
 * percent-encoded UTF-8, one over MAX_PARAM_LENGTH). No hook has run, so `before` does what the
 * onRequest hooks would (request id, rate-limit window), then the error leaves through the same mapping.
 */
export function frameworkErrorHandler(before: (req: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    reply.header('x-request-id', req.id);
    before(req, reply).then(
      () => sendApiError(reply, logged(req, err)),
      (refusal: Error) => sendApiError(reply, logged(req, refusal)),
    );
  };
}
