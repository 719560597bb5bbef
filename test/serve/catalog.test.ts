// SiteCatalog host cache: unknown hosts are remembered briefly, concurrent misses share one lookup, and
// change events drop exactly what they name.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { Stores } from '../../src/compose.js';
import type { HostRoute } from '../../src/core/hosts.js';
import { owned, SiteCatalog, UNKNOWN_HOST_TTL_MS } from '../../src/serve/catalog.js';
import { MovableClock } from '../../src/shared/clock.js';

function catalogWith(routes: Record<string, HostRoute>) {
  const clock = new MovableClock();
  const calls: string[] = [];
  const catalog = new SiteCatalog({
    // Host lookups never touch the database or the blob store.
    db: {} as Stores['db'],
    blobs: {} as Stores['blobs'],
    logger: pino({ level: 'silent' }),
    clock,
    cacheBytes: 1024 * 1024,
    async resolveHost(hostname) {
      calls.push(hostname);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return routes[hostname] ?? null;
    },
  });
  return { catalog, clock, calls };
}

const route = (slug: string): HostRoute => ({ mounts: [{ slug, basePath: '' }] });

describe('SiteCatalog hosts', () => {
  test('a known host is resolved once, then answered from memory', async () => {
    const { catalog, calls } = catalogWith({ 'a.localhost': route('a') });
    assert.equal(catalog.hostNow('a.localhost'), undefined);
    assert.deepEqual(await catalog.loadHost('a.localhost'), route('a'));
    assert.deepEqual(catalog.hostNow('a.localhost'), route('a'));
    assert.deepEqual(calls, ['a.localhost']);
  });

  test('concurrent misses for one host share a single lookup', async () => {
    const { catalog, calls } = catalogWith({ 'a.localhost': route('a') });
    const results = await Promise.all(Array.from({ length: 50 }, () => catalog.loadHost('a.localhost')));
    assert.equal(calls.length, 1);
    for (const r of results) assert.deepEqual(r, route('a'));
  });

  test('an unknown host is remembered for UNKNOWN_HOST_TTL_MS, then looked up again', async () => {
    const { catalog, clock, calls } = catalogWith({});
    assert.equal(await catalog.loadHost('x.localhost'), null);
    assert.equal(catalog.hostNow('x.localhost'), null);
    clock.advance(UNKNOWN_HOST_TTL_MS + 1);
    assert.equal(catalog.hostNow('x.localhost'), undefined);
    assert.deepEqual(calls, ['x.localhost']);
  });

  test('a flood of random unknown hosts stays within the host budget', async () => {
    const { catalog } = catalogWith({});
    for (let i = 0; i < 2000; i++) await catalog.loadHost(`random-${i}.localhost`);
    const stats = catalog.stats();
    assert.ok(stats.hosts <= (stats.limit / 32) * 2, `${stats.hosts} bytes of host entries`);
  });

  test('events: host drops that host; site drops unknown hosts and hosts serving the slug; all drops everything', async () => {
    const { catalog } = catalogWith({ 'a.localhost': route('a'), 'b.localhost': route('b') });
    await catalog.loadHost('a.localhost');
    await catalog.loadHost('b.localhost');
    await catalog.loadHost('gone.localhost');
    catalog.invalidate({ kind: 'host', host: 'a.localhost' });
    assert.equal(catalog.hostNow('a.localhost'), undefined);
    assert.deepEqual(catalog.hostNow('b.localhost'), route('b'));
    catalog.invalidate({ kind: 'site', slug: 'b' });
    assert.equal(catalog.hostNow('b.localhost'), undefined);
    assert.equal(catalog.hostNow('gone.localhost'), undefined);
    await catalog.loadHost('a.localhost');
    catalog.invalidate({ kind: 'all' });
    assert.equal(catalog.hostNow('a.localhost'), undefined);
  });

  test('a lookup overtaken by an event is answered but not cached', async () => {
    const { catalog, calls } = catalogWith({ 'a.localhost': route('a') });
    const pending = catalog.loadHost('a.localhost');
    catalog.invalidate({ kind: 'host', host: 'a.localhost' });
    assert.deepEqual(await pending, route('a'));
    assert.equal(catalog.hostNow('a.localhost'), undefined);
    await catalog.loadHost('a.localhost');
    assert.equal(calls.length, 2);
  });

  test('a site event drops every cached host that mounts the slug (its own and linked ones), no other', async () => {
    const linked: HostRoute = {
      mounts: [
        { slug: 'b', basePath: '/blog' },
        { slug: 'c', basePath: '' },
      ],
    };
    const { catalog } = catalogWith({
      'a.localhost': route('a'),
      'b.localhost': route('b'),
      'me.localhost': linked,
    });
    for (const host of ['a.localhost', 'b.localhost', 'me.localhost']) await catalog.loadHost(host);
    catalog.invalidate({ kind: 'site', slug: 'b' });
    assert.equal(catalog.hostNow('b.localhost'), undefined);
    assert.equal(catalog.hostNow('me.localhost'), undefined);
    assert.deepEqual(catalog.hostNow('a.localhost'), route('a'));
    // The handle host is cached again, then dropped by its other site's event.
    await catalog.loadHost('me.localhost');
    catalog.invalidate({ kind: 'site', slug: 'c' });
    assert.equal(catalog.hostNow('me.localhost'), undefined);
  });

  test('known hosts use the budget that file bytes leave idle (one shared budget, not fixed shares)', async () => {
    const routes: Record<string, HostRoute> = {};
    // ~350 bytes charged each: 2000 hosts take ~0.7 of the 1 MB budget, far beyond a fixed 1/32 share.
    for (let i = 0; i < 2000; i++) routes[`s${i}.localhost`] = route(`s${i}`);
    const { catalog, calls } = catalogWith(routes);
    await Promise.all(Object.keys(routes).map((host) => catalog.loadHost(host)));
    for (const host of Object.keys(routes)) assert.deepEqual(catalog.hostNow(host), routes[host]);
    assert.equal(calls.length, 2000);
    const stats = catalog.stats();
    assert.ok(stats.total <= stats.limit, `${stats.total} bytes held`);
  });

  test('the slug -> hosts index follows the host cache: evicted hosts leave it, so it stays bounded', async () => {
    const routes: Record<string, HostRoute> = {};
    for (let i = 0; i < 5000; i++) routes[`s${i}.localhost`] = route(`s${i}`);
    const { catalog } = catalogWith(routes);
    await Promise.all(Object.keys(routes).map((host) => catalog.loadHost(host)));
    const stats = catalog.stats();
    // Each cached host is charged at least 320 bytes and mounts one slug: the index holds no more slugs
    // than there are cached hosts, which the 1 MB budget keeps below the 5000 loaded.
    assert.ok(stats.indexedSlugs * 320 <= stats.hosts, `${stats.indexedSlugs} slugs, ${stats.hosts} bytes`);
    assert.ok(stats.indexedSlugs > 0 && stats.indexedSlugs < 5000);
    catalog.invalidate({ kind: 'all' });
    assert.equal(catalog.stats().indexedSlugs, 0);
    assert.equal(catalog.stats().hosts, 0);
    // An evicted host's slug event finds nothing to drop; a host loaded again is cached again.
    catalog.invalidate({ kind: 'site', slug: 's0' });
    await catalog.loadHost('s4999.localhost');
    assert.deepEqual(catalog.hostNow('s4999.localhost'), route('s4999'));
  });
});

