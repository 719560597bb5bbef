// WORKERS > 1: this process forks the workers that serve (each the whole service: API, pages, sites, TLS,
// on the same ports through node:cluster) and holds what one process used to keep in memory for the node:
// the rate counters, the leases and the fan-out of change events, answered over IPC (src/store/workers.ts).
// It prepares the node before the first fork (DATA_DIR, the secrets key, migrations: once, not raced),
// replaces a worker that dies, and on SIGTERM stops them all gracefully.

import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Config } from '../config.js';
import { systemClock } from '../shared/clock.js';
import { createLogger } from '../shared/logging.js';
import { MemoryLease, type MemoryLeaseTable } from '../store/lease/memory.js';
import { MemoryRateStore } from '../store/rate/memory.js';
import {
  isOurs,
  type NodeShared,
  TAG,
  type ToPrimary,
  type ToWorker,
  type WorkerRequest,
} from '../store/workers.js';

/** A worker that dies within this long of its start counts as crashing: the next start waits longer. */
const CRASH_WINDOW_MS = 10_000;
const RESTART_DELAY_MAX_MS = 30_000;
/** One worker's registry as getMetricsAsJSON gives it. */
type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];
/** A worker that has not sent its metrics by then is left out of that scrape. */
const COLLECT_TIMEOUT_MS = 3_000;
/** Graceful stop of the workers (each has 10 s of its own: src/server.ts), then SIGKILL. */
const STOP_DEADLINE_MS = 12_000;

export interface PrimaryOptions {
  /** Work that must happen once per node before any worker starts (DATA_DIR, secrets key, migrations). */
  prepare(): Promise<void>;
}

/** The node's shared state, answering the workers' requests one at a time (so increments are exact). */
class Hub {
  private readonly rate = new MemoryRateStore(systemClock);
  private readonly leaseTable: MemoryLeaseTable = new Map();
  private readonly leases = new Map<number, MemoryLease>();
  /** Changes being applied: which workers have yet to confirm, and whom to answer then. */
  private readonly changes = new Map<number, { waiting: Set<number>; done(): void }>();
  private nextChangeId = 1;
  /**
   * Workers whose channel is open (they asked for `node`): only they get changes. One just forked has no
   * listener yet and would never confirm; it has cached nothing either, so it misses nothing.
   */
  private readonly joined = new Set<number>();
  /** Metrics collections under way: the workers' answers so far, and whom to answer when all are in. */
  private readonly collections = new Map<
    number,
    { waiting: Set<number>; got: WorkerMetrics[]; done(): void }
  >();
  private nextCollectionId = 1;
  readonly shared: NodeShared = {
    ticketKeys: randomBytes(48).toString('hex'),
    nodeId: randomBytes(8).toString('hex'),
  };

  constructor(private readonly workers: () => Worker[]) {}

  async handle(from: Worker, request: WorkerRequest): Promise<unknown> {
    switch (request.op) {
      case 'rate.increment':
        return this.rate.increment(request.key, request.expiresAtMs);
      case 'rate.peek':
        return this.rate.peek(request.key);
      case 'lease.acquire':
        return this.leaseOf(from.id).tryAcquire(request.name, request.ttlMs);
      case 'lease.release':
        return this.leaseOf(from.id).release(request.name);
      case 'lease.close':
        return this.dropLeases(from.id);
      case 'node':
        this.joined.add(from.id);
        return this.shared;
      case 'change':
        return this.fanOut(from, request);
      case 'metrics':
        return this.collectMetrics();
    }
  }

  /** A worker's metrics for collection `id`. */
  collected(worker: Worker, id: number, metrics: unknown[]): void {
    const collection = this.collections.get(id);
    if (!collection?.waiting.delete(worker.id)) return;
    collection.got.push(metrics as WorkerMetrics);
    if (collection.waiting.size === 0) collection.done();
  }

  /** Every worker's metrics, added up into the text a scrape gets. */
  private async collectMetrics(): Promise<string> {
    const workers = this.workers().filter((w) => this.joined.has(w.id) && w.isConnected());
    const id = this.nextCollectionId++;
    const got: WorkerMetrics[] = [];
    await new Promise<void>((done) => {
      const timer = setTimeout(done, COLLECT_TIMEOUT_MS);
      this.collections.set(id, {
        waiting: new Set(workers.map((w) => w.id)),
        got,
        done: () => {
          clearTimeout(timer);
          done();
        },
      });
      const message: ToWorker = { tag: TAG, t: 'collect', id };
      for (const worker of workers) worker.send(message);
    });
    this.collections.delete(id);
    return AggregatorRegistry.aggregate(got).metrics();
  }

  /** A worker confirmed change `id`. */
  applied(worker: Worker, id: number): void {
    const change = this.changes.get(id);
    if (!change) return;
    change.waiting.delete(worker.id);
    if (change.waiting.size === 0) {
      this.changes.delete(id);
      change.done();
    }
  }

