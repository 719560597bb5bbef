// Redis connection helpers shared by the Redis-backed stores.

import type { Redis } from 'ioredis';

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
