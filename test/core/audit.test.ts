// The audit log's order (src/core/audit.ts): entries are listed newest first by id, and the id is also the
// page cursor, so entries recorded in the same millisecond (one change's several entries, which share
// the clock reading of their request: an archive deploy's site.create and version.finalize) must keep
// the order they were recorded in. CI once saw version.finalize listed before site.create.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listAudit, recordAudit } from '../../src/core/audit.js';
import { Db } from '../../src/store/db/db.js';
import type { AccountRow } from '../../src/store/db/tables/account.js';

const ACCOUNT = { id: 'acc_audit_order' } as AccountRow;

test('entries recorded at the same time are listed in the order they were recorded, newest first', async () => {
  const db = Db.sqlite(':memory:');
  try {
    await db.migrate();
    const at = Date.UTC(2026, 11, 7, 8, 0, 0);
    const actions = Array.from({ length: 200 }, (_, i) => `step.${String(i).padStart(3, '0')}`);
    // Two transactions, as two requests in the same millisecond of one process would record them.
    for (const part of [actions.slice(0, 100), actions.slice(100)]) {
      await db.transaction(async (trx) => {
        for (const action of part) await recordAudit(trx, { accountId: ACCOUNT.id, action, target: 't', at });
      });
    }
    const listed: string[] = [];
    for (let before: string | undefined; ; ) {
      const { entries } = await listAudit(db, ACCOUNT, { limit: 30, ...(before ? { before } : {}) });
      if (entries.length === 0) break;
      listed.push(...entries.map((e) => e.action));
      before = entries.at(-1)!.id;
    }
    assert.deepEqual(listed, [...actions].reverse(), 'newest first, every entry once across pages');
  } finally {
    await db.close();
  }
});
