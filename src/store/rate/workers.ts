// Rate counters held by the node's primary (WORKERS > 1 without Redis): every worker's increment is one
// request, answered in order from one MemoryRateStore, so a window admits exactly its limit across workers.

import type { PrimaryChannel } from '../workers.js';
import type { RateStore } from './types.js';

export class WorkerRateStore implements RateStore {
  constructor(private readonly channel: PrimaryChannel) {}

  increment(key: string, expiresAtMs: number): Promise<number> {
    return this.channel.request<number>({ op: 'rate.increment', key, expiresAtMs });
  }

  peek(key: string): Promise<number> {
    return this.channel.request<number>({ op: 'rate.peek', key });
  }

  async close(): Promise<void> {}
}
