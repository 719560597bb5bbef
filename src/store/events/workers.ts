// Change events across a node's workers (WORKERS > 1): a change runs this worker's listeners at once, goes
// to the other nodes over `nodes` (Redis, when configured), and through the primary to every other worker
// of the node; publish resolves once they all applied it, so the API answers a finalize, a delete or a
// password change only when no worker of the node can serve what it replaced.

import type { Logger } from 'pino';
import { type ChangeBus, LocalChangeBus, type SiteChange } from '../../shared/events.js';
import type { PrimaryChannel } from '../workers.js';

/** The cross-node bus as this bus uses it: send to the other nodes only, and hear from them. */
export interface NodesBus {
  send(change: SiteChange): Promise<void>;
  subscribe(listener: (change: SiteChange) => void): () => void;
  close(): Promise<void>;
}

export class WorkerChangeBus implements ChangeBus {
  private readonly local = new LocalChangeBus();

  constructor(
    private readonly channel: PrimaryChannel,
    private readonly nodes: NodesBus | undefined,
    private readonly logger: Logger,
  ) {
    channel.onChange((change) => this.dispatch(change));
    nodes?.subscribe((change) => this.dispatch(change));
  }

  async publish(change: SiteChange): Promise<void> {
    const sent = this.nodes?.send(change);
    const applied = this.channel.request({ op: 'change', change });
    await this.local.publish(change);
    try {
      await applied;
    } catch (err) {
      // The write it follows has committed; a primary that does not answer is going away with its workers.
      this.logger.error({ err, change }, 'change bus: the other workers did not confirm a change');
    }
    await sent;
  }

  subscribe(listener: (change: SiteChange) => void): () => void {
    return this.local.subscribe(listener);
  }

  async close(): Promise<void> {
    await Promise.all([this.local.close(), this.nodes?.close()]);
  }

  private dispatch(change: SiteChange): void {
    try {
      void this.local.publish(change);
    } catch (err) {
      this.logger.error({ err, change }, 'change bus: listener failed');
    }
  }
}
