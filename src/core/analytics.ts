// Visitor analytics (issue 25, docs/analytics.md). The site server bumps counters in memory as it answers
// (AnalyticsCounter.record: Map lookups and additions; page views also hash the visitor); every
// ANALYTICS_FLUSH_S a flusher takes the counters out and writes them in batched statements, a
// transaction per FLUSH_SITES_PER_WRITE sites, adding to the hour and day rows, merging visitor sketches
// (hll.ts). State exists only for the sites seen since the last flush. Visitors are a keyed hash of
// (daily salt, site, client address, user agent): the salt lives in the database for its day only (every
// node and worker of the day uses the same one, so a visitor seen by two nodes is one visitor) and is
// deleted once the day is over; neither address nor user agent is kept anywhere.

import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isbot } from 'isbot';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import { ownedString } from '../shared/strings.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import {
  type AnalyticsCountRow,
  analyticsCountRows,
  analyticsKeyRows,
  deleteAnalyticsBefore,
  deleteSaltsBefore,
  lockAnalytics,
  readSalt,
  recentVisitors,
  storedSketches,
  upsertAnalyticsCounts,
  upsertAnalyticsKeys,
  upsertSalt,
} from '../store/db/tables/analytics.js';
import { invalid } from './errors.js';
import {
  decodeSketch,
  emptySketch,
  encodeSketch,
  finish,
  mixInt,
  mixString,
  type Sketch,
  sameRegister,
  sketchAddRegister,
  sketchEstimate,
  sketchMerge,
  sketchRegister,
} from './hll.js';
import { ownedSite } from './publish.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Hour rows are kept this long; day rows for ANALYTICS_RETENTION_DAYS. */
export const HOURLY_KEEP_MS = 7 * DAY_MS;
/** Distinct paths (and referrers, 404 paths) counted per site and interval; the rest add up under OTHER_KEY. */
export const MAX_KEYS_PER_INTERVAL = 100;
/**
 * Keys (a path after a site's first, a referrer, a 404 path, a host after the first) a node's counter adds
 * in one interval over all sites; past it new keys add up under OTHER_KEY until the next flush. Requests
 * choose 404 paths and referrers: without it a client asking random 300-character paths of many sites grew
 * the heap by ~400 bytes a request until the flush (issue 23: RSS bounded whatever the traffic). At most
 * ~40 MB of keys, usually a tenth of that.
 */
export const MAX_KEYS_PER_NODE_INTERVAL = 100_000;
export const OTHER_KEY = '(other)';
/** Longest path or referrer host kept (longer ones are cut). */
const MAX_KEY_CHARS = 300;
/** User agents remembered as bot or not (a Map lookup instead of isbot's regular expression). */
const BOT_CACHE_MAX = 2000;
/** Fixed seed of an agent's own hash (the day's salt keys the visitor hash it goes into). */
const AGENT_SEED = 0x5a17c0de;
/** Memo answers folded into tallies per turn of the event loop ahead of a flush (foldAhead). */
const FOLD_PART = 2000;

/**
 * What a memoized response records when the fast path answers it again: fixed per memo entry, plus the
 * answers given since the counter last folded them into the site's tally (AnalyticsCounter.recordReuse).
 */
export class ReuseTally {
  /** Answers to browsers and to bots not yet in the site's tally. */
  answers = 0;
  bots = 0;

  constructor(
    readonly slug: string,
    readonly host: string,
    readonly path: string,
    readonly html: boolean,
    readonly bytes: number,
  ) {}
}

/**
 * A site's counts for one hour of one interval. A node that answered 100,000 sites in a minute holds
 * 100,000 of these until the flush (issue 23), so the usual site's tally is one object of a few fields: a
 * 2xx count, the first path and host each in two fields (a one-page site reached at one host needs no Map),
 * and its first visitor as one number (a sketch only from the second). What few sites need in an interval
 * (other status classes, 404s, referrers, more paths or hosts) is in `more`, made when first needed.
 */
export class SiteTally {
  pageViews = 0;
  bytes = 0;
  bots = 0;
  status2xx = 0;
  /** Page views by path: the first path in two fields, any other in `more.paths`. */
  path: string | null = null;
  pathViews = 0;
  /** Page views by the host they came through (the site's own, a preview or alias, a handle or domain). */
  host: string | null = null;
  hostViews = 0;
  /** The site's part of the visitor hash under `slugSeed` (the day's seed it was computed with). */
  slugMix = 0;
  slugSeed: number | null = null;
  /** The only visitor so far as a sketch register (hll.ts sketchRegister); 0: none, or `sketch` holds them. */
  private visitor = 0;
  private sketch: Sketch | null = null;
  private more: TallyMore | null = null;

