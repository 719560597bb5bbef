// Time source for every time-dependent rule (code expiry, upload expiry, site expiry, rate windows).
// Tests pass a MovableClock and move it instead of sleeping.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

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