  /** A worker is gone: it confirms nothing more, and its leases are free. */
  async gone(workerId: number): Promise<void> {
    this.joined.delete(workerId);
    for (const [id, change] of this.changes) {
      change.waiting.delete(workerId);
      if (change.waiting.size === 0) {
        this.changes.delete(id);
        change.done();
      }
    }
    for (const collection of this.collections.values()) {
      if (collection.waiting.delete(workerId) && collection.waiting.size === 0) collection.done();
    }
    await this.dropLeases(workerId);
  }

  private fanOut(from: Worker, request: Extract<WorkerRequest, { op: 'change' }>): Promise<void> {
    const others = this.workers().filter((w) => w.id !== from.id && this.joined.has(w.id) && w.isConnected());
    if (others.length === 0) return Promise.resolve();
    const id = this.nextChangeId++;
    return new Promise<void>((done) => {
      this.changes.set(id, { waiting: new Set(others.map((w) => w.id)), done });
      const message: ToWorker = { tag: TAG, t: 'change', id, change: request.change };
      for (const worker of others) worker.send(message);
    });
  }

  private leaseOf(workerId: number): MemoryLease {
    let lease = this.leases.get(workerId);
    if (!lease) {
      lease = new MemoryLease({ clock: systemClock, holderId: `worker-${workerId}`, table: this.leaseTable });
      this.leases.set(workerId, lease);
    }
    return lease;
  }

  private async dropLeases(workerId: number): Promise<void> {
    await this.leases.get(workerId)?.close();
    this.leases.delete(workerId);
  }
}

/** Prepares the node, forks `config.workers` workers and supervises them until SIGTERM/SIGINT. */
export async function runPrimary(config: Config, options: PrimaryOptions): Promise<void> {
  const logger = createLogger(config.logLevel);
  await options.prepare();

  const workers = new Map<number, Worker>();
  const hub = new Hub(() => [...workers.values()]);
  let stopping = false;
  let starting = true;
  let crashes = 0;

  const fork = () => {
    const worker = cluster.fork();
    const startedAt = Date.now();
    workers.set(worker.id, worker);
    worker.on('message', (message: unknown) => onMessage(worker, message, { hub, logger, ready }));
    worker.on('exit', (code, signal) => {
      workers.delete(worker.id);
      void hub.gone(worker.id);
      if (stopping) return;
      if (starting) {
        // A worker that cannot start (a port in use, a database it cannot open) will not start the next
        // time either: stop the node with the worker's own error above this line.
        logger.fatal({ code, signal }, 'a worker failed to start; stopping');
        void stop(1);
        return;
      }
      crashes = Date.now() - startedAt < CRASH_WINDOW_MS ? crashes + 1 : 0;
      const delay = crashes === 0 ? 0 : Math.min(RESTART_DELAY_MAX_MS, 1000 * 2 ** (crashes - 1));
      logger.error(
        { pid: worker.process.pid, code, signal, restartInMs: delay },
        'worker exited; starting another',
      );
      setTimeout(() => {
        if (!stopping) fork();
      }, delay);
    });
  };

  let readyCount = 0;
  function ready(worker: Worker) {
    if (!starting) {
      logger.info({ pid: worker.process.pid }, 'worker ready');
      return;
    }
    if (++readyCount < config.workers) return;
    starting = false;
    logger.info(
      {
        baseUrl: config.baseUrl,
        siteDomain: config.siteDomain,
        workers: config.workers,
        scheduling: policyName(),
      },
      'slipway ready',
    );
  }

  async function stop(exitCode: number) {
    if (stopping) return;
    stopping = true;
    const all = [...workers.values()];
    const exited = Promise.all(
      all.map((w) => new Promise((r) => (w.isDead() ? r(null) : w.once('exit', r)))),
    );
    for (const worker of all) worker.process.kill('SIGTERM');
    const deadline = setTimeout(() => {
      for (const worker of all) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, STOP_DEADLINE_MS);
    await exited;
    clearTimeout(deadline);
    process.exit(exitCode);
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      try {
        logger.info({ signal }, 'shutting down the workers');
      } catch {
        // stdout gone: stop all the same.
      }
      void stop(0);
    });
  }
  for (let i = 0; i < config.workers; i++) fork();
}

function onMessage(
  worker: Worker,
  message: unknown,
  ctx: { hub: Hub; logger: Logger; ready(worker: Worker): void },
): void {
  if (!isOurs(message)) return;
  const m = message as ToPrimary;
  if (m.t === 'ready') ctx.ready(worker);
  else if (m.t === 'applied') ctx.hub.applied(worker, m.id);
  else if (m.t === 'collected') ctx.hub.collected(worker, m.id, m.metrics);
  else
    ctx.hub.handle(worker, m.request).then(
      (value) => reply(worker, { tag: TAG, t: 'reply', id: m.id, ok: true, value: value ?? null }),
      (err: unknown) => {
        ctx.logger.error({ err, op: m.request.op }, 'worker request failed');
        reply(worker, { tag: TAG, t: 'reply', id: m.id, ok: false, error: String(err) });
      },
    );
}

function reply(worker: Worker, message: ToWorker): void {
  if (worker.isConnected()) worker.send(message);
}

const policyName = () => (cluster.schedulingPolicy === cluster.SCHED_RR ? 'rr' : 'none');
