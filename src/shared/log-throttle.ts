// Logs a recurring condition (a backend outage seen by every request and every pooled connection) at
// most once per interval, counting what it held back, so an outage cannot flood the disk with log lines.

export class LogThrottle {
  private lastAt = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    /** Shortest gap between two lines (ms). */
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Calls `log` with the number of occurrences held back since the last line, or holds this one back. */
  run(log: (suppressed: number) => void): void {
    const now = this.now();
    if (now - this.lastAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    const suppressed = this.suppressed;
    this.lastAt = now;
    this.suppressed = 0;
    log(suppressed);
  }
}
