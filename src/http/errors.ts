// One error handler for the API host: every failure leaves as the spec's body `{error, code, status}`.
// Framework errors (validation, body parsing, unknown route, wrong method) map here, in one place.

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ApiError, invalid } from '../core/errors.js';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** Maps anything thrown by a handler, hook or the framework to an ApiError. */
export function toApiError(err: FastifyError | ApiError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError;
  if (e.validation) {
    return invalid(`Invalid request: ${e.message}`, {
      hint: 'See /api/openapi.json for the expected shape.',
    });
  }
  switch (e.code) {
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

export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).type('application/json; charset=utf-8').send(error.toBody());
}

export function registerErrorHandling(app: FastifyInstance): void {
  // A shadow router of every registered route tells "wrong method" (405) from "unknown route" (404).
  const probe = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (METHODS.includes(m as HTTPMethod) && !probe.find(m as HTTPMethod, route.url)) {
        probe.on(m as HTTPMethod, route.url, () => {});
      }
    }
  });

  app.setErrorHandler((err: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: apiError.code, status: apiError.status }, apiError.message);
    return sendApiError(reply, apiError);
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
    return sendApiError(reply, new ApiError('NOT_FOUND', `No route ${req.method} ${path}`));
  });
}
