// Structured logs (pino) with request ids. Nothing secret reaches a line: headers are not logged, and every
// line is written through redactSecrets, which masks each token the service puts in a URL wherever that
// URL appears (a request's own URL, a URL nested in `next=`, a path named in a message), percent-encoded
// any number of times or not at all.

import type { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';

/** Query parameters whose values are secrets: upload, claim and portal tokens, sign-in codes, keys. */
const SECRET_PARAMS = ['token', 'code', 'key', 'apikey', 'api_key', 'password', 'claimtoken'];

/** `char` as it appears at any depth of percent-encoding: `=`, `%3D`, `%253D`, ... (RFC 3986 §2.1). */
function anyDepth(char: string): string {
  const hex = char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  return `(?:\\${char}|%(?:25)*${hex})`;
}
const [QUERY, AND, EQUALS, SLASH, HASH, UNDERSCORE, DOT] = ['?', '&', '=', '/', '#', '_', '.'].map(anyDepth);
/** A value runs to the next `&` or `#` at any depth; `"` and `\` end it too, as it sits in a JSON line. */
const VALUE = `(?:(?!${AND}|${HASH})[^&#\\s"\\\\])+`;

/** Each secret with what stays readable before it (group 1); the secret itself becomes `***`. */
const SECRET_RULES = [
  // A secret query parameter's value, at the top of a URL or nested in another parameter.
  new RegExp(`((?:${QUERY}|${AND}|;)(?:${SECRET_PARAMS.join('|')})${EQUALS})${VALUE}`, 'gi'),
  // The test provider's checkout link (it pays for the account): the segment after its path.
  new RegExp(`(${SLASH}billing${SLASH}test-checkout${SLASH})[A-Za-z0-9_-]+`, 'gi'),
  // Token shapes, wherever they stand: claim tokens, API keys, deploy tokens, portal tokens (`<account>.<expiry>.<MAC>`).
  new RegExp(`(clm${UNDERSCORE})[0-9a-f]+`, 'gi'),
  new RegExp(`(svc${UNDERSCORE}live${UNDERSCORE})[0-9a-f]+`, 'gi'),
  new RegExp(`(svc${UNDERSCORE}site${UNDERSCORE})[0-9a-f]+`, 'gi'),
  new RegExp(`(acct${UNDERSCORE}[A-Za-z0-9_-]+${DOT}\\d+${DOT})[A-Za-z0-9_-]+`, 'gi'),
];

/** The text with every secret of the rules above replaced by `***`. */
export function redactSecrets(text: string): string {
  return SECRET_RULES.reduce((out, rule) => out.replace(rule, '$1***'), text);
}

/** What a request's log line shows of it (Fastify's request has these; headers are never logged). */
interface LoggedRequest {
  method: string;
  url: string;
  headers?: { host?: string };
  clientAddress?: string;
}

export function createLogger(level: string, stream?: Writable): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: ['req.headers', 'headers.authorization', 'headers.cookie'], remove: true },
      serializers: {
        req: (req: LoggedRequest) => ({
          method: req.method,
          url: req.url,
          host: req.headers?.host,
          remoteAddress: req.clientAddress,
        }),
      },
      // Every line, of every child logger, after serialization: no field or message escapes the rules.
      hooks: { streamWrite: redactSecrets },
    },
    stream ?? pino.destination({ fd: 1, sync: false }),
  );
}