  get notFound(): number {
    return this.more?.notFound ?? 0;
  }
  get status1xx(): number {
    return this.more?.status1xx ?? 0;
  }
  get status3xx(): number {
    return this.more?.status3xx ?? 0;
  }
  get status4xx(): number {
    return this.more?.status4xx ?? 0;
  }
  get status5xx(): number {
    return this.more?.status5xx ?? 0;
  }
  get referrers(): Map<string, number> | null {
    return this.more?.referrers ?? null;
  }
  get notFoundPaths(): Map<string, number> | null {
    return this.more?.notFoundPaths ?? null;
  }

  /** The visitors' sketch (a new one when a single visitor is held in `visitor`); null: none. */
  get visitors(): Sketch | null {
    if (this.sketch !== null) return this.sketch;
    if (this.visitor === 0) return null;
    const s = emptySketch();
    sketchAddRegister(s, this.visitor);
    return s;
  }

  /** Adds a visitor's hash (hll.ts sketchAdd). */
  addVisitor(h: number): void {
    this.addRegister(sketchRegister(h));
  }

  /** Adds the visitors of `from`. */
  mergeVisitors(from: SiteTally): void {
    if (from.sketch === null) {
      if (from.visitor !== 0) this.addRegister(from.visitor);
      return;
    }
    if (this.sketch === null) {
      this.sketch = emptySketch();
      if (this.visitor !== 0) sketchAddRegister(this.sketch, this.visitor);
      this.visitor = 0;
    }
    sketchMerge(this.sketch, from.sketch);
  }

  private addRegister(register: number): void {
    if (this.sketch !== null) sketchAddRegister(this.sketch, register);
    else if (this.visitor === 0 || sameRegister(this.visitor, register)) {
      if (register > this.visitor) this.visitor = register;
    } else {
      this.sketch = emptySketch();
      sketchAddRegister(this.sketch, this.visitor);
      sketchAddRegister(this.sketch, register);
      this.visitor = 0;
    }
  }

  /** Adds this tally's visitors to `into`. */
  mergeVisitorsInto(into: Sketch): void {
    if (this.sketch !== null) sketchMerge(into, this.sketch);
    else if (this.visitor !== 0) sketchAddRegister(into, this.visitor);
  }

  /** Whether any visitor was counted. */
  get hasVisitors(): boolean {
    return this.visitor !== 0 || this.sketch !== null;
  }

  private extra(): TallyMore {
    this.more ??= new TallyMore();
    return this.more;
  }

  /** An answer with `status` (one outside 100..599 is not counted by class). */
  addStatus(status: number, answers = 1): void {
    if (answers === 0) return; // (a tally put back adds every class, most of them 0: no `more` for those)
    const cls = (status / 100) | 0;
    if (cls === 2) this.status2xx += answers;
    else if (cls >= 1 && cls <= 5) this.extra().addStatusClass(cls, answers);
  }

  /** A 404 of `path`. */
  addNotFound(path: string, count: number, budget: KeyBudget): void {
    const more = this.extra();
    more.notFound += count;
    more.notFoundPaths = bump(more.notFoundPaths, path, count, budget);
  }

  addReferrer(host: string, views: number, budget: KeyBudget): void {
    const more = this.extra();
    more.referrers = bump(more.referrers, host, views, budget);
  }

  addPath(path: string, views: number, budget: KeyBudget): void {
    const key = cutKey(path);
    if (this.path === null) {
      this.path = ownedString(key);
      this.pathViews += views;
    } else if (this.path === key) {
      this.pathViews += views;
    } else {
      const more = this.extra();
      more.paths = bump(more.paths, key, views, budget, MAX_KEYS_PER_INTERVAL - 1);
    }
  }

  /**
   * `owned`: `host` is a string the caller keeps anyway (a memo entry's), not a slice of a request: kept
   * as it is rather than copied (issue 23: 100,000 sites' tallies each held a copy of a host the memo held).
   */
  addHost(host: string, views: number, budget: KeyBudget, owned = false): void {
    if (this.host === null) {
      this.host = owned ? host : ownedString(host);
      this.hostViews += views;
    } else if (this.host === host) {
      this.hostViews += views;
    } else {
      const more = this.extra();
      more.hosts = bump(more.hosts, host, views, budget, MAX_KEYS_PER_INTERVAL - 1);
    }
  }

  /** Page views by path. */
  *pathEntries(): Iterable<[string, number]> {
    if (this.path !== null) yield [this.path, this.pathViews];
    if (this.more?.paths) yield* this.more.paths;
  }

  /** Page views by host. */
  *hostEntries(): Iterable<[string, number]> {
    if (this.host !== null) yield [this.host, this.hostViews];
    if (this.more?.hosts) yield* this.more.hosts;
  }
}

/** A tally's counts that few sites need in an interval (SiteTally.more). */
class TallyMore {
  notFound = 0;
  status1xx = 0;
  status3xx = 0;
  status4xx = 0;
  status5xx = 0;
  paths: Map<string, number> | null = null;
  referrers: Map<string, number> | null = null;
  notFoundPaths: Map<string, number> | null = null;
  hosts: Map<string, number> | null = null;

