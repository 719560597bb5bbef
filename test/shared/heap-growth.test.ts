import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { boundHeapGrowth } from '../../src/shared/heap-growth.js';

// ~120 MB of small objects live, replaced oldest first four times over (as a cache under a spread of
// sites is): the heap V8 holds for it, with and without the process's bound.
const CHURN = `
const N = 600_000, live = new Array(N);
let most = 0;
for (let i = 0; i < N * 4; i++) {
  live[i % N] = { a: i, b: 'k' + i, c: new Array(8).fill(i), d: null };
  if (i % 50_000 === 0) most = Math.max(most, process.memoryUsage().heapTotal);
}
process.stdout.write(String(Math.round(most / 1048576)));
`;

function heapHeldMb(bound: boolean, execArgv: string[] = []): number {
  const setup = bound
    ? "import { boundHeapGrowth } from './src/shared/heap-growth.ts'; boundHeapGrowth();"
    : '';
  const res = spawnSync(
    process.execPath,
    [...execArgv, '--import', 'tsx', '--input-type=module', '-e', setup + CHURN],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(res.status, 0, res.stderr);
  return Number(res.stdout);
}

describe('the heap growth bound (server.ts sets it at start)', () => {
  test('a churning cache of ~120 MB holds under twice that in heap with the bound (over 3x without)', () => {
    const bounded = heapHeldMb(true);
    const unbounded = heapHeldMb(false);
    // Measured: 188-191 MB bounded, 428-446 MB with V8's own factor.
    assert.ok(bounded < 260, `bounded: ${bounded} MB of heap`);
    assert.ok(unbounded > bounded * 1.5, `V8's own factor: ${unbounded} MB, bounded ${bounded} MB`);
  });

  test("an operator's own --heap-growing-percent stands", () => {
    assert.equal(boundHeapGrowth(['--heap-growing-percent=60']), null);
    assert.equal(boundHeapGrowth(['--heap_growing_percent=60']), null);
    // Started with 300 % (as an operator may), the process keeps it: the heap grows as V8's default does.
    assert.ok(heapHeldMb(true, ['--heap-growing-percent=300']) > 300);
  });
});
