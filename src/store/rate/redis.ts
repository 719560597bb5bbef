// Rate-limit counters in Redis, shared by every node: one atomic INCR + PEXPIREAT script per request.

import type { Redis } from 'ioredis';
import { closeConnection } from '../redis.js';
import type { RateStore } from './types.js';

/**
 * KEYS[1] counter, ARGV[1] window end (Unix ms). Re-setting the same absolute expiry on every call is
 * idempotent and also heals a counter that somehow lost its TTL. Runs atomically inside Redis, so
 * concurrent increments from any number of clients never over-admit.
 */
const INCREMENT_LUA = `
local count = redis.call('INCR', KEYS[1])
redis.call('PEXPIREAT', KEYS[1], ARGV[1])
return count
`;

const COMMAND = 'slipwayRateIncrement';
type IncrementCommand = (key: string, expiresAtMs: number) => Promise<number>;

export interface RedisRateStoreOptions {
  /** Namespace for every key (e.g. `slipway:`); counters live at `<prefix>rate:<key>`. */
  prefix: string;
  /** When true, close() also quits `redis` (default false: whoever made the connection closes it). */
  ownsConnection?: boolean;
}

export class RedisRateStore implements RateStore {
  private readonly prefix: string;
  private readonly ownsConnection: boolean;
  private readonly incrementScript: IncrementCommand;

  constructor(
    private readonly redis: Redis,
    options: RedisRateStoreOptions,
  ) {
    this.prefix = `${options.prefix}rate:`;
    this.ownsConnection = options.ownsConnection ?? false;
    // defineCommand sends EVALSHA and falls back to EVAL once per connection: one round trip per call.
    redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: INCREMENT_LUA });
    const command = (redis as unknown as Record<string, IncrementCommand | undefined>)[COMMAND];
    if (command === undefined) throw new Error(`ioredis did not define ${COMMAND}`);
    this.incrementScript = command.bind(redis);
  }

  async increment(key: string, expiresAtMs: number): Promise<number> {
    return Number(await this.incrementScript(this.prefix + key, Math.ceil(expiresAtMs)));
  }

  async peek(key: string): Promise<number> {
    return Number((await this.redis.get(this.prefix + key)) ?? 0);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await closeConnection(this.redis);
  }
}
