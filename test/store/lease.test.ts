// The Lease contract (one holder at a time, renewal, release, expiry) against RedisLease on a real server
// and MemoryLease holders sharing one table, plus the Redis-specific key layout.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { MovableClock } from '../../src/shared/clock.js';
import { MemoryLease, type MemoryLeaseTable } from '../../src/store/lease/memory.js';
import { RedisLease } from '../../src/store/lease/redis.js';
import type { Lease } from '../../src/store/lease/types.js';
import { cleanupRedisPrefix, connectTestRedis, redisTestPrefix } from '../helpers/redis.js';

interface Holders {
  a: Lease;
  b: Lease;
  /** Lets `ms` pass for the lease store (real time for Redis, a clock move for memory). */
  pass(ms: number): Promise<void>;
  dispose(): Promise<void>;
}

/** Short enough to wait out for real against Redis. */
const TTL = 300;

function leaseContract(name: string, makeHolders: () => Promise<Holders>): void {
  describe(`${name} (Lease contract)`, () => {
    let h: Holders;
    let n = 0;
    /** A fresh lease name per test. */
    const fresh = () => `job-${++n}`;

    before(async () => {
      h = await makeHolders();
    });
    after(async () => {
      await h.dispose();
    });

    test('only one of two holders acquires', async () => {
      const job = fresh();
      const results = await Promise.all([h.a.tryAcquire(job, TTL), h.b.tryAcquire(job, TTL)]);
      assert.deepEqual([...results].sort(), [false, true]);
      const [winner, loser] = results[0] ? [h.a, h.b] : [h.b, h.a];
      assert.equal(await loser.tryAcquire(job, TTL), false);
      assert.equal(await winner.tryAcquire(job, TTL), true);
    });

    test('the holder renews, keeping the lease past its first ttl', async () => {
      const job = fresh();
      assert.equal(await h.a.tryAcquire(job, TTL), true);
      await h.pass(200);
      assert.equal(await h.a.tryAcquire(job, TTL), true);
      await h.pass(200); // 400 ms after the first acquire: only the renewal keeps it
      assert.equal(await h.b.tryAcquire(job, TTL), false);
    });

    test('after release the other holder acquires', async () => {
      const job = fresh();
      assert.equal(await h.a.tryAcquire(job, 60_000), true);
      assert.equal(await h.b.tryAcquire(job, 60_000), false);
      await h.a.release(job);
      assert.equal(await h.b.tryAcquire(job, 60_000), true);
      assert.equal(await h.a.tryAcquire(job, 60_000), false);
    });

    test('after the ttl runs out the other holder acquires', async () => {
      const job = fresh();
      assert.equal(await h.a.tryAcquire(job, TTL), true);
      await h.pass(TTL + 200);
      assert.equal(await h.b.tryAcquire(job, TTL), true);
      assert.equal(await h.a.tryAcquire(job, TTL), false);
    });

    test('release by a non-holder does not delete the lease', async () => {
      const job = fresh();
      assert.equal(await h.a.tryAcquire(job, 60_000), true);
      await h.b.release(job);
      assert.equal(await h.b.tryAcquire(job, 60_000), false);
      await h.b.release('never-taken');
      assert.equal(await h.a.tryAcquire(job, 60_000), true);
    });

    test('names are independent', async () => {
      const [x, y] = [fresh(), fresh()];
      assert.equal(await h.a.tryAcquire(x, 60_000), true);
      assert.equal(await h.b.tryAcquire(y, 60_000), true);
      assert.equal(await h.a.tryAcquire(y, 60_000), false);
      assert.equal(await h.b.tryAcquire(x, 60_000), false);
    });

    test('a ttl below 1 ms is refused', async () => {
      await assert.rejects(h.a.tryAcquire(fresh(), 0), RangeError);
      await assert.rejects(h.a.tryAcquire(fresh(), Number.NaN), RangeError);
    });
  });
}

const prefix = redisTestPrefix();
let admin: Redis;

