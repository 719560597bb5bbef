// Redis-backed shared state against a real server: the rate store (atomic, expiring counters, the
// rate-limit rule across clients) and the change bus (fan-out between nodes, prefixes, reconnect).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Redis } from 'ioredis';
import { checkRateLimit } from '../../src/core/rate-limit.js';
import type { SiteChange } from '../../src/shared/events.js';
import { RedisChangeBus } from '../../src/store/events/redis.js';
import { RedisRateStore } from '../../src/store/rate/redis.js';
import { cleanupRedisPrefix, connectTestRedis, redisTestPrefix, TEST_REDIS_URL } from '../helpers/redis.js';

const prefix = redisTestPrefix();
let admin: Redis;

before(async () => {
  admin = await connectTestRedis();
});

after(async () => {
  await cleanupRedisPrefix(admin, prefix);
  assert.equal((await admin.scan('0', 'MATCH', `${prefix}*`, 'COUNT', 1000))[1].length, 0);
  await admin.quit();
});

/**
 * Resolves once `bus` delivers a change equal to `expected` (earlier, unrelated messages still in flight
 * are skipped), or rejects after `ms`.
 */
function delivered(bus: RedisChangeBus, expected: SiteChange, ms = 1000): Promise<SiteChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`${JSON.stringify(expected)} not delivered within ${ms} ms`));
    }, ms);
    const unsubscribe = bus.subscribe((change) => {
      if (!isDeepStrictEqual(change, expected)) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(change);
    });
  });
}

describe('RedisRateStore', () => {
  let clientA: Redis;
  let clientB: Redis;
  let storeA: RedisRateStore;
  let storeB: RedisRateStore;

  before(async () => {
    [clientA, clientB] = await Promise.all([connectTestRedis(), connectTestRedis()]);
    storeA = new RedisRateStore(clientA, { prefix, ownsConnection: true });
    storeB = new RedisRateStore(clientB, { prefix, ownsConnection: true });
  });

  after(async () => {
    await Promise.all([storeA.close(), storeB.close()]);
    assert.equal(clientA.status, 'end');
    assert.equal(clientB.status, 'end');
  });

  test('50 concurrent increments over two clients return 1..50, each exactly once', async () => {
    const expiresAt = Date.now() + 60_000;
    const counts = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? storeA : storeB).increment('burst', expiresAt)),
    );
    assert.deepEqual(
      [...counts].sort((x, y) => x - y),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
    assert.equal(await admin.get(`${prefix}rate:burst`), '50');
  });

  test('keys are prefixed and expire exactly at expiresAtMs', async () => {
    const expiresAt = Date.now() + 60_000;
    await storeA.increment('stamp', expiresAt);
    assert.equal(await admin.pexpiretime(`${prefix}rate:stamp`), expiresAt);
    assert.equal(await admin.exists('rate:stamp'), 0);
  });

  test('the counter disappears at the window end and starts again at 1', async () => {
    const expiresAt = Date.now() + 300;
    assert.equal(await storeA.increment('short', expiresAt), 1);
    assert.equal(await storeB.increment('short', expiresAt), 2);
    const ttl = await admin.pttl(`${prefix}rate:short`);
    assert.ok(ttl > 0 && ttl <= 300, `pttl ${ttl}`);
    await sleep(500); // Redis owns the clock here, so a short real wait is the honest test
    assert.equal(await admin.exists(`${prefix}rate:short`), 0);
    assert.equal(await storeB.increment('short', Date.now() + 300), 1);
  });

  test('a window end already past yields 1 and leaves nothing behind', async () => {
    assert.equal(await storeA.increment('past', Date.now() - 1000), 1);
    assert.equal(await storeA.increment('past', Date.now() - 1000), 1);
    assert.equal(await admin.exists(`${prefix}rate:past`), 0);
  });

  test('keys are independent', async () => {
    const expiresAt = Date.now() + 60_000;
    assert.equal(await storeA.increment('k1', expiresAt), 1);
    assert.equal(await storeA.increment('k2', expiresAt), 1);
    assert.equal(await storeB.increment('k1', expiresAt), 2);
  });

  test('checkRateLimit admits exactly 10 of 40 concurrent requests split across two clients', async () => {
    const now = Date.now();
    const decisions = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        checkRateLimit(i % 2 === 0 ? storeA : storeB, 'ip:203.0.113.9', 10, now),
      ),
    );
    assert.equal(decisions.filter((d) => d.allowed).length, 10);
    assert.deepEqual(
      decisions
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    for (const d of decisions.filter((x) => !x.allowed)) assert.equal(d.remaining, 0);
    const key = `${prefix}rate:ip:203.0.113.9:${Math.floor(now / 3_600_000) * 3_600_000}`;
    assert.equal(await admin.get(key), '40');
    assert.equal(await admin.pexpiretime(key), (Math.floor(now / 3_600_000) + 1) * 3_600_000);
  });

  test('close() leaves a connection it does not own open', async () => {
    const client = await connectTestRedis();
    try {
      await new RedisRateStore(client, { prefix }).close();
      assert.equal(client.status, 'ready');
      assert.equal(await client.ping(), 'PONG');
    } finally {
      await client.quit();
    }
  });
});

