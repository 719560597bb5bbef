// How far V8 lets the heap grow past what is live before a full collection. Its default factor is chosen
// per collection from its measured speed, between 1.1x and 4x; under the site server's steady load it
// settles near 2x, so a node serving 100,000 sites at random held 470-510 MB of heap for 250-350 MB in use
// (issue 23, docs/decisions.md): the serving budget (SERVE_CACHE_MB) bounded what was live, not what the
// process held. A fixed 20 % keeps the heap near what is live (RSS 897 -> 609 MB in that run), for more
// frequent (concurrent) marking: the same spread ran ~35 % slower, hot sites did not. `node
// --heap-growing-percent=0` gives V8's own factor back (docs/deploy.md).

import { setFlagsFromString } from 'node:v8';

/** The heap may grow by this share of what a full collection left live before the next one. */
export const HEAP_GROWING_PERCENT = 20;

/**
 * Sets V8's heap growing factor for this process, unless it was started with one of its own (an
 * operator's `node --heap-growing-percent=N` stands). Returns the flag it set, or null.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): string | null {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return null;
  const flag = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
  setFlagsFromString(flag);
  return flag;
}
