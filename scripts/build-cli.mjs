// `npm run build`'s second step: the `slipway` command as one ES module, dist/bundle/slipway.js, with its
// lazily loaded parts (publishing, archives, MCP, backups, the progress bar) in chunks beside it. One
// file instead of ~35 modules and commander's CommonJS saves ~30 ms of every command's start: a
// one-file republish of 1000 files went from 243 to ~210 ms (docs/decisions.md, issue 23).
// bin/slipway.mjs runs it when it is newer than src/. Built from the TypeScript sources by esbuild, which
// only strips types: `npm run typecheck` checks them (the build's tsc step emits the service only).
// Usage: node scripts/build-cli.mjs [<dist folder>]   (default dist/)

import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles src/cli/main.ts into `<dist>/bundle/`; the folder is replaced (chunk names carry hashes). */
export async function bundleCli(dist = join(ROOT, 'dist')) {
  const outdir = join(dist, 'bundle');
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [{ in: join(ROOT, 'src', 'cli', 'main.ts'), out: 'slipway' }],
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    // Dynamic import()s stay separate files, loaded when a command needs them.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: join(ROOT, 'tsconfig.json'),
    // A native addon: loaded from node_modules at run time (admin backup only).
    external: ['better-sqlite3'],
    // Bundled CommonJS packages (commander, ignore) require Node's built-ins: give each chunk a require.
    banner: {
      js: "import { createRequire as slipwayCreateRequire } from 'node:module'; const require = slipwayCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return join(outdir, 'slipway.js');
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await bundleCli(process.argv[2] ? resolve(process.argv[2]) : undefined);
}
