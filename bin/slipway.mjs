#!/usr/bin/env node
// The `slipway` command (package.json "bin"), for `npm link` or `npm install -g <checkout>`: the built
// CLI (dist/bundle/, from `npm run build`) when it is at least as new as the source, else the source itself
// through tsx (a checkout after `npm ci`), so a fresh or freshly pulled checkout needs no build step.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const built = new URL('dist/bundle/slipway.js', root);
const source = new URL('src/cli/main.ts', root);

/** The newest modification time under `dir` (0 when it is missing). */
function newest(dir) {
  let time = 0;
  for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
    const path = `${dir}/${entry.name}`;
    time = Math.max(time, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return time;
}

const builtPath = fileURLToPath(built);
const fresh =
  existsSync(builtPath) &&
  (!existsSync(fileURLToPath(source)) ||
    statSync(builtPath).mtimeMs >= newest(fileURLToPath(new URL('src', root))));

if (fresh) {
  await import(built.href);
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(
      'error: the slipway CLI is not built and tsx is not installed; run `npm ci` (or `npm run build`) in the checkout\n',
    );
    process.exit(1);
  }
  register();
  await import(source.href);
}
