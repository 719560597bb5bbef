// Leases in Redis so that one node in a cluster runs the singleton jobs: SET NX PX to take, PEXPIRE to
// renew and compare-and-delete to release, each an atomic Lua script.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { closeConnection } from '../redis.js';
import { checkLeaseTtl, type Lease } from './types.js';

/** KEYS[1] lease, ARGV[1] holder id, ARGV[2] ttl ms. Returns 1 when the holder got or renewed it. */
const ACQUIRE_LUA = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] lease, ARGV[1] holder id. Deletes only the holder's own lease. */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

const ACQUIRE = 'slipwayLeaseAcquire';
const RELEASE = 'slipwayLeaseRelease';
type AcquireCommand = (key: string, holderId: string, ttlMs: number) => Promise<number>;
type ReleaseCommand = (key: string, holderId: string) => Promise<number>;

export interface RedisLeaseOptions {
  /** Namespace for every key (e.g. `slipway:`); leases live at `<prefix>lease:<name>`. */
  prefix: string;
  /** Default: `<hostname>:<pid>:<uuid>`, unique per instance and readable in `GET <key>`. */
  holderId?: string;
  /** When true, close() also quits `redis` (default false: whoever made the connection closes it). */
  ownsConnection?: boolean;
}

export class RedisLease implements Lease {
  readonly holderId: string;
  private readonly prefix: string;
  private readonly ownsConnection: boolean;
  private readonly acquireScript: AcquireCommand;
  private readonly releaseScript: ReleaseCommand;
  /** Names this holder last acquired, released on close() so another node can take over at once. */
  private readonly held = new Set<string>();

  constructor(
    private readonly redis: Redis,
    options: RedisLeaseOptions,
  ) {
    this.prefix = `${options.prefix}lease:`;
    this.holderId = options.holderId ?? `${hostname()}:${process.pid}:${randomUUID()}`;
    this.ownsConnection = options.ownsConnection ?? false;
    redis.defineCommand(ACQUIRE, { numberOfKeys: 1, lua: ACQUIRE_LUA });
    redis.defineCommand(RELEASE, { numberOfKeys: 1, lua: RELEASE_LUA });
    const commands = redis as unknown as Record<string, AcquireCommand | ReleaseCommand | undefined>;
    const acquire = commands[ACQUIRE] as AcquireCommand | undefined;
    const release = commands[RELEASE] as ReleaseCommand | undefined;
    if (acquire === undefined || release === undefined)
      throw new Error('ioredis did not define the lease scripts');
    this.acquireScript = acquire.bind(redis);
    this.releaseScript = release.bind(redis);
  }

  async tryAcquire(name: string, ttlMs: number): Promise<boolean> {
    const ttl = checkLeaseTtl(ttlMs);
    const got = Number(await this.acquireScript(this.prefix + name, this.holderId, ttl)) === 1;
    if (got) this.held.add(name);
    else this.held.delete(name);
    return got;
  }

  async release(name: string): Promise<void> {
    this.held.delete(name);
    await this.releaseScript(this.prefix + name, this.holderId);
  }

  async close(): Promise<void> {
    const names = [...this.held];
    this.held.clear();
    if (this.redis.status === 'ready') {
      await Promise.allSettled(names.map((name) => this.releaseScript(this.prefix + name, this.holderId)));
    }
    if (this.ownsConnection) await closeConnection(this.redis);
  }
}
