// Tells a backing service that is down or unreachable (database, Redis, object store) from every other
// failure, in one place for every store: the API answers such a failure 503 SERVICE_UNAVAILABLE with
// Retry-After, and the site server answers 503 instead of 404 or 500, so clients retry and caches in front
// keep nothing. A bug (a bad query, a constraint, a programming error) stays a 500.

/** Socket-level failures of a connection to a peer (node's errno codes). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_SOCKET_CLOSED',
  // SQLite: another process holds the write lock past busy_timeout.
  'SQLITE_BUSY',
]);

/**
 * PostgreSQL SQLSTATEs meaning "not now, try again": connection exceptions (class 08), operator
 * intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now), too many
 * connections (53300), a statement cancelled by statement_timeout (57014), a read-only standby after a
 * failover (25006).
 */
const PG_RETRYABLE = /^(08...|57P0[123]|53300|57014|25006)$/;

/** Messages of client libraries that carry no code (pg, pg-pool, ioredis, the AWS SDK). */
const MESSAGES = [
  /^Connection terminated/, // pg: the server or the network closed the socket
  /^timeout exceeded when trying to connect/, // pg-pool: connectionTimeoutMillis
  /^Connection terminated due to connection timeout/,
  /is not queryable/, // pg: a client whose connection already failed
  /^Query read timeout/, // pg: query_timeout
  /^Connection is closed\.?$/, // ioredis
  /^Stream isn't writeable/, // ioredis with the offline queue off
  /^Reached the max retries per request limit/, // ioredis MaxRetriesPerRequestError
  /^Command timed out$/, // ioredis commandTimeout
  /^socket hang up$/,
];

/** Error names of client libraries for the same conditions. */
const NAMES = new Set(['MaxRetriesPerRequestError', 'TimeoutError', 'RequestTimeout']);

/** True when `err` (or its cause, or one of an AggregateError's errors) says a backing service is unreachable. */
export function isBackendUnavailable(err: unknown, depth = 0): boolean {
  if (err === null || typeof err !== 'object' || depth > 4) return false;
  const e = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_RETRYABLE.test(e.code))) return true;
  if (typeof e.name === 'string' && NAMES.has(e.name)) return true;
  // The AWS SDK: the object store answered 5xx (503 SlowDown, 500 InternalError) after its own retries.
  const http = e.$metadata?.httpStatusCode;
  if (typeof http === 'number' && http >= 500) return true;
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string))) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isBackendUnavailable(x, depth + 1))) return true;
  return isBackendUnavailable(e.cause, depth + 1);
}