  addStatusClass(cls: number, answers: number): void {
    switch (cls) {
      case 1:
        this.status1xx += answers;
        break;
      case 3:
        this.status3xx += answers;
        break;
      case 4:
        this.status4xx += answers;
        break;
      case 5:
        this.status5xx += answers;
        break;
    }
  }
}

/** The counters of one interval: hour start -> slug -> tally. */
export type Interval = Map<number, Map<string, SiteTally>>;

/** The keys a counter may still add in its interval (MAX_KEYS_PER_NODE_INTERVAL). */
interface KeyBudget {
  left: number;
}

/**
 * `key`'s count in `map` (made when null) up by `by`; past `max` keys in the map, or with `budget` spent,
 * a new key adds up under OTHER_KEY (`max` one less where the tally holds its first key in fields:
 * MAX_KEYS_PER_INTERVAL in all).
 */
function bump(
  map: Map<string, number> | null,
  key: string,
  by: number,
  budget: KeyBudget,
  max = MAX_KEYS_PER_INTERVAL,
): Map<string, number> {
  const m = map ?? new Map<string, number>();
  const cut = cutKey(key);
  const had = m.get(cut);
  if (had !== undefined) m.set(cut, had + by);
  else if (m.size < max && budget.left > 0) {
    // A copy: the caller's key is often a slice of a request head, which the interval would keep whole.
    m.set(ownedString(cut), by);
    budget.left--;
  } else m.set(OTHER_KEY, (m.get(OTHER_KEY) ?? 0) + by);
  return m;
}

/** `key` as kept: at most MAX_KEY_CHARS (a longer one adds up under its cut form). */
function cutKey(key: string): string {
  return key.length > MAX_KEY_CHARS ? key.slice(0, MAX_KEY_CHARS) : key;
}

/** Host of a Referer value (`https://host:port/...` -> `host`), lowercased; '' when it has none. */
export function referrerHost(referer: string): string {
  const start = referer.indexOf('//');
  if (start < 0) return '';
  let end = start + 2;
  while (end < referer.length) {
    const c = referer.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break;
    end++;
  }
  const at = referer.lastIndexOf('@', end);
  const from = at > start ? at + 1 : start + 2;
  // The port goes (an IPv6 literal `[...]` keeps its colons).
  const colon = referer.charCodeAt(from) === 0x5b ? -1 : referer.indexOf(':', from);
  return referer.slice(from, colon >= 0 && colon < end ? colon : end).toLowerCase();
}

/** A page view's referrer host into `t`, unless it is none or the site itself. */
function countReferrer(t: SiteTally, headers: IncomingHttpHeaders, budget: KeyBudget): void {
  const referer = headers.referer;
  if (referer === undefined) return;
  const host = referrerHost(referer);
  if (host !== '' && !isOwnHost(headers.host, host)) t.addReferrer(host, 1, budget);
}

/** Whether `host` (a referrer's, lowercase) is the request's own Host (a link inside the site). */
function isOwnHost(own: string | undefined, host: string): boolean {
  if (own === undefined) return false;
  const colon = own.charCodeAt(0) === 0x5b ? -1 : own.indexOf(':'); // an IPv6 literal keeps its colons
  return (colon < 0 ? own : own.slice(0, colon)).toLowerCase() === host;
}

/** The node's (or worker's) counters since the last flush, and the day's salt. */
export class AnalyticsCounter {
  private interval: Interval = new Map();
  /** Keys this interval may still add (MAX_KEYS_PER_NODE_INTERVAL); take() starts a new interval's. */
  private readonly keys: KeyBudget = { left: MAX_KEYS_PER_NODE_INTERVAL };
  private hourStart = -1;
  private hourEnd = -1;
  private hourMap: Map<string, SiteTally> = new Map();
  /** Memo entries with answers not yet in hourMap's tallies (recordReuse), each once. */
  private pendingReuse: ReuseTally[] = [];
  /** The last tally tallyFor() handed out (in hourMap), and its slug; '' after take() and restore(). */
  private lastSlug = '';
  private lastTally: SiteTally | null = null;
  /**
   * What each user agent seen lately is: a bot (-1), or a browser and the hash of its text (the visitor
   * hash mixes that number in rather than the ~120 characters of the field on every page view).
   */
  private readonly agents = new Map<string, number>();
  private lastAgent = '';
  private lastAgentCode = -1;
  /** The last page view's visitor (its tally, seed, address and agent): see record(). */
  private readonly lastVisit: {
    tally: SiteTally | null;
    seed: number | null;
    address: string;
    agent: number;
  } = {
    tally: null,
    seed: null,
    address: '',
    agent: -1,
  };
  /** The day the seeds belong to, and the seeds (from the day's salt). */
  private saltDay = -1;
  private seed1 = 0;
  private seed2 = 0;
  /** Asked for the salt of a new day (set by the flusher). */
  onNewDay: (day: number) => void = () => {};

