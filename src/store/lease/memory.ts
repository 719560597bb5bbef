// In-process leases: a single process always gets its lease, but holders sharing a table still contend.

import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../../shared/clock.js';
import { checkLeaseTtl, type Lease } from './types.js';

/** Who holds each lease name. Share one table between MemoryLease instances to model several holders. */
export type MemoryLeaseTable = Map<string, { holderId: string; expiresAtMs: number }>;

export interface MemoryLeaseOptions {
  clock?: Clock;
  holderId?: string;
  /** Default: a table of its own, so this holder never contends with anyone. */
  table?: MemoryLeaseTable;
}

export class MemoryLease implements Lease {
  readonly holderId: string;
  private readonly clock: Clock;
  private readonly table: MemoryLeaseTable;

  constructor(options: MemoryLeaseOptions = {}) {
    this.holderId = options.holderId ?? randomUUID();
    this.clock = options.clock ?? systemClock;
    this.table = options.table ?? new Map();
  }

  async tryAcquire(name: string, ttlMs: number): Promise<boolean> {
    const ttl = checkLeaseTtl(ttlMs);
    const now = this.clock.now();
    const entry = this.table.get(name);
    if (entry !== undefined && entry.expiresAtMs > now && entry.holderId !== this.holderId) return false;
    this.table.set(name, { holderId: this.holderId, expiresAtMs: now + ttl });
    return true;
  }

  async release(name: string): Promise<void> {
    if (this.table.get(name)?.holderId === this.holderId) this.table.delete(name);
  }

  async close(): Promise<void> {
    for (const [name, entry] of this.table) if (entry.holderId === this.holderId) this.table.delete(name);
  }
}
