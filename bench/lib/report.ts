// What the serving benches share for their reports: medians over quiet rounds, number formats, plain-text
// tables, and the clean-up list that stops children and removes temp dirs on the way out (or on ^C).

import type { LoadGenerator, LoadResult, LoadSpec } from './serve-load.js';
import { log } from './serve-tools.js';

/** A whole-number setting from the environment (at least 1), else `fallback`. */
export const envInt = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Math.max(1, Number.parseInt(v, 10));
};

// ---- statistics and formatting ------------------------------------------------------------------

export const median = (xs: number[]): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export interface Summary {
  /** `quiet/all`, and ` (all used)` when too few were quiet to leave the noisy ones out (see summarise). */
  roundsUsed: string;
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuPct: number;
  serverUsPerReq: number;
  clientCpuPct: number;
  otherCpuPct: number;
  errors: number;
  badStatus: number;
}

/** Medians need this many quiet rounds to leave the noisy ones out; with fewer, every round counts. */
export const MIN_QUIET_ROUNDS = 3;

/**
 * Medians over the quiet rounds (others' CPU at most NOISY_OTHER_CPU_PCT) when there are at least
 * MIN_QUIET_ROUNDS of them, else over all rounds; errors count over all rounds.
 */
export function summarise(all: LoadResult[]): Summary {
  const quiet = all.filter((r) => r.otherCpuPct <= NOISY_OTHER_CPU_PCT);
  const rounds = quiet.length >= Math.min(MIN_QUIET_ROUNDS, all.length) ? quiet : all;
  const rps = rounds.map((r) => r.rps);
  return {
    roundsUsed: `${quiet.length}/${all.length}${rounds === all && quiet.length < all.length ? ' (all used)' : ''}`,
    rps: median(rps),
    rpsMin: Math.min(...rps),
    rpsMax: Math.max(...rps),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    serverCpuPct: median(rounds.map((r) => r.serverCpuPct)),
    serverUsPerReq: median(rounds.map((r) => r.serverUsPerReq)),
    clientCpuPct: median(rounds.map((r) => r.clientCpuPct)),
    otherCpuPct: median(rounds.map((r) => r.otherCpuPct)),
    errors: all.reduce((s, r) => s + r.errors, 0),
    badStatus: all.reduce((s, r) => s + r.badStatus, 0),
  };
}

export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 1) : 'n/a');
export const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a');
export const pct = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} %` : 'n/a');
export const mark = (pass: boolean | null) => (pass === null ? 'info' : pass ? 'PASS' : 'MISS');
/** A run in which other processes used this much of a core is called noisy in the tables. */
export const NOISY_OTHER_CPU_PCT = 25;

export function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  for (const r of rows) {
    console.log(
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join('  ')
        .trimEnd(),
    );
  }
}

export const rotate = <T>(xs: T[], by: number): T[] => {
  const k = by % xs.length;
  return [...xs.slice(k), ...xs.slice(0, k)];
};

// ---- clean-up -----------------------------------------------------------------------------------

export class Cleanup {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> }> = [];
  private running: Promise<void> | undefined;

  push(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try {
          await step.run();
        } catch (err) {
          log(`cleanup (${step.what}): ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

/**
 * `rounds` interleaved rounds: each scenario against every target in turn, the order rotated each round;
 * a measurement others made noisy is run once more and the quieter kept. Results by `<scenario>/<target>`.
 */
export async function interleavedRounds<
  T extends { name: string },
  S extends { name: string; label: string },
>(
  load: LoadGenerator,
  targets: T[],
  scenarios: readonly S[],
  rounds: number,
  spec: (target: T, scenario: S) => LoadSpec,
): Promise<Map<string, LoadResult[]>> {
  const results = new Map<string, LoadResult[]>();
  for (let r = 0; r < rounds; r++) {
    for (const s of scenarios) {
      const line: string[] = [];
      for (const t of rotate(targets, r)) {
        let res = await load.run(spec(t, s));
        if (res.otherCpuPct > NOISY_OTHER_CPU_PCT) {
          const again = await load.run(spec(t, s));
          if (again.otherCpuPct < res.otherCpuPct) res = again;
        }
        const k = `${s.name}/${t.name}`;
        results.set(k, [...(results.get(k) ?? []), res]);
        const bad = res.errors + res.badStatus;
        line.push(
          `${t.name} ${int(res.rps)}${bad > 0 ? ` (${res.errors} errors, ${res.badStatus} bad)` : ''}`,
        );
      }
      log(`round ${r + 1}/${rounds} ${s.label}: ${line.join(', ')} req/s`);
    }
  }
  return results;
}
