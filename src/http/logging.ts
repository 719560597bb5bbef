// Structured logs (pino) with request ids. Nothing secret reaches a line: headers are not logged,
// and secret-bearing query parameters (upload tokens, claim tokens) and checkout links are masked in URLs.

import type { Writable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { type Logger, pino } from 'pino';

const SECRET_QUERY_PARAMS = new Set(['token', 'code', 'key', 'apikey', 'api_key', 'password', 'claimtoken']);

/** Paths whose last segment is a secret: the test provider's checkout link (it pays for the account). */
const SECRET_PATH = /^(\/billing\/test-checkout\/)[^/?]+/;

/** The URL with secret path segments and the values of secret query parameters replaced by `***`. */
export function redactUrl(rawUrl: string): string {
  const url = rawUrl.replace(SECRET_PATH, '$1***');
  const q = url.indexOf('?');
  if (q === -1) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = (eq === -1 ? pair : pair.slice(0, eq)).toLowerCase();
      return eq !== -1 && SECRET_QUERY_PARAMS.has(name) ? `${pair.slice(0, eq)}=***` : pair;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

export function createLogger(level: string, stream?: Writable): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['req.headers', 'headers.authorization', 'headers.cookie'], remove: true },
      serializers: {
        req: (req: FastifyRequest) => ({
          method: req.method,
          url: redactUrl(req.url),
          host: req.headers?.host,
          remoteAddress: req.clientAddress,
        }),
      },
    },
    stream ?? pino.destination({ fd: 1, sync: false }),
  );
}
