// Time source for every time-dependent rule (code expiry, upload expiry, site expiry, rate windows).
// Tests pass a MovableClock and move it instead of sleeping.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /**
   * now() to within COARSE_CLOCK_MS, without a system call: for counters that only place an event in its
   * hour (visitor analytics). Absent: now().
   */
  coarseNow?(): number;
}

/** How far behind the system clock a coarse reading may be (plus however long the event loop is held). */
export const COARSE_CLOCK_MS = 50;

let coarse = 0;
let coarseTimer: NodeJS.Timeout | undefined;

export const systemClock: Clock = {
  now: () => Date.now(),
  coarseNow: () => {
    if (coarseTimer === undefined) {
      coarse = Date.now();
      coarseTimer = setInterval(() => {
        coarse = Date.now();
      }, COARSE_CLOCK_MS);
      coarseTimer.unref(); // never what keeps a process alive
    }
    return coarse;
  },
};

/** Real time plus an offset that tests can move forward (or back). */
export class MovableClock implements Clock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Jump so that now() is at `epochMs`. */
  set(epochMs: number): void {
    this.offsetMs = epochMs - Date.now();
  }
}