before(async () => {
  admin = await connectTestRedis();
});
after(async () => {
  await cleanupRedisPrefix(admin, prefix);
  await admin.quit();
});

leaseContract('RedisLease', async () => {
  const [ra, rb] = await Promise.all([connectTestRedis(), connectTestRedis()]);
  const a = new RedisLease(ra, { prefix, ownsConnection: true });
  const b = new RedisLease(rb, { prefix, ownsConnection: true });
  return {
    a,
    b,
    pass: (ms) => sleep(ms),
    async dispose() {
      await Promise.all([a.close(), b.close()]);
      assert.equal(ra.status, 'end');
      assert.equal(rb.status, 'end');
    },
  };
});

leaseContract('MemoryLease', async () => {
  const clock = new MovableClock();
  const table: MemoryLeaseTable = new Map();
  const a = new MemoryLease({ clock, table });
  const b = new MemoryLease({ clock, table });
  return {
    a,
    b,
    async pass(ms) {
      clock.advance(ms);
    },
    async dispose() {
      await Promise.all([a.close(), b.close()]);
      assert.equal(table.size, 0);
    },
  };
});

describe('RedisLease specifics', () => {
  test('the key is <prefix>lease:<name>, holds the holder id and carries the ttl', async () => {
    const lease = new RedisLease(admin, { prefix, holderId: 'node-1' });
    assert.equal(lease.holderId, 'node-1');
    assert.equal(await lease.tryAcquire('sweeper', 10_000), true);
    assert.equal(await admin.get(`${prefix}lease:sweeper`), 'node-1');
    const ttl = await admin.pttl(`${prefix}lease:sweeper`);
    assert.ok(ttl > 9_000 && ttl <= 10_000, `pttl ${ttl}`);
    await lease.release('sweeper');
    assert.equal(await admin.exists(`${prefix}lease:sweeper`), 0);
  });

  test('renewal resets the ttl to the new value', async () => {
    const lease = new RedisLease(admin, { prefix, holderId: 'node-2' });
    assert.equal(await lease.tryAcquire('gc', 2_000), true);
    assert.equal(await lease.tryAcquire('gc', 60_000), true);
    assert.ok((await admin.pttl(`${prefix}lease:gc`)) > 50_000);
    await lease.release('gc');
  });

  test('default holder ids are unique per instance', () => {
    const x = new RedisLease(admin, { prefix });
    const y = new RedisLease(admin, { prefix });
    assert.notEqual(x.holderId, y.holderId);
  });

  test('close() releases held leases so another node takes over at once, and keeps a shared connection', async () => {
    const first = new RedisLease(admin, { prefix, holderId: 'leaving' });
    const second = new RedisLease(admin, { prefix, holderId: 'staying' });
    assert.equal(await first.tryAcquire('handover', 60_000), true);
    assert.equal(await second.tryAcquire('handover', 60_000), false);
    await first.close();
    assert.equal(admin.status, 'ready');
    assert.equal(await second.tryAcquire('handover', 60_000), true);
    await second.release('handover');
  });

  test('concurrent holders on many connections: exactly one wins', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => connectTestRedis()));
    const leases = clients.flatMap((c) =>
      [0, 1, 2, 3].map(() => new RedisLease(c, { prefix, ownsConnection: false })),
    );
    try {
      const results = await Promise.all(leases.map((l) => l.tryAcquire('race', 60_000)));
      assert.equal(results.filter(Boolean).length, 1);
    } finally {
      await Promise.all(leases.map((l) => l.close()));
      await Promise.all(clients.map((c) => c.quit()));
    }
  });
});

describe('MemoryLease alone', () => {
  test('a single process always holds its leases', async () => {
    const lease = new MemoryLease();
    assert.equal(await lease.tryAcquire('sweeper', 1000), true);
    assert.equal(await lease.tryAcquire('sweeper', 1000), true);
    await lease.release('sweeper');
    assert.equal(await lease.tryAcquire('sweeper', 1000), true);
    await lease.close();
  });
});
