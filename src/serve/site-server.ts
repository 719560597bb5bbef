// The site server: answers every request whose Host is not the API host (sites, their preview and alias
// hosts, handles, custom domains). This is the hot path; it runs in front of Fastify, reached through the fast path
// (http1/connection.ts) for plain GET/HEAD or through node:http for the rest. Once warm, a request is
// Map lookups (host -> site -> file -> bytes) and one send with a precomputed header object: no database
// query, no file-system call, no framework.

import { IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { TrustProxy } from '../config.js';
import { type AnalyticsCounter, ReuseTally } from '../core/analytics.js';
import { clientAddress, limitKey } from '../core/client-address.js';
import {
  type HostRoute,
  hostnameOf,
  mountFor,
  parseHost,
  resolveHost,
  type SiteMount,
  siteLabelRoute,
} from '../core/hosts.js';
import type { PlanOverrides } from '../core/plans.js';
import type { ChangeBus } from '../shared/events.js';
import { LogThrottle } from '../shared/log-throttle.js';
import { ifRangeMatches, isNotModified } from '../shared/rules/conditional.js';
import { pickEncoding } from '../shared/rules/encoding.js';
import { headersFor } from '../shared/rules/headers.js';
import { decodeRequestPath, resolveCandidate } from '../shared/rules/paths.js';
import { parseRange } from '../shared/rules/range.js';
import { ownedString } from '../shared/strings.js';
import type { BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { isBackendUnavailable } from '../store/unavailable.js';
import { SiteCatalog, type SiteState } from './catalog.js';
import type { Reuse, SiteRequestHead, SiteResponse } from './exchange.js';
import type { LruPartition } from './lru.js';
import {
  type FileEntry,
  mergeHeaders,
  type Representation,
  redirectFor,
  type VersionManifest,
} from './manifest.js';
import {
  BAD_REQUEST,
  type BuiltinPage,
  htmlHeaders,
  METHOD_NOT_ALLOWED,
  PLAN_PAUSED,
  SERVER_ERROR,
  type SitePages,
  SUSPENDED,
  sitePages,
  TAKEN_DOWN,
  UNAVAILABLE,
} from './pages.js';
import { type GateResponder, PasswordGate, type PasswordGateDeps } from './password-gate.js';
import { PreviewResponse } from './preview.js';
import { isWorkerScriptRequest, WorkerScriptResponse } from './service-worker.js';
import { newResponseCounts, registerSiteMetrics } from './site-metrics.js';
import { type PageResponder, serveGeneratedPage } from './viewer.js';

export interface SiteServer {
  /**
   * Answers one request. `hostname` (lowercase, no port, as app.ts's hostnameOf computes it) may be passed
   * by a caller that already has it, saving the work of normalising the Host header twice.
   */
  handle(req: SiteRequestHead, res: SiteResponse, hostname?: string): void;
  /** Change events seen so far (a memoized response records the count it was made at). */
  generation(): number;
  /**
   * Whether no change event that could alter a response of `slug` on `host` came after `generation`: a
   * response marked reusable (SiteResponse.send's `reuse`) made then may still be answered.
   */
  unchangedSince(slug: string, host: string, generation: number): boolean;
  /**
   * A share of the serving memory (SERVE_CACHE_MB) for the responses a transport memoizes, in one
   * eviction order with the hosts, sites and bytes they were made from.
   */
  memoStore<V>(maxItemBytes: number, onDrop?: (key: string, value: V) => void): LruPartition<V>;
  /** Counts a response a transport answered from its memo (site responses by status, in /metrics). */
  countResponse(status: number): void;
  /** Records a memoized response answered again for visitor analytics (its `tally`, the request's head). */
  countReuse(tally: ReuseTally, req: SiteRequestHead, now: number): void;
  /** Stops listening to change events. */
  close(): void;
}

/** Large compressible files are compressed in the background; until then they are sent uncompressed. */
const COMPRESS_INLINE_MAX_BYTES = 1024 * 1024;
/** Generated pages (viewer, listing) revalidate like HTML files. */
const PAGE_CACHE_CONTROL = 'public, max-age=0, must-revalidate';
/** The same for protected sites: browsers may keep them, shared caches may not (RFC 9111 §5.2.2.7). */
const PRIVATE_PAGE_CACHE_CONTROL = 'private, max-age=0, must-revalidate';
/** During an outage of the database or object store, one log line per this interval. */
const OUTAGE_LOG_INTERVAL_MS = 10_000;

/** Where a request landed inside a site (the pieces every later step needs). */
interface SiteRequest {
  readonly req: SiteRequestHead;
  readonly res: SiteResponse;
  readonly head: boolean;
  readonly state: SiteState;
  readonly manifest: VersionManifest;
  readonly mount: SiteMount;
  /** The request's hostname (lowercase, no port): the site's own, a preview or alias host, a handle or domain. */
  readonly hostname: string;
  /** Path below the mount, still percent-encoded, without query. */
  readonly sitePath: string;
  /** `?...` of the request, or ''. */
  readonly query: string;
  /** Password-protected: responses are private to the browser (RFC 9111 §5.2.2.7). */
  readonly protected: boolean;
}

/** What the site server uses, and nothing more (built once by src/compose.ts); the gate's part included. */
export interface SiteServerDeps extends PasswordGateDeps {
  db: Db;
  blobs: BlobStore;
  logger: Logger;
  /** Change events (finalize, delete, password, plan, ...) that invalidate the catalog. */
  changes: ChangeBus;
  /** Visitor analytics' counters (core/analytics.ts); absent = nothing is counted on this node. */
  analytics?: AnalyticsCounter;
  config: PasswordGateDeps['config'] & {
    trustProxy: TrustProxy;
    siteHost: string;
    siteDomain: string;
    planOverrides: PlanOverrides;
  };
}

/** `cacheBytes`: the serving memory bound (SERVE_CACHE_MB, or a worker's share of it), memo included. */
export function createSiteServer(
  deps: SiteServerDeps,
  /** The Prometheus registry the site server's counters join (the app's /metrics). */
  registry: Registry,
  cacheBytes: number,
): SiteServer {
  const catalog = new SiteCatalog({
    db: deps.db,
    blobs: deps.blobs,
    logger: deps.logger,
    clock: deps.clock,
    cacheBytes,
    resolveHost: async (hostname) => {
      // A site's own host: the site's record, which the request loads next anyway, tells whether it is
      // live; one lookup fewer per miss than resolving the host apart (issue 23). Other labels (handles),
      // previews and domains resolve as core/hosts.ts says.
      const name = parseHost(hostname, deps.config.siteHost);
      if (name?.kind === 'label') {
        const { record } = await catalog.loadSite(name.label);
        const site = record === null ? undefined : record.deleted ? 'deleted' : 'live';
        const route = siteLabelRoute(site, name.label);
        if (route !== undefined) return route;
      }
      return resolveHost(deps, hostname);
    },
  });
  const unsubscribe = deps.changes.subscribe((change) => catalog.invalidate(change));
  const server = new SiteRequestHandler(deps, catalog);
  registerSiteMetrics(registry, catalog, server.responses);
  return {
    handle: (req, res, hostname) => server.handle(req, res, hostname),
    generation: () => catalog.generation,
    unchangedSince: (slug, host, generation) => catalog.unchangedSince(slug, host, generation),
    memoStore: (maxItemBytes, onDrop) => catalog.responses(maxItemBytes, onDrop),
    countResponse: (status) => {
      server.responses[status]! += 1;
    },
    countReuse: (tally, req, now) => server.countReuse(tally, req, now),
    close: unsubscribe,
  };
}

/** The request flow: host -> mount -> site -> gate -> route -> file, page or error. */
class SiteRequestHandler implements GateResponder, PageResponder<SiteRequest> {
  /** Responses by status code, exported by registerSiteMetrics (site-metrics.ts). */
  readonly responses = newResponseCounts();
  private readonly gate: PasswordGate;
  /** 404/410 pages with the service's "Report abuse" link, built once. */
  private readonly pages: SitePages;
  private readonly privateReps = new WeakMap<Representation, Representation>();
  private readonly privateHeaders = new WeakMap<OutgoingHttpHeaders, OutgoingHttpHeaders>();
  private readonly outageLog = new LogThrottle(OUTAGE_LOG_INTERVAL_MS);
  /**
   * The last page view's peer address and X-Forwarded-For field (read only when TRUST_PROXY can make it
   * count), and the client address they gave: page views come in runs from one peer, so the address is
   * worked out once per run instead of once per page view.
   */
  private lastPeer: string | undefined = undefined;
  private lastForwardedFor: string | string[] | undefined = undefined;
  private lastVisitor = '';
  private readonly readsForwardedFor: boolean;

  constructor(
    private readonly deps: SiteServerDeps,
    private readonly catalog: SiteCatalog,
  ) {
    this.gate = new PasswordGate(deps, this);
    this.pages = sitePages(deps.config.baseUrl);
    const trust = deps.config.trustProxy;
    this.readsForwardedFor = !('hops' in trust && trust.hops === 0);
  }

  handle(req: SiteRequestHead, response: SiteResponse, knownHostname: string | undefined): void {
    const res = isWorkerScriptRequest(req)
      ? new WorkerScriptResponse(response, req.method === 'HEAD')
      : response;
    try {
      const method = req.method;
      if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
        this.sendPage(req, res, METHOD_NOT_ALLOWED);
        return;
      }
      const hostname = knownHostname ?? hostnameOf(req.headers.host);
      const route = this.catalog.hostNow(hostname);
      if (route === undefined) {
        this.after(req, res, this.catalog.loadHost(hostname), (loaded) =>
          this.serveHost(req, res, loaded, hostname),
        );
        return;
      }
      this.serveHost(req, res, route, hostname);
    } catch (err) {
      this.fail(req, res, err);
    }
  }

  private serveHost(
    req: SiteRequestHead,
    response: SiteResponse,
    route: HostRoute | null,
    hostname: string,
  ): void {
    const res = route?.preview === true ? new PreviewResponse(response) : response;
    if (route === null) {
      this.sendPage(req, res, this.pages.notFound);
      return;
    }
    if (route.page !== undefined) {
      this.sendPage(req, res, route.page === 'paused' ? PLAN_PAUSED : this.pages.nothingLinked);
      return;
    }
    let url = req.url ?? '/';
    if (url.charCodeAt(0) !== 0x2f) {
      // RFC 9112 §3.2.2: absolute-form targets (sent to proxies) carry the path after the authority.
      const parsed = URL.canParse(url) ? new URL(url) : null;
      if (parsed === null) {
        this.sendPage(req, res, BAD_REQUEST);
        return;
      }
      url = parsed.pathname + parsed.search;
    }
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q);

    const only = route.mounts[0];
    let mount: SiteMount;
    let sitePath: string;
    if (route.mounts.length === 1 && only !== undefined && only.basePath === '') {
      mount = only;
      sitePath = rawPath;
    } else {
      const found = mountFor(route, rawPath);
      if (found === null) {
        this.sendPage(req, res, this.pages.notFound);
        return;
      }
      mount = found.mount;
      sitePath = found.sitePath;
    }

    const state = this.catalog.siteNow(mount.slug, mount.versionId);
    if (state === undefined) {
      this.after(req, res, this.catalog.loadSite(mount.slug, mount.versionId), (loaded) =>
        this.serveSite(req, res, loaded, mount, hostname, sitePath, query),
      );
      return;
    }
    this.serveSite(req, res, state, mount, hostname, sitePath, query);
  }

  private serveSite(
    req: SiteRequestHead,
    res: SiteResponse,
    state: SiteState,
    mount: SiteMount,
    hostname: string,
    sitePath: string,
    query: string,
  ): void {
    const record = state.record;
    if (record === null || record.deleted) {
      this.sendPage(req, res, this.pages.notFound);
      return;
    }
    // An operator's takedown or suspension (core/operators.ts) reaches here through a change event.
    if (record.takenDown) {
      this.sendPage(req, res, TAKEN_DOWN);
      return;
    }
    if (record.ownerSuspended) {
      this.sendPage(req, res, SUSPENDED);
      return;
    }
    // Expiry needs no event: the record carries the instant and every request compares it.
    if (record.expiresAt !== null && record.expiresAt <= this.deps.clock.now()) {
      this.sendPage(req, res, this.pages.gone);
      return;
    }
    const manifest = state.manifest;
    if (manifest === null) {
      this.sendPage(req, res, this.pages.notFound); // never finalized: nothing is live yet
      return;
    }
    const isProtected = record.passwordHash !== null;
    if (isProtected) {
      if (req.method === 'POST') {
        // Only node:http carries POSTs (the fast path takes no request with a body); the form is its body.
        if (req instanceof IncomingMessage) {
          this.after(req, res, this.gate.submit(req, res, state, this.clientKey(req)), settled);
        } else this.sendPage(req, res, METHOD_NOT_ALLOWED);
        return;
      }
      if (!this.gate.hasSession(req, state)) {
        this.gate.sendForm(req, res, 401, null);
        return;
      }
    } else if (req.method === 'POST') {
      this.sendPage(req, res, METHOD_NOT_ALLOWED);
      return;
    }
    if (sitePath === '') {
      this.redirect(res, 301, `${mount.basePath}/${query}`);
      return;
    }
    const sr: SiteRequest = {
      req,
      res,
      head: req.method === 'HEAD',
      state,
      manifest,
      mount,
      hostname,
      sitePath,
      query,
      protected: isProtected,
    };
    this.route(sr);
  }

  // ---- routing (CONTRACT "Serving") ---------------------------------------------------------------

  private route(sr: SiteRequest): void {
    const { manifest, sitePath } = sr;
    const decoded = decodeRequestPath(sitePath);
    if (decoded === null) {
      this.sendPage(sr.req, sr.res, BAD_REQUEST); // traversal, encoded separators, bad escapes
      return;
    }
    const files = manifest.files;
    // `/` and exact file names are the common cases; both are the first candidate of candidatePaths.
    let entry = decoded === '' ? files.get('index.html') : files.get(decoded);
    let folderLocation: string | null = null;
    if (entry === undefined && decoded !== '') {
      const found = resolveCandidate(decoded, (p) => files.has(p));
      if (found?.kind === 'file') entry = files.get(found.path);
      else if (found?.kind === 'redirect') folderLocation = found.location;
    }

    const rule = redirectFor(manifest, sitePath, entry !== undefined || folderLocation !== null);
    if (rule !== null) {
      if (!rule.rule.rewrite) {
        const to = rule.location.charCodeAt(0) === 0x2f ? sr.mount.basePath + rule.location : rule.location;
        this.count(sr, rule.status, 0, false);
        this.redirect(sr.res, rule.status, to.includes('?') ? to : to + sr.query);
        return;
      }
      const target = this.rewriteTarget(files, rule.location);
      if (target === undefined) this.sendNotFound(sr);
      else if (rule.status === 200) this.serveFile(sr, target);
      else this.sendEntryAs404(sr, target);
      return;
    }
    if (entry !== undefined) {
      this.serveFile(sr, entry);
      return;
    }
    if (folderLocation !== null) {
      this.count(sr, 301, 0, false);
      this.redirect(sr.res, 301, sr.mount.basePath + folderLocation + sr.query);
      return;
    }
    if (!manifest.hasRootIndex && serveGeneratedPage(this, this.deps.config, sr, decoded)) return;
    this.sendNotFound(sr);
  }

  /** The file a 200/404 rewrite serves: its `to` path resolved like a request path (no redirects). */
  private rewriteTarget(files: ReadonlyMap<string, FileEntry>, location: string): FileEntry | undefined {
    let end = location.length;
    for (const stop of ['?', '#']) {
      const at = location.indexOf(stop);
      if (at >= 0 && at < end) end = at;
    }
    const decoded = decodeRequestPath(location.slice(0, end));
    if (decoded === null) return undefined;
    if (decoded === '' || decoded.endsWith('/')) return files.get(`${decoded}index.html`);
    return files.get(decoded) ?? files.get(`${decoded}.html`) ?? files.get(`${decoded}/index.html`);
  }

  // ---- files (RFC 9110 §13 conditionals, §14 ranges, §8.4 content codings) ----------------------

  private serveFile(sr: SiteRequest, entry: FileEntry): void {
    const { req } = sr;
    const headers = req.headers;
    // §14.2: Range is defined for GET only; it applies to the identity representation only.
    let range: { start: number; end: number } | null = null;
    let unsatisfiable = false;
    const rangeHeader = headers.range;
    if (rangeHeader !== undefined && !sr.head) {
      const parsed = parseRange(rangeHeader, entry.size);
      if (
        parsed.kind !== 'none' &&
        ifRangeMatches(headers['if-range'] as string | undefined, entry.identity.etag, entry.lastModifiedMs)
      ) {
        if (parsed.kind === 'range') range = parsed;
        else unsatisfiable = true;
      }
    }

    let rep = entry.identity;
    if (entry.compressible && range === null && !unsatisfiable) {
      const encoding = pickEncoding(headers['accept-encoding']);
      if (encoding !== null) {
        const variant = entry[encoding];
        if (variant === undefined) {
          const pending = this.catalog.prepareVariant(entry, encoding);
          if (entry.size <= COMPRESS_INLINE_MAX_BYTES) {
            this.after(req, sr.res, pending, () => this.serveFile(sr, entry));
            return;
          }
          pending.catch((err) => this.deps.logger.error({ err, hash: entry.hash }, 'compression failed'));
        } else if (variant !== null) {
          rep = variant;
        }
      }
    }
    if (sr.manifest.headerRules.length !== 0) rep = this.withCustomHeaders(sr, entry, rep);
    if (sr.protected) rep = this.privateRep(rep);

    // §13.2.2: If-None-Match (else If-Modified-Since) is evaluated before Range.
    if (isNotModified(headers, rep.etag, entry.lastModifiedMs)) {
      this.count(sr, 304, 0, false);
      this.send(sr.res, 304, rep.notModified);
      return;
    }
    if (unsatisfiable) {
      this.count(sr, 416, 0, false);
      // §15.5.17: 416 with the current length in Content-Range.
      this.send(sr.res, 416, {
        'Content-Range': `bytes */${entry.size}`,
        'Content-Length': '0',
        'Accept-Ranges': 'bytes',
        'X-Content-Type-Options': 'nosniff',
      });
      return;
    }
    if (range !== null) {
      const partial: OutgoingHttpHeaders = {
        ...rep.ok,
        'Content-Range': `bytes ${range.start}-${range.end}/${entry.size}`,
        'Content-Length': String(range.end - range.start + 1),
      };
      this.sendBytes(sr, entry, rep, 206, partial, range.start, range.end);
      return;
    }
    this.sendBytes(sr, entry, rep, 200, rep.ok, 0, rep.size - 1);
  }

  /** Writes `rep`'s bytes `start..end` (inclusive) from memory, after loading them, or as a stream. */
  private sendBytes(
    sr: SiteRequest,
    entry: FileEntry,
    rep: Representation,
    status: number,
    headers: OutgoingHttpHeaders,
    start: number,
    end: number,
  ): void {
    const { res } = sr;
    this.count(sr, status, sr.head ? 0 : end - start + 1, isHtml(entry));
    if (sr.head) {
      this.send(res, status, headers);
      return;
    }
    const body = this.catalog.bodyNow(rep);
    if (body !== undefined) {
      this.sendBody(sr, entry, rep, status, headers, body, start, end);
      return;
    }
    if (rep.encoding === null && entry.size > this.catalog.maxMemoryBodyBytes) {
      this.streamBlob(sr, entry, status, headers, start, end);
      return;
    }
    this.after(sr.req, res, this.catalog.loadBody(entry, rep), (bytes) =>
      this.sendBody(sr, entry, rep, status, headers, bytes, start, end),
    );
  }

  private sendBody(
    sr: SiteRequest,
    entry: FileEntry,
    rep: Representation,
    status: number,
    headers: OutgoingHttpHeaders,
    body: Buffer,
    start: number,
    end: number,
  ): void {
    const whole = start === 0 && end === body.length - 1;
    if (status === 200 && whole && !sr.protected) {
      // A whole public file: the same request (whatever its query) gets the same bytes until expiry or a
      // change event.
      const until = Math.min(
        sr.state.record!.expiresAt ?? Number.POSITIVE_INFINITY,
        sr.mount.until ?? Number.POSITIVE_INFINITY,
      );
      // The memo entry keeps these: copies, not slices of this request's head.
      const host = ownedString(sr.hostname);
      const { mount, hostname } = sr;
      const reuse: Reuse = {
        until,
        slug: mount.slug,
        host,
        tally: this.reuseTally(sr, entry, host, body.length),
        settle: () => this.catalog.settle(hostname, mount, rep.bodyKey),
      };
      this.send(sr.res, status, headers, body, reuse);
      return;
    }
    this.send(sr.res, status, headers, whole ? body : body.subarray(start, end + 1));
  }

  /** Large files: piped from the blob store with backpressure; the store is closed if the client leaves. */
  private streamBlob(
    sr: SiteRequest,
    entry: FileEntry,
    status: number,
    headers: OutgoingHttpHeaders,
    start: number,
    end: number,
  ): void {
    const { req, res } = sr;
    this.after(req, res, this.catalog.blobs.get(entry.hash, { start, end }), (stream) => {
      if (res.destroyed) {
        (stream as Readable).destroy(); // the client left while the store was opening the blob
        return;
      }
      this.responses[status]! += 1;
      res.stream(status, headers, stream as Readable, (err) =>
        this.deps.logger.warn({ err, hash: entry.hash }, 'site file stream failed'),
      );
    });
  }

  /** `_headers` for this request path, merged into the representation (memoised per file). */
  private withCustomHeaders(sr: SiteRequest, entry: FileEntry, rep: Representation): Representation {
    let custom = entry.custom;
    if (custom === null || custom.path !== sr.sitePath) {
      const extra = headersFor(sr.manifest.headerRules, sr.sitePath);
      // Kept with the file: a copy of the path, not a slice of this request's head; no map without rules.
      custom = { path: ownedString(sr.sitePath), extra, byEncoding: extra.length === 0 ? null : new Map() };
      entry.custom = custom;
    }
    const byEncoding = custom.byEncoding;
    if (byEncoding === null) return rep;
    let merged = byEncoding.get(rep.encoding);
    if (merged === undefined) {
      merged = {
        ...rep,
        ok: mergeHeaders(rep.ok, custom.extra),
        notModified: mergeHeaders(rep.notModified, custom.extra),
      };
      byEncoding.set(rep.encoding, merged);
    }
    return merged;
  }

  /** The representation with `Cache-Control` made private: a protected site's files must not reach shared caches. */
  private privateRep(rep: Representation): Representation {
    let out = this.privateReps.get(rep);
    if (out === undefined) {
      out = { ...rep, ok: this.privateCache(rep.ok), notModified: this.privateCache(rep.notModified) };
      this.privateReps.set(rep, out);
    }
    return out;
  }

  private privateCache(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
    let out = this.privateHeaders.get(headers);
    if (out === undefined) {
      out = mergeHeaders(headers, [['Cache-Control', privateCacheControl(headers)]]);
      this.privateHeaders.set(headers, out);
    }
    return out;
  }

  // ---- visitor analytics (core/analytics.ts) -----------------------------------------------------

  /** Records an answer of the site for analytics: counters in memory, nothing else. */
  private count(sr: SiteRequest, status: number, bytes: number, html: boolean): void {
    const analytics = this.deps.analytics;
    if (analytics === undefined || sr.state.record!.analyticsOff) return;
    const req = sr.req;
    const base = sr.mount.basePath;
    analytics.record(
      sr.mount.slug,
      sr.hostname,
      status,
      bytes,
      base === '' ? sr.sitePath : base + sr.sitePath,
      html,
      req.method === 'GET',
      req.headers,
      this.visitorAddress(req, status, html),
      req.now,
    );
  }

  /** The client's address, worked out only for a page view (the one answer that hashes it). */
  private visitorAddress(req: SiteRequestHead, status: number, html: boolean): string {
    if (status !== 200 || !html) return '';
    const peer = req.socket?.remoteAddress;
    const forwardedFor = this.readsForwardedFor ? req.headers['x-forwarded-for'] : undefined;
    if (peer === this.lastPeer && forwardedFor === this.lastForwardedFor && peer !== undefined) {
      return this.lastVisitor;
    }
    const address = clientAddress(this.deps.config.trustProxy, peer, forwardedFor);
    this.lastPeer = peer;
    this.lastForwardedFor = forwardedFor;
    this.lastVisitor = address;
    return address;
  }

  /** What the fast path records when it answers this response again from its memo; none if not counted. */
  private reuseTally(sr: SiteRequest, entry: FileEntry, host: string, bytes: number): ReuseTally | undefined {
    if (this.deps.analytics === undefined || sr.state.record!.analyticsOff) return undefined;
    const base = sr.mount.basePath;
    return new ReuseTally(
      sr.mount.slug,
      host,
      ownedString(base === '' ? sr.sitePath : base + sr.sitePath),
      isHtml(entry),
      bytes,
    );
  }

  countReuse(tally: ReuseTally, req: SiteRequestHead, now: number): void {
    this.deps.analytics?.recordReuse(tally, req.headers, this.visitorAddress(req, 200, tally.html), now);
  }

  // ---- errors and pages --------------------------------------------------------------------------

  /** Missing file: the site's own 404.html with status 404, else the plain 404 page. */
  private sendNotFound(sr: SiteRequest): void {
    const page = sr.manifest.notFoundPage;
    if (page === null) {
      this.count(sr, 404, sr.head ? 0 : this.pages.notFound.body.length, false);
      this.sendPage(sr.req, sr.res, this.pages.notFound);
      return;
    }
    const headers = sr.protected ? this.privateCache(page.headers) : page.headers;
    this.sendBytes(sr, page.entry, page.entry.identity, 404, headers, 0, page.entry.size - 1);
  }

  /** A `404` rewrite of `_redirects`: the target's content with status 404. */
  private sendEntryAs404(sr: SiteRequest, entry: FileEntry): void {
    const headers: OutgoingHttpHeaders = {
      'Content-Type': entry.contentType,
      'Content-Length': String(entry.size),
      'Cache-Control': sr.protected ? PRIVATE_PAGE_CACHE_CONTROL : PAGE_CACHE_CONTROL,
      'X-Content-Type-Options': 'nosniff',
    };
    this.sendBytes(sr, entry, entry.identity, 404, headers, 0, entry.size - 1);
  }

  /** A generated page (viewer.ts): revalidated like an HTML file, private on a protected site. */
  sendHtml(sr: SiteRequest, html: string): void {
    const body = Buffer.from(html);
    this.count(sr, 200, sr.head ? 0 : body.length, true);
    const headers = htmlHeaders(body, sr.protected ? PRIVATE_PAGE_CACHE_CONTROL : PAGE_CACHE_CONTROL);
    this.send(sr.res, 200, headers, sr.head ? undefined : body);
  }

  sendPage(req: SiteRequestHead, res: SiteResponse, page: BuiltinPage): void {
    this.send(res, page.status, page.headers, req.method === 'HEAD' ? undefined : page.body);
  }

  redirect(res: SiteResponse, status: number, location: string): void {
    this.send(res, status, {
      Location: location,
      'Content-Length': '0',
      'Cache-Control': PAGE_CACHE_CONTROL,
    });
  }

  /** Every answer but a streamed file leaves here, counted by status. */
  send(res: SiteResponse, status: number, headers: OutgoingHttpHeaders, body?: Buffer, reuse?: Reuse): void {
    this.responses[status]! += 1;
    res.send(status, headers, body, reuse);
  }

  /** Continues a request once `work` settles; a rejection or a throw in `next` answers 500. */
  private after<T>(
    req: SiteRequestHead,
    res: SiteResponse,
    work: Promise<T>,
    next: (value: T) => void,
  ): void {
    work.then(next).catch((err: unknown) => this.fail(req, res, err));
  }

  private fail(req: SiteRequestHead, res: SiteResponse, err: unknown): void {
    const unavailable = isBackendUnavailable(err);
    if (unavailable) {
      // Every request of an outage lands here: one line per interval, not one per request.
      this.outageLog.run((suppressed) =>
        this.deps.logger.warn(
          { err: (err as Error).message, suppressed },
          'site request failed: backend unavailable (answering 503)',
        ),
      );
    } else {
      // The URL path and host only: never headers (cookies) or bodies (passwords).
      this.deps.logger.error({ err, host: req.headers.host, url: req.url }, 'site request failed');
    }
    try {
      if (res.headersSent) res.destroy();
      else this.sendPage(req, res, unavailable ? UNAVAILABLE : SERVER_ERROR);
    } catch {
      res.destroy();
    }
  }

  /** The wrong-guess limit's key: the client (src/core/client-address.ts), its /64 for IPv6. */
  private clientKey(req: IncomingMessage): string {
    return limitKey(
      clientAddress(this.deps.config.trustProxy, req.socket.remoteAddress, req.headers['x-forwarded-for']),
    );
  }
}

/** An HTML document (what a page view is made of). */
function isHtml(entry: FileEntry): boolean {
  return entry.contentType.startsWith('text/html');
}

/** Continuation of a request whose work answered by itself (the password form's submission). */
function settled(): void {}

/** A Cache-Control value for a private response: `public` becomes `private`, else `private` is added. */
function privateCacheControl(headers: OutgoingHttpHeaders): string {
  const value = String(headers['Cache-Control'] ?? headers['cache-control'] ?? 'max-age=0, must-revalidate');
  if (/\bpublic\b/i.test(value)) return value.replace(/\bpublic\b/i, 'private');
  return /\bprivate\b/i.test(value) ? value : `private, ${value}`;
}