  /** The clock to within COARSE_CLOCK_MS (an hour's counts need no system call per answer). */
  private readonly coarseNow: () => number;

  constructor(clock: Clock) {
    this.coarseNow = clock.coarseNow === undefined ? () => clock.now() : clock.coarseNow;
  }

  /** Uses `salt` (16+ bytes) for visitor hashes of `day` (epoch ms of its 00:00 UTC). */
  setSalt(day: number, salt: Buffer): void {
    if (day < this.saltDay) return;
    this.saltDay = day;
    this.seed1 = salt.readInt32BE(0);
    this.seed2 = salt.readInt32BE(4) ^ salt.readInt32BE(8) ^ salt.readInt32BE(12);
    this.lastVisit.tally = null;
  }

  private tallyFor(slug: string, now: number): SiteTally {
    // Answers come in runs for one site: its tally without a Map lookup (the slug is the route's string).
    if (slug === this.lastSlug && now < this.hourEnd && now >= this.hourStart) return this.lastTally!;
    if (now >= this.hourEnd || now < this.hourStart) this.enterHour(now);
    const t = this.siteTally(slug);
    this.lastSlug = slug;
    this.lastTally = t;
    return t;
  }

  /** Counts from here on go to the hour of `now` (what memo answers counted so far go to the hour before). */
  private enterHour(now: number): void {
    this.foldReuse();
    this.lastSlug = '';
    this.lastTally = null;
    this.hourStart = now - (now % HOUR_MS);
    this.hourEnd = this.hourStart + HOUR_MS;
    let map = this.interval.get(this.hourStart);
    if (map === undefined) {
      map = new Map();
      this.interval.set(this.hourStart, map);
    }
    this.hourMap = map;
  }

  /** The current hour's tally of `slug`, made when missing. */
  private siteTally(slug: string): SiteTally {
    let t = this.hourMap.get(slug);
    if (t === undefined) {
      t = new SiteTally();
      this.hourMap.set(slug, t);
    }
    return t;
  }

  isBot(ua: string | undefined): boolean {
    return this.agent(ua) < 0;
  }

  /** -1 for a bot (or no user agent: browsers always send one), else the agent text's hash (>= 0). */
  private agent(ua: string | undefined): number {
    if (ua === undefined || ua === '') return -1;
    // A page and its files come from one browser one after another: comparing with the last agent's text
    // costs less than hashing the field's ~120 characters for the map.
    if (ua === this.lastAgent) return this.lastAgentCode;
    let code = this.agents.get(ua);
    if (code === undefined) {
      code = isbot(ua) ? -1 : finish(mixString(AGENT_SEED, ua));
      if (this.agents.size >= BOT_CACHE_MAX) this.agents.clear();
      // A copy: the field is a slice of its request's head, which the cache would keep whole.
      this.agents.set(ownedString(ua), code);
    }
    this.lastAgent = ua;
    this.lastAgentCode = code;
    return code;
  }

  /**
   * One answer of site `slug` through `host` (its hostname, lowercase, no port): `path` as requested (below
   * the host, no query), `html` when it is an HTML document (a file or the viewer page), `bytes` of body
   * sent, `address` the client's; `at` when the caller has read the clock for this request already.
   */
  record(
    slug: string,
    host: string,
    status: number,
    bytes: number,
    path: string,
    html: boolean,
    get: boolean,
    headers: IncomingHttpHeaders,
    address: string,
    /** The clock reading the caller made for this request; 0 or absent: the coarse clock's. */
    at?: number,
  ): void {
    const now = at || this.coarseNow();
    const t = this.tallyFor(slug, now);
    t.bytes += bytes;
    t.addStatus(status);
    const agent = this.agent(headers['user-agent']);
    if (agent < 0) {
      t.bots++;
      return;
    }
    if (status === 404) {
      t.addNotFound(path, 1, this.keys);
      return;
    }
    if (status !== 200 || !html || !get) return;
    t.pageViews++;
    t.addPath(path, 1, this.keys);
    t.addHost(host, 1, this.keys);
    countReferrer(t, headers, this.keys);
    this.addVisitor(t, slug, address, agent, now);
  }

