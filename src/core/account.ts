// The Account resource (spec "Account"): plan, usage against the plan's limits, human byte strings.

import type { Db } from '../store/db/db.js';
import { type AccountRow, accountUsage } from '../store/db/tables/account.js';
import { formatBytes } from './format.js';
import { type PlanOverrides, planLimits } from './plans.js';

export interface AccountView {
  email: string;
  plan: 'free' | 'hobby';
  handle: string | null;
  usage: {
    sites: { used: number; limit: number | 'unlimited' };
    storage: { used: string; usedBytes: number; limit: string; limitBytes: number };
  };
  limits: { maxFileSize: string; maxFileSizeBytes: number; maxSites: number | null; maxStorage: string };
  createdAt: string;
}

/** What the account view reads: usage counters and the operator's plan overrides. */
export interface AccountDeps {
  db: Db;
  planOverrides: PlanOverrides;
}

export async function describeAccount(
  db: Db,
  account: AccountRow,
  overrides: PlanOverrides,
): Promise<AccountView> {
  const limits = planLimits(account.plan, overrides);
  const usage = await accountUsage(db.kysely, account.id);
  return {
    email: account.email,
    plan: account.plan,
    handle: account.handle,
    usage: {
      sites: { used: usage.sites, limit: limits.maxSites ?? 'unlimited' },
      storage: {
        used: formatBytes(usage.storageBytes),
        usedBytes: usage.storageBytes,
        limit: formatBytes(limits.maxStorageBytes),
        limitBytes: limits.maxStorageBytes,
      },
    },
    limits: {
      maxFileSize: formatBytes(limits.maxFileSizeBytes),
      maxFileSizeBytes: limits.maxFileSizeBytes,
      maxSites: limits.maxSites,
      maxStorage: formatBytes(limits.maxStorageBytes),
    },
    createdAt: new Date(account.created_at).toISOString(),
  };
}
