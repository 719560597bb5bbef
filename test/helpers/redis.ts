// Redis test helpers: the server the tests use, a unique key prefix per run, and cleanup of that prefix.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** Override with TEST_REDIS_URL; the default is the local CI server. */
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** A prefix no other run shares, e.g. `slipway-test:3f9c0a1b2d4e:`. */
export function redisTestPrefix(): string {
  return `slipway-test:${randomBytes(6).toString('hex')}:`;
}

/** A connected client, or a clear error when no Redis is listening. */
export async function connectTestRedis(): Promise<Redis> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {}); // connect() rejects with the same error; keep ioredis from printing it
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `Redis is not reachable at ${TEST_REDIS_URL} (start redis-server or set TEST_REDIS_URL)`,
      {
        cause: err,
      },
    );
  }
  return redis;
}

/** Deletes every key under `prefix` (SCAN MATCH, so it never blocks the server); returns how many. */
export async function cleanupRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) deleted += await redis.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}