describe('SiteCatalog bodies', () => {
  test('a cached body owns its memory: a slice of the shared Buffer pool is copied, a whole buffer kept', () => {
    // Buffer.from of a short string is a slice of Node's 8 KB pool (as readFileSync and Buffer.concat give).
    const pooled = Buffer.from('a small page');
    assert.ok(pooled.buffer.byteLength > pooled.length, 'the test needs a pooled slice');
    const copy = owned(pooled);
    assert.deepEqual(copy, pooled);
    assert.equal(copy.buffer.byteLength, copy.length);
    const whole = Buffer.allocUnsafeSlow(16);
    assert.equal(owned(whole), whole);
  });

  test('loadBody caches the owned copy of what the blob store read', async () => {
    const catalog = new SiteCatalog({
      db: {} as Stores['db'],
      blobs: { read: async () => Buffer.from('<p>hello</p>') } as unknown as Stores['blobs'],
      logger: pino({ level: 'silent' }),
      clock: new MovableClock(),
      cacheBytes: 1024 * 1024,
      resolveHost: async () => null,
    });
    const entry = { hash: 'h1', size: 12 } as Parameters<SiteCatalog['loadBody']>[0];
    const rep = { encoding: null, bodyKey: 'h1' } as unknown as Parameters<SiteCatalog['loadBody']>[1];
    const bytes = await catalog.loadBody(entry, rep);
    assert.equal(bytes.toString(), '<p>hello</p>');
    const cached = catalog.bodyNow(rep)!;
    assert.equal(cached.buffer.byteLength, 12);
  });
});

