// Leases held by the node's primary (WORKERS > 1 without Redis): the workers contend for one table, so the
// sweeper and certificate orders run in one worker at a time; a worker that dies gives its leases up.

import type { PrimaryChannel } from '../workers.js';
import { checkLeaseTtl, type Lease } from './types.js';

export class WorkerLease implements Lease {
  constructor(private readonly channel: PrimaryChannel) {}

  tryAcquire(name: string, ttlMs: number): Promise<boolean> {
    return this.channel.request<boolean>({ op: 'lease.acquire', name, ttlMs: checkLeaseTtl(ttlMs) });
  }

  async release(name: string): Promise<void> {
    await this.channel.request({ op: 'lease.release', name });
  }

  async close(): Promise<void> {
    await this.channel.request({ op: 'lease.close' }).catch(() => {
      // The primary is gone: it held the table, and the leases went with it.
    });
  }
}
