// Redis connection helpers shared by the Redis-backed stores: one way to open a connection that survives
// Redis going away (fails commands fast instead of queueing them, reconnects within a second of its
// return, logs the outage once per interval) and one way to close it.

import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { LogThrottle } from '../shared/log-throttle.js';

/** Reconnect attempts back off from 100 ms to at most this, so a returning Redis is used within a second. */
const RECONNECT_MAX_DELAY_MS = 1_000;
/** A command on a connection that stopped answering fails after this (node:net may not notice for minutes). */
const COMMAND_TIMEOUT_MS = 2_000;
const ERROR_LOG_INTERVAL_MS = 10_000;

export interface RedisConnectionOptions {
  /** Shown in CLIENT LIST. */
  name: string;
  logger?: Logger;
  /**
   * Queue commands while disconnected (default false: they fail at once, and the API answers 503 rather
   * than holding requests). A subscriber keeps it, so its SUBSCRIBE waits for the connection.
   */
  offlineQueue?: boolean;
}

/** A connection that is not yet connected (call connect()); errors are logged, throttled, never thrown. */
export function openRedis(url: string, options: RedisConnectionOptions): Redis {
  const offlineQueue = options.offlineQueue ?? false;
  const redis = new Redis(url, {
    lazyConnect: true,
    connectionName: options.name,
    retryStrategy: (attempt) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
    enableOfflineQueue: offlineQueue,
    ...(offlineQueue ? {} : { maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS }),
  });
  const throttle = new LogThrottle(ERROR_LOG_INTERVAL_MS);
  // ioredis reconnects on its own; without a listener every failed attempt would be an uncaught 'error'.
  redis.on('error', (err: Error) => {
    if (redis.status === 'end') return;
    throttle.run((suppressed) =>
      options.logger?.warn(
        { err: err.message, connection: options.name, suppressed },
        'Redis connection error',
      ),
    );
  });
  return redis;
}

/**
 * QUIT when connected (queued commands go first) and wait until the socket has closed; otherwise drop the
 * socket and stop reconnecting.
 */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    const ended = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      timer.unref();
      redis.once('end', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    try {
      await redis.quit();
      await ended;
      return;
    } catch {
      // fall through to a hard disconnect
    }
  }
  redis.disconnect();
}
