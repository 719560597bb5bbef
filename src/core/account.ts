// The Account resource (spec "Account"): plan, usage against the plan's limits, human byte strings.

import type { Account } from '../api/account.js';
import type { Db } from '../store/db/db.js';
import { type AccountRow, accountUsage } from '../store/db/tables/account.js';
import { formatBytes } from './format.js';
import { type PlanOverrides, planLimits } from './plans.js';

/** What the account view reads: usage counters and the operator's plan overrides. */
export interface AccountDeps {
  db: Db;
  planOverrides: PlanOverrides;
}

export async function describeAccount(
  db: Db,
  account: AccountRow,
  overrides: PlanOverrides,
): Promise<Account> {
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
