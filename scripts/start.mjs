// `npm start`: runs the compiled service from dist/. In a development checkout (TypeScript installed)
// it first builds when dist/ is missing or older than src/, so `npm ci && npm start` just works.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const entry = 'dist/server.js';

function newestMtime(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestMtime(p) : s.mtimeMs);
  }
  return newest;
}

function typescriptAvailable() {
  try {
    createRequire(import.meta.url).resolve('typescript');
    return true;
  } catch {
    return false;
  }
}

const stale = !existsSync(entry) || (existsSync('src') && newestMtime('src') > statSync(entry).mtimeMs);
if (stale) {
  if (!typescriptAvailable()) {
    if (!existsSync(entry)) {
      console.error(
        'slipway: dist/ is missing and TypeScript is not installed; run `npm ci && npm run build` first',
      );
      process.exit(1);
    }
  } else {
    const res = spawnSync(
      process.execPath,
      ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
      {
        stdio: 'inherit',
      },
    );
    if (res.status !== 0) process.exit(res.status ?? 1);
  }
}
// Under `npm start` the service runs as npm -> sh -> node, and a SIGTERM to npm (what a process manager or
// `kill <npm pid>` sends) stops npm and sh but reached no further: the service lived on as an orphan
// holding the port. When the process that started it goes away, it stops as on SIGTERM (drain, close).
if (process.env.npm_lifecycle_event === 'start') {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.kill(process.pid, 'SIGTERM');
  }, 500).unref();
}
await import(`../${entry}`);