  /** A page view's visitor (`agent`: its agent() code, a browser's) into the sketch of `t`, site `slug`'s. */
  private addVisitor(t: SiteTally, slug: string, address: string, agent: number, now: number): void {
    // (Two comparisons rather than `now % DAY_MS`: a floating-point remainder is a call per page view.)
    if (now >= this.saltDay + DAY_MS || now < this.saltDay) {
      const day = now - (now % DAY_MS);
      if (day !== this.saltDay) {
        // First page view of a new day on this node: until the day's shared salt arrives, a local one.
        this.setSalt(day, randomBytes(16));
        this.onNewDay(day);
      }
    }
    // One keyed 32-bit hash of (salt, site, address, agent): its top 10 bits pick the register, the other
    // 22 give the rank. The site's part is kept per tally and the agent's per agent, so a page view hashes
    // only the address's few characters.
    if (t.slugSeed !== this.seed1) {
      t.slugMix = mixString(this.seed1, slug);
      t.slugSeed = this.seed1;
    }
    // The same visitor's next page: the same hash, already in this tally's sketch (adding it is a no-op).
    if (
      t === this.lastVisit.tally &&
      t.slugSeed === this.lastVisit.seed &&
      address === this.lastVisit.address &&
      agent === this.lastVisit.agent
    )
      return;
    const h = finish(mixInt(mixString(t.slugMix, address), agent) ^ this.seed2);
    t.addVisitor(h);
    this.lastVisit.tally = t;
    this.lastVisit.seed = t.slugSeed;
    this.lastVisit.address = address;
    this.lastVisit.agent = agent;
  }

  /**
   * A memoized answer given again (the fast path's memo, always a GET answered 200): the entry's own
   * counters go up, folded into the site's tally by take() and at the hour's end, so an asset costs a user
   * agent check and an addition; a page view also hashes its visitor (and reads its referrer) as record()
   * does.
   */
  recordReuse(r: ReuseTally, headers: IncomingHttpHeaders, address: string, now: number): void {
    if (now >= this.hourEnd || now < this.hourStart) this.enterHour(now);
    if (r.answers === 0 && r.bots === 0) this.pendingReuse.push(r);
    const agent = this.agent(headers['user-agent']);
    if (agent < 0) {
      r.bots++;
      return;
    }
    r.answers++;
    if (!r.html) return;
    const t = this.tallyFor(r.slug, now);
    countReferrer(t, headers, this.keys);
    this.addVisitor(t, r.slug, address, agent, now);
  }