describe('RedisChangeBus', () => {
  let a: RedisChangeBus;
  let b: RedisChangeBus;
  let other: RedisChangeBus;

  before(async () => {
    [a, b, other] = await Promise.all([
      RedisChangeBus.create(TEST_REDIS_URL, { prefix }),
      RedisChangeBus.create(TEST_REDIS_URL, { prefix }),
      RedisChangeBus.create(TEST_REDIS_URL, { prefix: redisTestPrefix() }),
    ]);
  });

  after(async () => {
    await Promise.all([a.close(), b.close(), other.close()]);
  });

  test('a change reaches the publisher synchronously and the other node within 1 s, once each', async () => {
    const seenByA: SiteChange[] = [];
    const seenByOther: SiteChange[] = [];
    const offA = a.subscribe((c) => seenByA.push(c));
    const offOther = other.subscribe((c) => seenByOther.push(c));
    try {
      const atB = delivered(b, { kind: 'site', slug: 'hello' });
      a.publish({ kind: 'site', slug: 'hello' });
      assert.deepEqual(seenByA, [{ kind: 'site', slug: 'hello' }]); // before publish returned
      assert.deepEqual(await atB, { kind: 'site', slug: 'hello' });
      await sleep(150);
      assert.deepEqual(seenByA, [{ kind: 'site', slug: 'hello' }], 'A ignores its own message from Redis');
      assert.deepEqual(seenByOther, [], 'a bus with another prefix hears nothing');
    } finally {
      offA();
      offOther();
    }
  });

  test('every change kind crosses nodes in both directions', async () => {
    const changes: SiteChange[] = [{ kind: 'host', host: 'docs.example.com' }, { kind: 'all' }];
    for (const change of changes) {
      const atA = delivered(a, change);
      b.publish(change);
      assert.deepEqual(await atA, change);
    }
  });

  test('channel is <prefix>changes; malformed messages are ignored, foreign ones delivered', async () => {
    assert.equal(a.channel, `${prefix}changes`);
    const seen: SiteChange[] = [];
    const off = b.subscribe((c) => seen.push(c));
    try {
      await admin.publish(a.channel, 'not json');
      await admin.publish(a.channel, JSON.stringify({ node: 'x', change: { kind: 'site' } }));
      await admin.publish(a.channel, JSON.stringify({ node: 'x', change: { kind: 'nope', slug: 's' } }));
      const foreign = delivered(b, { kind: 'site', slug: 's' });
      await admin.publish(
        a.channel,
        JSON.stringify({ node: 'x', change: { kind: 'site', slug: 's', extra: 1 } }),
      );
      await foreign;
      assert.deepEqual(seen, [{ kind: 'site', slug: 's' }]);
    } finally {
      off();
    }
  });

  test('unsubscribe stops delivery to that listener only', async () => {
    const first: SiteChange[] = [];
    const off = b.subscribe((c) => first.push(c));
    const one = delivered(b, { kind: 'site', slug: 'one' });
    a.publish({ kind: 'site', slug: 'one' });
    await one;
    off();
    const two = delivered(b, { kind: 'site', slug: 'two' });
    a.publish({ kind: 'site', slug: 'two' });
    await two;
    assert.deepEqual(first, [{ kind: 'site', slug: 'one' }]);

    const local: SiteChange[] = [];
    const offLocal = a.subscribe((c) => local.push(c));
    offLocal();
    a.publish({ kind: 'site', slug: 'three' });
    assert.deepEqual(local, []);
  });

  test('a throwing listener does not stop the others; publish rethrows after all ran', async () => {
    const seen: SiteChange[] = [];
    const offBad = a.subscribe(() => {
      throw new Error('boom');
    });
    const offGood = a.subscribe((c) => seen.push(c));
    const atB = delivered(b, { kind: 'site', slug: 'x' });
    try {
      assert.throws(() => a.publish({ kind: 'site', slug: 'x' }), /boom/);
      assert.deepEqual(seen, [{ kind: 'site', slug: 'x' }]);
      await atB; // the other node still hears it
    } finally {
      offBad();
      offGood();
    }
  });

  test('after the subscriber connection is killed, listeners get {kind:"all"} and delivery resumes', async () => {
    const clients = (await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string;
    const line = clients.split('\n').find((l) => l.includes(` name=slipway-changes-sub-${b.nodeId} `));
    assert.ok(line, 'the subscriber connection is named after the node');
    const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
    assert.ok(id);
    const resync = delivered(b, { kind: 'all' }, 5000);
    await admin.call('CLIENT', 'KILL', 'ID', id);
    await resync;
    const atB = delivered(b, { kind: 'site', slug: 'after-reconnect' });
    a.publish({ kind: 'site', slug: 'after-reconnect' });
    await atB;
  });

  test('close() unsubscribes and ends both connections; publish afterwards is a no-op', async () => {
    const c = await RedisChangeBus.create(TEST_REDIS_URL, { prefix });
    const seen: SiteChange[] = [];
    c.subscribe((x) => seen.push(x));
    const before = Number((await admin.pubsub('NUMSUB', c.channel))[1]);
    await c.close();
    await c.close(); // idempotent
    assert.equal(Number((await admin.pubsub('NUMSUB', c.channel))[1]), before - 1);
    const clients = (await admin.call('CLIENT', 'LIST')) as string;
    assert.ok(!clients.includes(c.nodeId), 'no connection of the closed bus remains');
    c.publish({ kind: 'site', slug: 'late' });
    assert.deepEqual(seen, []);
  });

  test('create() rejects when Redis is unreachable', async () => {
    await assert.rejects(RedisChangeBus.create('redis://127.0.0.1:1', { prefix }));
  });
});
