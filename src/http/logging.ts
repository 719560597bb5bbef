// Structured logs (pino) with request ids. Nothing secret reaches a line: headers are not logged,
// and secret-bearing query parameters (upload tokens, claim tokens) are masked in URLs.

import type { Writable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { type Logger, pino } from 'pino';

const SECRET_QUERY_PARAMS = new Set(['token', 'code', 'key', 'apikey', 'api_key', 'password', 'claimtoken']);

/** The URL with the values of secret query parameters replaced by `***`. */
export function redactUrl(url: string): string {
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
          remoteAddress: req.ip,
        }),
      },
    },
    stream ?? pino.destination({ fd: 1, sync: false }),
  );
}