  /**
   * Folds memo answers into the tallies ahead of take(), FOLD_PART at a time with the event loop free
   * between parts, so that take() folds only what came meanwhile (issue 23: the memo answers of 100,000
   * sites folded at once held the loop ~200 ms at every flush).
   */
  async foldAhead(): Promise<void> {
    const parts = Math.ceil(this.pendingReuse.length / FOLD_PART) * 2;
    for (let i = 0; i < parts && this.pendingReuse.length > FOLD_PART; i++) {
      this.foldReuse(FOLD_PART);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Adds what memo answers counted (recordReuse) to the current hour's tallies: all, or the last `max`. */
  private foldReuse(max = Number.POSITIVE_INFINITY): void {
    let pending = this.pendingReuse;
    if (pending.length === 0) return;
    if (pending.length <= max) this.pendingReuse = [];
    else pending = pending.splice(pending.length - max, max);
    for (const r of pending) {
      const t = this.siteTally(r.slug);
      const answers = r.answers + r.bots;
      t.bytes += answers * r.bytes;
      t.status2xx += answers;
      t.bots += r.bots;
      if (r.html && r.answers > 0) {
        t.pageViews += r.answers;
        t.addPath(r.path, r.answers, this.keys);
        t.addHost(r.host, r.answers, this.keys, true);
      }
      r.answers = 0;
      r.bots = 0;
    }
  }

  /** Takes the counters out (the next requests start a new interval). */
  take(): Interval {
    this.foldReuse();
    const out = this.interval;
    this.interval = new Map();
    this.keys.left = MAX_KEYS_PER_NODE_INTERVAL;
    this.forgetHour();
    return out;
  }

  /** Puts back an interval that could not be written (added to what came since). */
  restore(old: Interval): void {
    this.foldReuse();
    for (const [hour, sites] of old) {
      let map = this.interval.get(hour);
      if (map === undefined) {
        map = new Map();
        this.interval.set(hour, map);
      }
      for (const [slug, t] of sites) {
        const into = map.get(slug);
        if (into === undefined) map.set(slug, t);
        else mergeTally(into, t, this.keys);
      }
    }
    this.forgetHour();
  }

  /** The next record() looks its hour and tally up again. */
  private forgetHour(): void {
    this.hourMap = new Map();
    this.hourStart = -1;
    this.hourEnd = -1;
    this.lastSlug = '';
    this.lastTally = null;
  }

  /** Sites with counts since the last flush (memory is proportional to this). */
  get pendingSites(): number {
    let n = 0;
    for (const m of this.interval.values()) n += m.size;
    return n;
  }
}

/** Adds `t` to `into`; keys new to `into` are charged to `budget` (those of a tally put back whole are not). */
function mergeTally(into: SiteTally, t: SiteTally, budget: KeyBudget): void {
  into.pageViews += t.pageViews;
  into.bytes += t.bytes;
  into.bots += t.bots;
  into.addStatus(100, t.status1xx);
  into.addStatus(200, t.status2xx);
  into.addStatus(300, t.status3xx);
  into.addStatus(400, t.status4xx);
  into.addStatus(500, t.status5xx);
  into.mergeVisitors(t);
  for (const [k, v] of t.pathEntries()) into.addPath(k, v, budget);
  for (const [k, v] of t.referrers ?? []) into.addReferrer(k, v, budget);
  for (const [k, v] of t.notFoundPaths ?? []) into.addNotFound(k, v, budget);
  for (const [k, v] of t.hostEntries()) into.addHost(k, v, budget, true);
}

// ---- the flusher -------------------------------------------------------------------------------------

export interface AnalyticsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
}

/** Loads (creating it if it is the first) the salt of `day`, shared by every node through the database. */
export async function daySalt(db: Db, day: number): Promise<Buffer> {
  await upsertSalt(db.kysely, day, randomBytes(16).toString('base64'));
  const stored = await readSalt(db.kysely, day);
  return Buffer.from(stored!, 'base64');
}

/**
 * Writes one interval in one transaction: hour and day rows add the counts and merge the sketches, key
 * rows add their counts. Either all of it is stored or none (a failed flush is retried with the next).
 */
export async function writeInterval(db: Db, interval: Interval): Promise<void> {
  if (interval.size === 0) return;
  const slugs = new Set<string>();
  const starts = new Set<number>();
  for (const [hour, sites] of interval) {
    starts.add(hour);
    starts.add(hour - (hour % DAY_MS));
    for (const slug of sites.keys()) slugs.add(slug);
  }
  await db.transaction(async (trx) => {
    // Sketches are read, merged and written back: one flush at a time across nodes (SQLite's write lock
    // does it there; PostgreSQL takes an advisory lock for the transaction).
    if (db.dialect === 'postgres') await lockAnalytics(trx);
    const stored = await storedSketches(trx, [...slugs], [...starts]);
    const rows = new Map<string, AnalyticsCountRow>();
    const sketches = new Map<string, Sketch>();
    const keys = new Map<string, { slug: string; day: number; kind: string; key: string; count: number }>();
    const add = (slug: string, granularity: 'hour' | 'day', start: number, t: SiteTally) => {
      const id = `${slug}\n${granularity}\n${start}`;
      let row = rows.get(id);
      if (row === undefined) {
        row = {
          slug,
          granularity,
          start,
          page_views: 0,
          bytes: 0,
          not_found: 0,
          bots: 0,
          status_1xx: 0,
          status_2xx: 0,
          status_3xx: 0,
          status_4xx: 0,
          status_5xx: 0,
          visitors: 0,
          sketch: null,
        };
        rows.set(id, row);
      }
      row.page_views += t.pageViews;
      row.bytes += t.bytes;
      row.not_found += t.notFound;
      row.bots += t.bots;
      row.status_1xx += t.status1xx;
      row.status_2xx += t.status2xx;
      row.status_3xx += t.status3xx;
      row.status_4xx += t.status4xx;
      row.status_5xx += t.status5xx;
      if (t.hasVisitors) {
        let s = sketches.get(id);
        if (s === undefined) {
          s = decodeSketch(stored.get(id) ?? null);
          sketches.set(id, s);
        }
        t.mergeVisitorsInto(s);
      }
    };
    const addKeys = (slug: string, day: number, kind: string, map: Iterable<[string, number]> | null) => {
      for (const [key, count] of map ?? []) {
        const id = `${slug}\n${day}\n${kind}\n${key}`;
        const had = keys.get(id);
        if (had !== undefined) had.count += count;
        else keys.set(id, { slug, day, kind, key, count });
      }
    };
    for (const [hour, sites] of interval) {
      const day = hour - (hour % DAY_MS);
      for (const [slug, t] of sites) {
        add(slug, 'hour', hour, t);
        add(slug, 'day', day, t);
        addKeys(slug, day, 'path', t.pathEntries());
        addKeys(slug, day, 'referrer', t.referrers);
        addKeys(slug, day, 'notfound', t.notFoundPaths);
        addKeys(slug, day, 'host', t.hostEntries());
      }
    }
    for (const [id, row] of rows) {
      const s = sketches.get(id);
      if (s !== undefined) {
        row.sketch = encodeSketch(s);
        row.visitors = sketchEstimate(s);
      }
    }
    await upsertAnalyticsCounts(trx, [...rows.values()]);
    await upsertAnalyticsKeys(trx, [...keys.values()]);
  });
}

/**
 * Sites written per transaction by a flush. A node that answered 100,000 sites in one interval would
 * otherwise write ~400,000 rows in one transaction, holding the event loop (SQLite runs in it) and the
 * database's write lock for seconds; a part of this size takes ~5 ms here, and the flush yields between
 * parts.
 */
export const FLUSH_SITES_PER_WRITE = 100;
/**
 * A periodic flush rests this many times as long as each part took before the next one, so that while it
 * runs it takes at most about half of the event loop. Yielding alone was not enough (issue 23): 100,000
 * sites in an interval are ~5 s of writing here, and the loop ran a part after every poll of the
 * sockets, so serving fell to ~1,000 req/s (p99 3 s) for those seconds every minute.
 */
export const FLUSH_PACE = 1;

/** `interval` cut into intervals of at most `maxSites` sites each (a site's hours stay together). */
export function splitInterval(interval: Interval, maxSites: number): Interval[] {
  const partOf = new Map<string, number>();
  const parts: Interval[] = [];
  for (const [hour, sites] of interval) {
    for (const [slug, t] of sites) {
      let at = partOf.get(slug);
      if (at === undefined) {
        at = Math.floor(partOf.size / maxSites);
        partOf.set(slug, at);
      }
      let part = parts[at];
      if (part === undefined) {
        part = new Map();
        parts[at] = part;
      }
      let map = part.get(hour);
      if (map === undefined) {
        map = new Map();
        part.set(hour, map);
      }
      map.set(slug, t);
    }
  }
  return parts;
}

/**
 * Writes `interval` (emptied: the flush holds its parts from here) in parts of FLUSH_SITES_PER_WRITE
 * sites, each in its own transaction, yielding to the event loop between parts, and resting `pace()` times
 * as long as a part took (0: not at all, as on shutdown). When a part fails, it and every part not yet
 * written go to `unwritten` (the parts written stay written: nothing is counted twice) and the error is
 * thrown.
 */
export async function writeIntervalInParts(
  db: Db,
  interval: Interval,
  unwritten: (rest: Interval) => void,
  pace: () => number = () => 0,
): Promise<void> {
  const parts: Array<Interval | undefined> = splitInterval(interval, FLUSH_SITES_PER_WRITE);
  // Each part's tallies go as soon as it is written: kept whole, the interval being written and the one
  // filling meanwhile both held every site for the ~10 s a paced flush of 100,000 sites takes (issue 23).
  interval.clear();
  let rest = 0;
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) {
      await new Promise((resolve) =>
        rest >= 1 ? setTimeout(resolve, Math.round(rest)) : setImmediate(resolve),
      );
    }
    const started = performance.now();
    try {
      await writeInterval(db, parts[i]!);
    } catch (err) {
      for (const part of parts.slice(i)) unwritten(part!);
      throw err;
    }
    parts[i] = undefined;
    rest = (performance.now() - started) * pace();
  }
}

