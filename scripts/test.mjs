// Runs the test suite through tsx with node's test runner: every test file on the embedded backend
// set, then the integration tests again on the scale-out set (PostgreSQL + S3 via s3rver + Redis).
// Usage: npm test [-- <path filters>...]; SLIPWAY_TEST_BACKENDS=embedded limits the run to one set.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...collect(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/**
 * Integration tests that depend on the backend set (the rest are pure or pick their own backends). The
 * CLI's tests (test/cli) run on the embedded set only: the command is a client of the API, whose
 * behaviour on each backend set test/http and test/client already hold, and running its subprocesses a
 * second time cost a third of the scale-out run.
 */
const INTEGRATION_DIRS = ['http', 'serve', 'client', 'tls'].map((d) => join('test', d));
const isIntegration = (f) => INTEGRATION_DIRS.some((d) => f.startsWith(`${d}${sep}`));
/** Tests that only make sense on the scale-out set (several nodes, outages of its servers, round trips to them). */
const scaleoutOnly = (f) => f.includes('two-node') || f.includes('outage') || f.includes('round-trips');

const filters = process.argv.slice(2);
const all = collect('test').filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
const backends = (process.env.SLIPWAY_TEST_BACKENDS ?? 'embedded,scaleout').split(',');

function run(label, files, env) {
  if (files.length === 0) return 0;
  console.log(`\n=== ${label}: ${files.length} test files ===`);
  const args = ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=180000', ...files];
  const res = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  return res.status ?? 1;
}

let failed = 0;
let ran = 0;
if (backends.includes('embedded')) {
  const files = all.filter((f) => !scaleoutOnly(f));
  ran += files.length;
  failed |= run('embedded backend set (SQLite, disk, in-process)', files, {
    SLIPWAY_TEST_BACKEND: 'embedded',
  });
}
// The serving tests once more with site requests over TLS (test/helpers/app.ts TEST_TRANSPORT): the
// fast path, memo, password gate, ranges, 304 and the malformed-request corpus on TLS sockets.
if (backends.includes('embedded')) {
  const files = all.filter((f) => f.startsWith(`${join('test', 'serve')}${sep}`));
  ran += files.length;
  failed |= run('site serving over TLS (embedded, SLIPWAY_TEST_TRANSPORT=tls)', files, {
    SLIPWAY_TEST_BACKEND: 'embedded',
    SLIPWAY_TEST_TRANSPORT: 'tls',
  });
}
if (backends.includes('scaleout')) {
  const files = all.filter((f) => isIntegration(f) || scaleoutOnly(f));
  if (files.length > 0) {
    const services = spawnSync('bash', ['scripts/ensure-services.sh'], { stdio: 'inherit' });
    if (services.status !== 0) {
      console.error('scale-out backends unavailable; set SLIPWAY_TEST_BACKENDS=embedded to run without them');
      process.exit(1);
    }
  }
  ran += files.length;
  failed |= run('scale-out backend set (PostgreSQL, S3/s3rver, Redis)', files, {
    SLIPWAY_TEST_BACKEND: 'scaleout',
  });
}
if (ran === 0) {
  console.error('no test files matched');
  process.exit(1);
}
process.exit(failed ? 1 : 0);
