// Summarises a V8 CPU profile (node --cpu-prof) of the service: self time by function and by file, and
// inclusive time of chosen frames, so the bench can name the hot path's top costs without a GUI.

import { readFile } from 'node:fs/promises';
import { REPO_ROOT } from './service.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  idleMs: number;
  /** Self time by function, busiest first. */
  functions: Array<{ name: string; where: string; selfMs: number; pct: number }>;
  /** Self time by source file (or `(native)`), busiest first. */
  files: Array<{ where: string; selfMs: number; pct: number }>;
  /** Inclusive time of frames whose name matches (e.g. the site server's handle). */
  inclusive: Array<{ name: string; where: string; totalMs: number; pct: number }>;
}

const shortUrl = (url: string) =>
  url === ''
    ? '(native)'
    : url
        .replace(/^file:\/\//, '')
        .replace(`${REPO_ROOT}/`, '')
        .replace(/^.*node_modules\//, 'node_modules/');

export async function summariseProfile(
  path: string,
  top = 25,
  inclusiveOf: RegExp[] = [],
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  let totalMs = 0;
  let idleMs = 0;
  const fn = new Map<string, { name: string; where: string; selfMs: number }>();
  const files = new Map<string, number>();
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    totalMs += ms;
    if (functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    const where = url === '' ? '(native)' : `${shortUrl(url)}:${lineNumber + 1}`;
    const name = functionName || '(anonymous)';
    const key = `${name}@${where}`;
    const entry = fn.get(key) ?? { name, where, selfMs: 0 };
    entry.selfMs += ms;
    fn.set(key, entry);
    files.set(shortUrl(url), (files.get(shortUrl(url)) ?? 0) + ms);
  }
  const busy = totalMs - idleMs;
  const pct = (ms: number) => (busy > 0 ? (ms / busy) * 100 : 0);

  // Inclusive time: a node's self time plus its subtree's, counted once per matching frame on a path.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, { name: string; where: string; totalMs: number }>();
  for (const [id, ms] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur)!.callFrame;
      if (!inclusiveOf.some((re) => re.test(functionName))) continue;
      const where = `${shortUrl(url)}:${lineNumber + 1}`;
      const key = `${functionName}@${where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = inclusive.get(key) ?? { name: functionName, where, totalMs: 0 };
      entry.totalMs += ms;
      inclusive.set(key, entry);
    }
  }
  return {
    file: path,
    totalMs,
    idleMs,
    functions: [...fn.values()]
      .sort((a, b) => b.selfMs - a.selfMs)
      .slice(0, top)
      .map((f) => ({ ...f, pct: pct(f.selfMs) })),
    files: [...files.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([where, selfMs]) => ({ where, selfMs, pct: pct(selfMs) })),
    inclusive: [...inclusive.values()]
      .sort((a, b) => b.totalMs - a.totalMs)
      .map((f) => ({ ...f, pct: pct(f.totalMs) })),
  };
}

export function printProfile(s: ProfileSummary, write: (line: string) => void): void {
  const busy = s.totalMs - s.idleMs;
  write(`CPU profile ${s.file}: ${(busy / 1000).toFixed(1)} s busy of ${(s.totalMs / 1000).toFixed(1)} s`);
  write('  self time by function (% of busy):');
  for (const f of s.functions)
    write(
      `    ${f.pct.toFixed(1).padStart(5)} %  ${f.selfMs.toFixed(0).padStart(7)} ms  ${f.name}  ${f.where}`,
    );
  write('  self time by file:');
  for (const f of s.files) write(`    ${f.pct.toFixed(1).padStart(5)} %  ${f.where}`);
  if (s.inclusive.length > 0) {
    write('  inclusive time of:');
    for (const f of s.inclusive) write(`    ${f.pct.toFixed(1).padStart(5)} %  ${f.name}  ${f.where}`);
  }
}