export interface AnalyticsFlusher {
  /** Writes what is counted now (also called on graceful shutdown). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/** Flushes `counter` every `intervalMs`; keeps the day's shared salt loaded. */
export function startAnalyticsFlusher(
  deps: AnalyticsDeps,
  counter: AnalyticsCounter,
  intervalMs: number,
): AnalyticsFlusher {
  let running: Promise<void> = Promise.resolve();
  const loadSalt = (day: number) => {
    daySalt(deps.db, day)
      .then((salt) => counter.setSalt(day, salt))
      .catch((err) => deps.logger.warn({ err: (err as Error).message }, 'analytics salt not loaded'));
  };
  counter.onNewDay = loadSalt;
  const now = deps.clock.now();
  loadSalt(now - (now % DAY_MS));
  // The periodic flush is paced (FLUSH_PACE); one asked for (tests, shutdown) is not, and shutdown ends the
  // pacing of one under way.
  let stopping = false;
  const flush = (paced = false): Promise<void> => {
    running = running.then(async () => {
      try {
        await counter.foldAhead();
        await writeIntervalInParts(
          deps.db,
          counter.take(),
          (rest) => counter.restore(rest),
          () => (paced && !stopping ? FLUSH_PACE : 0),
        );
      } catch (err) {
        deps.logger.warn({ err: (err as Error).message }, 'analytics flush failed (kept for the next one)');
      }
    });
    return running;
  };
  const timer = setInterval(() => void flush(true), intervalMs);
  timer.unref();
  return {
    flush: () => flush(),
    async stop() {
      stopping = true;
      clearInterval(timer);
      await flush();
    },
  };
}

/** Removes hour rows older than 7 days, day rows and key rows older than `retentionDays`, past salts. */
export async function sweepAnalytics(db: Db, now: number, retentionDays: number): Promise<number> {
  const today = now - (now % DAY_MS);
  await deleteSaltsBefore(db.kysely, today);
  return deleteAnalyticsBefore(db.kysely, today - HOURLY_KEEP_MS, today - retentionDays * DAY_MS);
}

// ---- reading -----------------------------------------------------------------------------------------

export interface AnalyticsReport {
  slug: string;
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  totals: {
    pageViews: number;
    visitors: number;
    bytes: number;
    notFound: number;
    bots: number;
    /** Every answer (bots' too) by status class. */
    statuses: StatusClasses;
  };
  series: Array<{ start: string; pageViews: number; visitors: number }>;
  topPaths: Array<{ path: string; pageViews: number }>;
  topReferrers: Array<{ host: string; pageViews: number }>;
  notFoundPaths: Array<{ path: string; count: number }>;
  /** Page views by the host they came through: the site's own, preview and alias hosts, handles, domains. */
  topHosts: Array<{ host: string; pageViews: number }>;
}

export interface StatusClasses {
  '1xx': number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
}

export const TOP_ITEMS = 20;

/** The report of `slug` for [from, to) at `granularity` (instants already checked by the caller). */
export async function analyticsReport(
  db: Db,
  slug: string,
  from: number,
  to: number,
  granularity: 'hour' | 'day',
): Promise<AnalyticsReport> {
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS;
  const first = from - (from % step);
  const rows = await analyticsCountRows(db.kysely, slug, granularity, first, to);
  const byStart = new Map(rows.map((r) => [r.start, r]));
  const series: AnalyticsReport['series'] = [];
  const all = emptySketch();
  const statuses: StatusClasses = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const totals = { pageViews: 0, visitors: 0, bytes: 0, notFound: 0, bots: 0, statuses };
  for (let start = first; start < to; start += step) {
    const r = byStart.get(start);
    series.push({
      start: new Date(start).toISOString(),
      pageViews: r?.page_views ?? 0,
      visitors: r?.visitors ?? 0,
    });
    if (r === undefined) continue;
    totals.pageViews += r.page_views;
    totals.bytes += r.bytes;
    totals.notFound += r.not_found;
    totals.bots += r.bots;
    statuses['1xx'] += r.status_1xx;
    statuses['2xx'] += r.status_2xx;
    statuses['3xx'] += r.status_3xx;
    statuses['4xx'] += r.status_4xx;
    statuses['5xx'] += r.status_5xx;
    sketchMerge(all, decodeSketch(r.sketch));
  }
  totals.visitors = sketchEstimate(all);
  const keys = await analyticsKeyRows(db.kysely, slug, from - (from % DAY_MS), to);
  const top = (kind: string) =>
    keys
      .filter((k) => k.kind === kind)
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1))
      .slice(0, TOP_ITEMS);
  return {
    slug,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    granularity,
    totals,
    series,
    topPaths: top('path').map((k) => ({ path: k.key, pageViews: k.count })),
    topReferrers: top('referrer').map((k) => ({ host: k.key, pageViews: k.count })),
    notFoundPaths: top('notfound').map((k) => ({ path: k.key, count: k.count })),
    topHosts: top('host').map((k) => ({ host: k.key, pageViews: k.count })),
  };
}