describe('SiteCatalog: what ends a memoized response (unchangedSince)', () => {
  test('an event for one site or host ends answers made from it, and no others', () => {
    const { catalog } = catalogWith({});
    const made = catalog.generation;
    const holds = (slug: string, host: string, at = made) => catalog.unchangedSince(slug, host, at);
    catalog.invalidate({ kind: 'site', slug: 'a' });
    assert.equal(holds('a', 'a.localhost'), false, 'its own site changed');
    assert.equal(holds('a', 'alice.localhost'), false, 'the site on another host (a handle) too');
    assert.equal(holds('b', 'b.localhost'), true, 'another site is untouched');
    // Made after the event: it saw the change.
    assert.equal(holds('a', 'a.localhost', catalog.generation), true);
    catalog.invalidate({ kind: 'host', host: 'b--preview.localhost' });
    assert.equal(holds('b', 'b--preview.localhost'), false, 'the host changed (an alias moved)');
    assert.equal(holds('b', 'b.localhost'), true, "the site's other hosts are untouched");
  });

  test('a plan change, a drop of everything, or an ended route ends every answer made before it', async () => {
    for (const change of [{ kind: 'account', accountId: 'acc' }, { kind: 'all' }] as const) {
      const { catalog } = catalogWith({});
      const made = catalog.generation;
      catalog.invalidate(change);
      assert.equal(catalog.unchangedSince('b', 'b.localhost', made), false, change.kind);
      assert.equal(catalog.unchangedSince('b', 'b.localhost', catalog.generation), true, change.kind);
    }
    const { catalog, clock } = catalogWith({
      'alice.localhost': { mounts: [{ slug: 'a', basePath: '' }], until: 1_000 },
    });
    clock.set(0);
    await catalog.loadHost('alice.localhost');
    const made = catalog.generation;
    clock.set(1_000);
    assert.equal(catalog.hostNow('alice.localhost'), undefined, 'the plan ran out: resolved again');
    assert.equal(catalog.unchangedSince('a', 'alice.localhost', made), false);
  });

  test('past 10,000 remembered events, everything made before ends (memory stays bounded)', () => {
    const { catalog } = catalogWith({});
    const made = catalog.generation;
    for (let i = 0; i < 10_000; i++) catalog.invalidate({ kind: 'site', slug: `s${i}` });
    assert.equal(catalog.unchangedSince('b', 'b.localhost', made), true, '10,000 events for other sites');
    catalog.invalidate({ kind: 'site', slug: 's-last' });
    assert.equal(catalog.unchangedSince('b', 'b.localhost', made), false, 'one more: the floor rose');
    // Answers made after the overflow are judged by the events after it.
    const after = catalog.generation;
    assert.equal(catalog.unchangedSince('s-last', 'b.localhost', after), true);
    catalog.invalidate({ kind: 'site', slug: 's1' });
    assert.equal(catalog.unchangedSince('s1', 'b.localhost', after), false);
    assert.equal(catalog.unchangedSince('s2', 'b.localhost', after), true);
  });
});
