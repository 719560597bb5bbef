// Change events that invalidate the serving caches: published on finalize, restore, delete, metadata,
// expiry, domain and handle changes. In-process here; store/events/ fans them out across a node's workers and, over Redis, across nodes.

export type SiteChange =
  /** Everything about this slug may have changed (version, metadata, password, expiry, deletion). */
  | { kind: 'site'; slug: string }
  /** A host mapping (handle, custom domain, link) changed. */
  | { kind: 'host'; host: string }
  /** The account's plan changed: the handle and domains it may serve change with it. */
  | { kind: 'account'; accountId: string }
  /** Drop every cache (e.g. after a reconnect that may have missed events). */
  | { kind: 'all' };

export interface ChangeBus {
  /**
   * Runs this process's listeners before it returns (a listener's error is thrown from the call) and
   * resolves once every process of this node applied the change (WORKERS > 1: store/events/workers.ts).
   * Other nodes get it on their own time. Callers await it before they answer.
   */
  publish(change: SiteChange): Promise<void>;
  /** Returns an unsubscribe function. Listeners run synchronously for local changes. */
  subscribe(listener: (change: SiteChange) => void): () => void;
  close(): Promise<void>;
}

export class LocalChangeBus implements ChangeBus {
  private readonly listeners = new Set<(change: SiteChange) => void>();

  publish(change: SiteChange): Promise<void> {
    for (const listener of this.listeners) listener(change);
    return Promise.resolve();
  }

  subscribe(listener: (change: SiteChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