// ---- the owner's endpoint ----------------------------------------------------------------------------

/** Longest range a report covers, by granularity (hour rows exist for 7 days only). */
export const MAX_HOUR_RANGE_MS = HOURLY_KEEP_MS + DAY_MS;
export const MAX_DAY_RANGE_DAYS = 800;

export interface AnalyticsQuery {
  from?: string | undefined;
  to?: string | undefined;
  granularity?: string | undefined;
}

function instant(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms) || ms < 0 || ms > 8.64e15) {
    throw invalid(`${name} must be an ISO 8601 date or date-time (e.g. 2026-11-01T00:00:00Z)`);
  }
  return ms;
}

/** GET /api/v1/publish/:slug/analytics: the owner's report (default: the last 7 days, by day). */
/** What the owner's endpoint reads. */
export type AnalyticsReadDeps = Pick<AnalyticsDeps, 'db' | 'clock'>;

export async function siteAnalytics(
  deps: AnalyticsReadDeps,
  account: AccountRow,
  slug: string,
  query: AnalyticsQuery,
): Promise<AnalyticsReport> {
  await ownedSite(deps, account, slug);
  const now = deps.clock.now();
  const to = instant('to', query.to, now);
  const from = instant('from', query.from, to - 7 * DAY_MS);
  if (from >= to) throw invalid('from must be before to');
  const g = query.granularity ?? (to - from <= 2 * DAY_MS ? 'hour' : 'day');
  if (g !== 'hour' && g !== 'day') throw invalid('granularity must be hour or day');
  if (g === 'hour' && to - from > MAX_HOUR_RANGE_MS)
    throw invalid('granularity=hour covers at most 8 days (hourly counts are kept for 7 days)');
  if (g === 'day' && to - from > MAX_DAY_RANGE_DAYS * DAY_MS)
    throw invalid(`granularity=day covers at most ${MAX_DAY_RANGE_DAYS} days`);
  return analyticsReport(deps.db, slug, from, to, g);
}

/** Whether visits of the owner's site are counted (the dashboard's switch). */
export async function analyticsEnabled(
  deps: AnalyticsReadDeps,
  account: AccountRow,
  slug: string,
): Promise<boolean> {
  return (await ownedSite(deps, account, slug)).analytics_off === 0;
}

/** Visitors of the last 7 days of each site (the dashboard's site list): daily visitors added up. */
export function visitorsOfSites(deps: AnalyticsReadDeps, slugs: string[]): Promise<Map<string, number>> {
  const now = deps.clock.now();
  return recentVisitors(deps.db.kysely, slugs, now - (now % DAY_MS) - 6 * DAY_MS);
}
