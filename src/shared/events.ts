// Change events that invalidate the serving caches: published on finalize, restore, delete, metadata,
// expiry, domain and handle changes. In-process now; a Redis pub/sub bus fans them out across nodes.

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
  publish(change: SiteChange): void;
  /** Returns an unsubscribe function. Listeners run synchronously for local changes. */
  subscribe(listener: (change: SiteChange) => void): () => void;
  close(): Promise<void>;
}

export class LocalChangeBus implements ChangeBus {
  private readonly listeners = new Set<(change: SiteChange) => void>();

  publish(change: SiteChange): void {
    for (const listener of this.listeners) listener(change);
  }

  subscribe(listener: (change: SiteChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
