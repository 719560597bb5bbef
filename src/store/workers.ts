// The IPC between a node's primary and its worker processes (WORKERS > 1, src/workers/primary.ts): what
// one process per node used to hold in memory lives in the primary, and each worker reaches it here. The
// rate counters, the leases and the fan-out of change events (rate/workers.ts, lease/workers.ts,
// events/workers.ts) are requests over this channel; the primary answers them one at a time, in order, so
// an increment is as exact across workers as it was in one process.

import type { SiteChange } from '../shared/events.js';

/** A worker's request to the primary. */
export type WorkerRequest =
  | { op: 'rate.increment'; key: string; expiresAtMs: number }
  | { op: 'rate.peek'; key: string }
  | { op: 'lease.acquire'; name: string; ttlMs: number }
  | { op: 'lease.release'; name: string }
  | { op: 'lease.close' }
  /** Apply `change` in every other worker; answered once they all did (or exited). */
  | { op: 'change'; change: SiteChange }
  /** What every worker of the node shares: TLS session-ticket keys, the node's id on the change bus. */
  | { op: 'node' }
  /** The node's Prometheus metrics: every worker's, added up (prom-client's AggregatorRegistry). */
  | { op: 'metrics' };

export interface NodeShared {
  /** 48 bytes (hex) for tls.Server#setTicketKeys: a ticket one worker issued resumes on any other. */
  ticketKeys: string;
  /** The node's id on the cross-node change bus: a worker skips what its own node published. */
  nodeId: string;
}

/** Every message between the processes is tagged, so nothing else on the channel is mistaken for ours. */
export const TAG = 'slipway';

export type ToPrimary =
  | { tag: typeof TAG; t: 'request'; id: number; request: WorkerRequest }
  /** The worker applied change `id` that the primary pushed. */
  | { tag: typeof TAG; t: 'applied'; id: number }
  /** The worker listens on its ports. */
  | { tag: typeof TAG; t: 'ready' }
  /** The worker's metrics for collection `id` (prom-client's getMetricsAsJSON). */
  | { tag: typeof TAG; t: 'collected'; id: number; metrics: unknown[] };

export type ToWorker =
  | { tag: typeof TAG; t: 'reply'; id: number; ok: true; value: unknown }
  | { tag: typeof TAG; t: 'reply'; id: number; ok: false; error: string }
  /** A change another worker published: apply it, then answer `applied`. */
  | { tag: typeof TAG; t: 'change'; id: number; change: SiteChange }
  /** The primary collects the node's metrics: answer `collected`. */
  | { tag: typeof TAG; t: 'collect'; id: number };

export const isOurs = (message: unknown): message is { tag: typeof TAG; t: string } =>
  typeof message === 'object' && message !== null && (message as { tag?: unknown }).tag === TAG;

/** How long a request waits for the primary (it answers from memory in microseconds; this is a dead one). */
const REQUEST_TIMEOUT_MS = 10_000;

/** The worker's end of the channel: requests with replies, and the changes other workers publish. */
export class PrimaryChannel {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }
  >();
  private changeListener: ((change: SiteChange) => void) | undefined;
  private collector: (() => Promise<unknown[]>) | undefined;

  constructor(private readonly proc: NodeJS.Process = process) {
    if (!proc.send) throw new Error('PrimaryChannel: this process has no IPC channel (not a worker)');
    proc.on('message', (message: unknown) => this.onMessage(message));
  }

  request<T>(request: WorkerRequest): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the node's primary did not answer ${request.op} within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.send({ tag: TAG, t: 'request', id, request });
    });
  }

  /** Runs `listener` for each change another worker of this node published (one listener). */
  onChange(listener: (change: SiteChange) => void): void {
    this.changeListener = listener;
  }

  /** Answers the primary's metrics collections with `collect()` (this worker's metrics as JSON). */
  onCollect(collect: () => Promise<unknown[]>): void {
    this.collector = collect;
  }

  ready(): void {
    this.send({ tag: TAG, t: 'ready' });
  }

  private send(message: ToPrimary): void {
    // A worker whose primary is gone exits on 'disconnect' (src/server.ts); until then, sends are dropped.
    if (this.proc.connected) this.proc.send?.(message);
  }

  private onMessage(message: unknown): void {
    if (!isOurs(message)) return;
    const m = message as ToWorker;
    if (m.t === 'collect') {
      const collect = this.collector ?? (async () => []);
      collect().then(
        (metrics) => this.send({ tag: TAG, t: 'collected', id: m.id, metrics }),
        () => this.send({ tag: TAG, t: 'collected', id: m.id, metrics: [] }),
      );
      return;
    }
    if (m.t === 'change') {
      try {
        this.changeListener?.(m.change);
      } finally {
        this.send({ tag: TAG, t: 'applied', id: m.id });
      }
      return;
    }
    const waiting = this.pending.get(m.id);
    if (!waiting) return;
    this.pending.delete(m.id);
    clearTimeout(waiting.timer);
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(new Error(m.error));
  }
}
