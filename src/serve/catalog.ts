// The site server's memory: host -> sites, slug -> record + manifest, hash -> bytes (and br/gzip variants),
// in bounded caches that change events invalidate. Loads are coalesced: concurrent misses share one.

import type { Logger } from 'pino';
import type { HostRoute, SiteMount } from '../core/hosts.js';
import type { Clock } from '../shared/clock.js';
import type { SiteChange } from '../shared/events.js';
import type { Encoding } from '../shared/rules/encoding.js';
import { ownedString } from '../shared/strings.js';
import type { BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { compressBody } from './compress.js';
import { ByteLru, type LruPartition, SharedByteLru } from './lru.js';
import {
  type FileEntry,
  loadVersionManifest,
  type Representation,
  SMALL_BLOB_MAX_BYTES,
  type VersionManifest,
  variantRepresentation,
} from './manifest.js';
import { loadSiteRecord, type SiteRecord } from './site-record.js';

export interface SiteState {
  /** null: no site has this slug. */
  readonly record: SiteRecord | null;
  /**
   * The live version's manifest (for a preview or alias host: the manifest of its version); null when the
   * site is deleted, has no finalized version, or is unknown.
   */
  readonly manifest: VersionManifest | null;
  /** Set by a change event: the next request reloads (reusing the manifest when the version is the same). */
  stale: boolean;
  /** Password-gate cookies already verified for this state: cookie value -> session expiry (epoch ms). */
  readonly sessions: Map<string, number>;
}

export interface CatalogOptions {
  db: Db;
  blobs: BlobStore;
  logger: Logger;
  clock: Clock;
  /** Total memory budget (config.serveCacheBytes). */
  cacheBytes: number;
  resolveHost(hostname: string): Promise<HostRoute | null>;
}

/** Unknown hosts are remembered this long (or until an event), so a flood of random names costs few queries. */
export const UNKNOWN_HOST_TTL_MS = 10_000;
/**
 * Share of the budget for unknown hosts, apart from the rest: a flood of random names cannot flush what
 * real sites use.
 */
const UNKNOWN_HOSTS_BUDGET_SHARE = 1 / 32;
/** One body may take at most this share of the shared budget (so one file cannot flush all others). */
const BODY_ITEM_SHARE = 3 / 16;
/** Estimated bytes of a host entry beyond its name. */
const HOST_ENTRY_BYTES = 160;
/** Estimated bytes of a site state beyond its manifest (record strings, maps). */
const SITE_STATE_BYTES = 2048;
/**
 * Sites and hosts whose last change event is remembered for memoized responses; past it, every memoized
 * response ends at once (as any event ended them all before issue 23).
 */
const MAX_TRACKED_CHANGES = 10_000;
/** Verified password sessions remembered per site (cleared when full). */
export const MAX_SESSIONS_PER_SITE = 64;
/** A variant must save at least this share of the bytes to be worth its memory and the Vary dance. */
const MIN_COMPRESSION_SAVING = 0.05;

/** Separates slug and version id in a preview state's key (no slug or version id contains a space). */
const PREVIEW_KEY_SEPARATOR = ' ';
const stateKey = (slug: string, versionId: string): string => slug + PREVIEW_KEY_SEPARATOR + versionId;

interface Load<T> {
  readonly promise: Promise<T>;
  /** An event arrived while loading: the result is handed to the waiting requests but not cached. */
  superseded: boolean;
}

export class SiteCatalog {
  private readonly shared: SharedByteLru;
  private readonly hosts: LruPartition<HostRoute>;
  /**
   * Slug -> the cached hosts whose route mounts it, kept in step with `hosts` (its onDrop): a site's change
   * event drops exactly those, without walking every cached host (issue 23: with tens of thousands of
   * hosts cached, each publish walked them all).
   */
  private readonly hostsBySlug = new Map<string, Set<string>>();
  /** Hostname -> epoch ms until which it is known to be unknown. */
  private readonly unknownHosts: ByteLru<string, number>;
  /** Site states by slug (the live version) or by stateKey(slug, versionId) (a preview or alias host). */
  private readonly sites: LruPartition<SiteState>;
  /**
   * Slug -> the cached preview states of the site, kept in step with `sites` (its onDrop): a site's change
   * event (delete, password, expiry) marks them stale with its live state.
   */
  private readonly previewKeysBySlug = new Map<string, Set<string>>();
  /** Content-addressed bytes never change, so events never touch this cache. */
  private readonly bodies: LruPartition<Buffer>;
  private readonly hostLoads = new Map<string, Load<HostRoute | null>>();
  private readonly siteLoads = new Map<string, Load<SiteState>>();
  private readonly bodyLoads = new Map<string, Promise<Buffer>>();
  private readonly variantLoads = new Map<string, Promise<Buffer | null>>();

  constructor(private readonly options: CatalogOptions) {
    const total = options.cacheBytes;
    const unknownBytes = Math.floor(total * UNKNOWN_HOSTS_BUDGET_SHARE);
    // Known hosts, site states and file bytes share the rest in one second-chance order (issue 23: with
    // fixed shares, 100,000 small sites missed on their records while most of the bytes' share sat idle).
    const shared = new SharedByteLru(total - unknownBytes);
    this.shared = shared;
    this.unknownHosts = new ByteLru(unknownBytes);
    this.hosts = shared.partition<HostRoute>('h', {
      maxItemBytes: unknownBytes,
      onDrop: (hostname, route) => {
        for (const { slug } of route.mounts) {
          const hosts = this.hostsBySlug.get(slug);
          hosts?.delete(hostname);
          if (hosts?.size === 0) this.hostsBySlug.delete(slug);
        }
      },
    });
    this.sites = shared.partition<SiteState>('s', {
      onDrop: (key) => {
        const at = key.indexOf(PREVIEW_KEY_SEPARATOR);
        if (at < 0) return;
        const slug = key.slice(0, at);
        const keys = this.previewKeysBySlug.get(slug);
        keys?.delete(key);
        if (keys?.size === 0) this.previewKeysBySlug.delete(slug);
      },
    });
    this.bodies = shared.partition<Buffer>('b', {
      maxItemBytes: Math.floor(shared.maxBytes * BODY_ITEM_SHARE),
    });
  }

  /** Largest file kept in memory; larger files are streamed. */
  get maxMemoryBodyBytes(): number {
    return Math.min(SMALL_BLOB_MAX_BYTES, this.bodies.maxItemBytes);
  }

  get blobs(): BlobStore {
    return this.options.blobs;
  }

  /** Bytes held by each cache (exported as a metric; tests check the bound). */
  stats(): {
    hosts: number;
    sites: number;
    bodies: number;
    /** Memoized responses (the fast path's). */
    responses: number;
    total: number;
    limit: number;
    /** Slugs in the host index (at most one per mount of a cached host). */
    indexedSlugs: number;
  } {
    const hosts = this.hosts.bytes + this.unknownHosts.bytes;
    const sites = this.sites.bytes;
    const bodies = this.bodies.bytes;
    const responses = this.responseBytes();
    return {
      hosts,
      sites,
      bodies,
      responses,
      total: hosts + sites + bodies + responses,
      limit: this.options.cacheBytes,
      indexedSlugs: this.hostsBySlug.size,
    };
  }

  // ---- hosts ------------------------------------------------------------------------------------

  /** The cached route of a host: the route, null (known unknown), or undefined (not cached: load it). */
  hostNow(hostname: string): HostRoute | null | undefined {
    const route = this.hosts.get(hostname);
    if (route !== undefined) {
      if (route.until === undefined || route.until > this.options.clock.now()) return route;
      // A plan that ran out: resolve again (and end response memos made under the old route).
      this.hosts.delete(hostname);
      this.generation++;
      this.raiseFloor();
      return undefined;
    }
    const unknownUntil = this.unknownHosts.get(hostname);
    if (unknownUntil !== undefined && unknownUntil > this.options.clock.now()) return null;
    return undefined;
  }

  loadHost(requested: string): Promise<HostRoute | null> {
    const running = this.hostLoads.get(requested);
    if (running !== undefined) return running.promise;
    // The name as the request carried it is a slice of the request's whole head, and what is resolved from
    // it (a label's slug, the cache keys) would be slices too: everything cached works from a copy.
    const hostname = ownedString(requested);
    const load: Load<HostRoute | null> = {
      superseded: false,
      promise: this.options.resolveHost(hostname).then((route) => {
        if (!load.superseded) {
          const bytes = HOST_ENTRY_BYTES + hostname.length * 2;
          if (route === null) {
            this.unknownHosts.set(hostname, this.options.clock.now() + UNKNOWN_HOST_TTL_MS, bytes);
          } else {
            this.unknownHosts.delete(hostname);
            if (this.hosts.set(hostname, route, bytes + route.mounts.length * HOST_ENTRY_BYTES)) {
              for (const { slug } of route.mounts) {
                const hosts = this.hostsBySlug.get(slug);
                if (hosts === undefined) this.hostsBySlug.set(slug, new Set([hostname]));
                else hosts.add(hostname);
              }
            }
          }
        }
        return route;
      }),
    };
    this.track(this.hostLoads, hostname, load);
    return load.promise;
  }

  // ---- sites ------------------------------------------------------------------------------------

  /**
   * The cached, current state of a site, or undefined (not cached or invalidated: load it). With
   * `versionId` (a preview or alias host's mount), the state serving that version of the site.
   */
  siteNow(slug: string, versionId?: string): SiteState | undefined {
    const state = this.sites.get(versionId === undefined ? slug : stateKey(slug, versionId));
    return state === undefined || state.stale ? undefined : state;
  }

  loadSite(slug: string, versionId?: string): Promise<SiteState> {
    const key = versionId === undefined ? slug : stateKey(slug, versionId);
    const running = this.siteLoads.get(key);
    if (running !== undefined) return running.promise;
    const load: Load<SiteState> = {
      superseded: false,
      promise: this.readSite(slug, key, versionId).then((state) => {
        // No site has this slug: nothing to keep (a label host asks before resolving a handle, and a
        // flood of random names must not take the budget real sites use).
        if (!load.superseded && state.record !== null) {
          const bytes = SITE_STATE_BYTES + (state.manifest?.estimatedBytes ?? 0);
          if (this.sites.set(key, state, bytes) && versionId !== undefined) {
            const keys = this.previewKeysBySlug.get(slug);
            if (keys === undefined) this.previewKeysBySlug.set(slug, new Set([key]));
            else keys.add(key);
          }
        }
        return state;
      }),
    };
    this.track(this.siteLoads, key, load);
    return load.promise;
  }

  private async readSite(slug: string, key: string, versionId: string | undefined): Promise<SiteState> {
    const { db, blobs, logger } = this.options;
    const record = await loadSiteRecord(db, slug);
    let manifest: VersionManifest | null = null;
    const served = versionId ?? record?.versionId ?? null;
    if (record !== null && !record.deleted && served !== null) {
      // A metadata change (title, password, expiry) keeps the version: reuse its manifest, whose
      // entries carry computed variants. A preview of the live version shares the live manifest.
      const previous = this.sites.get(key)?.manifest;
      const live = versionId === undefined ? undefined : this.sites.get(slug)?.manifest;
      manifest =
        previous?.versionId === served
          ? previous
          : live?.versionId === served
            ? live
            : await loadVersionManifest({ db, blobs, logger }, served);
    }
    return { record, manifest, stale: false, sessions: new Map() };
  }

  // ---- bodies -----------------------------------------------------------------------------------

  /** The bytes of a representation if they are in memory. */
  bodyNow(rep: Representation): Buffer | undefined {
    return this.bodies.get(rep.bodyKey);
  }

  /** The bytes of a representation (identity files up to maxMemoryBodyBytes, or a variant), cached. */
  loadBody(entry: FileEntry, rep: Representation): Promise<Buffer> {
    if (rep.encoding === null) return this.identityBytes(entry);
    return this.variantBytes(entry, rep.encoding).then((bytes) => {
      // The variant was computed before with this length; compression is deterministic.
      if (bytes === null) throw new Error(`variant ${rep.bodyKey} can no longer be produced`);
      return bytes;
    });
  }

  /**
   * Makes `entry[encoding]` known: the variant's representation, or null when compression does not pay
   * (or the result could not be kept in memory). Concurrent calls share one compression.
   */
  async prepareVariant(entry: FileEntry, encoding: Encoding): Promise<void> {
    const bytes = await this.variantBytes(entry, encoding);
    entry[encoding] = bytes === null ? null : variantRepresentation(entry, encoding, bytes.length);
  }

  private identityBytes(entry: FileEntry): Promise<Buffer> {
    const cached = this.bodies.get(entry.hash);
    if (cached !== undefined) return Promise.resolve(cached);
    const running = this.bodyLoads.get(entry.hash);
    if (running !== undefined) return running;
    const promise = this.options.blobs.read(entry.hash, entry.size).then((read) => {
      if (read.length > this.maxMemoryBodyBytes) return read;
      const bytes = owned(read);
      this.bodies.set(entry.hash, bytes, bytes.length);
      return bytes;
    });
    this.bodyLoads.set(entry.hash, promise);
    const done = () => this.bodyLoads.delete(entry.hash);
    promise.then(done, done);
    return promise;
  }

  private variantBytes(entry: FileEntry, encoding: Encoding): Promise<Buffer | null> {
    const key = `${entry.hash}:${encoding}`;
    const cached = this.bodies.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    const running = this.variantLoads.get(key);
    if (running !== undefined) return running;
    const promise = this.identityBytes(entry)
      .then((identity) => compressBody(identity, encoding))
      .then((output) => {
        const compressed = owned(output);
        const pays = compressed.length <= entry.size * (1 - MIN_COMPRESSION_SAVING);
        if (!pays || !this.bodies.set(key, compressed, compressed.length)) return null;
        return compressed;
      });
    this.variantLoads.set(key, promise);
    const done = () => this.variantLoads.delete(key);
    promise.then(done, done);
    return promise;
  }

  // ---- responses made from the catalog ----------------------------------------------------------

  /**
   * The budget's partition for finished responses (the fast path's memo, http1/memo.ts). Its entries start
   * with a second chance over the hosts, sites and bytes that made them: a site whose pages are answered
   * from the memo keeps its ~1.9 KB response (a 1 KB page) while its ~5 KB of route, record, manifest and
   * body go first (issue 23: 100,000 one-page sites fit in 256 MB as responses, not as what made them).
   */
  responses<V>(maxItemBytes: number, onDrop?: (key: string, value: V) => void): LruPartition<V> {
    const partition = this.shared.partition<V>('r', {
      maxItemBytes,
      startsReferenced: true,
      ...(onDrop !== undefined ? { onDrop } : {}),
    });
    this.responseBytes = () => partition.bytes;
    return partition;
  }

  private responseBytes: () => number = () => 0;

  /**
   * A response made from `hostname`'s route, `mount`'s site state and the bytes under `bodyKey` was
   * memoized: the memo answers that request from now on, so this use no longer counts for keeping them (a
   * site whose one page is memoized keeps its ~1.9 KB response; its ~5 KB of route, record, manifest and
   * bytes stay only while other requests read them).
   */
  settle(hostname: string, mount: SiteMount, bodyKey: string): void {
    this.hosts.settle(hostname);
    this.sites.settle(mount.versionId === undefined ? mount.slug : stateKey(mount.slug, mount.versionId));
    this.bodies.settle(bodyKey);
  }

  // ---- invalidation -----------------------------------------------------------------------------

  /**
   * Counts change events. Something derived from the catalog (a memoized response) records the count it
   * was made at, and asks unchangedSince() once the count has moved.
   */
  generation = 0;
  /** The count at the last event that may change any host's answers (all, an account's plan, a route's end). */
  private floor = 0;
  /** Slug -> the count at its last change event; host -> the count at its last host event. */
  private readonly siteChanges = new Map<string, number>();
  private readonly hostChanges = new Map<string, number>();

  /** Whether no event that could change what `slug` answers on `host` came after `generation`. */
  unchangedSince(slug: string, host: string, generation: number): boolean {
    return (
      generation >= this.floor &&
      (this.siteChanges.get(slug) ?? 0) <= generation &&
      (this.hostChanges.get(host) ?? 0) <= generation
    );
  }

  /** Records an event for one site or host; past MAX_TRACKED_CHANGES the floor rises instead (bounded memory). */
  private changed(changes: Map<string, number>, key: string): void {
    if (changes.size >= MAX_TRACKED_CHANGES) {
      this.raiseFloor();
      return;
    }
    changes.set(key, this.generation);
  }

  private raiseFloor(): void {
    this.floor = this.generation;
    this.siteChanges.clear();
    this.hostChanges.clear();
  }

  /** Applies a change event (subscribed to ctx.changes by the site server). */
  invalidate(change: SiteChange): void {
    this.generation++;
    if (change.kind === 'all' || change.kind === 'account') this.raiseFloor();
    else if (change.kind === 'host') this.changed(this.hostChanges, change.host);
    else this.changed(this.siteChanges, change.slug);
    if (change.kind === 'all') {
      this.hosts.clear();
      this.unknownHosts.clear();
      this.sites.deleteWhere((_slug, state) => {
        state.stale = true;
        return false;
      });
      supersedeAll(this.hostLoads);
      supersedeAll(this.siteLoads);
      return;
    }
    if (change.kind === 'host') {
      this.hosts.delete(change.host);
      this.unknownHosts.delete(change.host);
      supersede(this.hostLoads, change.host);
      return;
    }
    if (change.kind === 'account') {
      // A plan change starts or stops the account's handle and extra domains: host mappings are
      // resolved again (rare, and cheap); site states are unaffected.
      this.hosts.clear();
      this.unknownHosts.clear();
      supersedeAll(this.hostLoads);
      return;
    }
    const { slug } = change;
    const state = this.sites.get(slug);
    if (state !== undefined) state.stale = true;
    supersede(this.siteLoads, slug);
    for (const key of this.previewKeysBySlug.get(slug) ?? []) {
      const preview = this.sites.get(key);
      if (preview !== undefined) preview.stale = true;
      supersede(this.siteLoads, key);
    }
    // The site may have just been created (its host was cached as unknown) or deleted (its links are
    // gone): forget every host that is unknown or serves this slug; they are cheap to resolve again.
    this.unknownHosts.clear();
    for (const host of [...(this.hostsBySlug.get(slug) ?? [])]) this.hosts.delete(host);
    supersedeAll(this.hostLoads);
  }

  private track<T>(loads: Map<string, Load<T>>, key: string, load: Load<T>): void {
    loads.set(key, load);
    const done = () => {
      if (loads.get(key) === load) loads.delete(key);
    };
    load.promise.then(done, done);
  }
}

/**
 * `bytes` in memory of its own: a small Buffer is often a slice of Node's shared 8 KB pool
 * (Buffer.allocUnsafe, readFileSync, Buffer.concat), and caching the slice would keep the whole slab alive
 * for as long as the entry lives: up to 8x the bytes charged (issue 23: RSS past the budget with 100,000
 * sites of 1 KB pages).
 */
export function owned(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

function supersede<T>(loads: Map<string, Load<T>>, key: string): void {
  const load = loads.get(key);
  if (load === undefined) return;
  load.superseded = true;
  loads.delete(key);
}

function supersedeAll<T>(loads: Map<string, Load<T>>): void {
  for (const load of loads.values()) load.superseded = true;
  loads.clear();
}
