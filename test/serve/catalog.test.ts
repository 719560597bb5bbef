// SiteCatalog host cache: unknown hosts are remembered briefly, concurrent misses share one lookup, and
// change events drop exactly what they name.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { Stores } from '../../src/compose.js';
import type { HostRoute } from '../../src/core/hosts.js';
import { SiteCatalog, UNKNOWN_HOST_TTL_MS } from '../../src/serve/catalog.js';
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
});
