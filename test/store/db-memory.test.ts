// `Db.sqlite(':memory:')` is SQLite's in-memory database: it must not create a file named ':memory:' in
// the working directory (a test run left one there and it was committed to the checkout; a new user's
// clean clone showed it at the top of `ls`).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Db } from '../../src/store/db/db.js';

test("Db.sqlite(':memory:') opens an in-memory database and writes no file", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-memdb-'));
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const db = Db.sqlite(':memory:');
    try {
      assert.equal(existsSync(join(dir, ':memory:')), false);
    } finally {
      await db.close();
    }
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
});
