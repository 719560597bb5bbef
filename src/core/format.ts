// Human-readable renderings of quantities shown to users (storage usage, limits in error messages).

/** Binary units as the spec writes them: `200 MB` is 209715200 bytes (1 KB = 1024 B). */
const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'] as const;
const UNIT_STEP = 1024;

/**
 * Bytes as a short human string in binary units with at most one decimal and no trailing `.0`:
 * 0 -> `0 B`, 1536 -> `1.5 KB`, 209715200 -> `200 MB`. A value that rounds up to 1024 of a unit
 * is written in the next unit (1048575 -> `1 MB`, not `1024 KB`).
 * Throws RangeError for a negative or non-finite number (a programming error, never user input).
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) throw new RangeError(`formatBytes needs a finite number >= 0; got ${n}`);
  let unit = 0;
  let value = n;
  while (value >= UNIT_STEP && unit < BYTE_UNITS.length - 1) {
    value /= UNIT_STEP;
    unit += 1;
  }
  let rounded = Math.round(value * 10) / 10;
  if (rounded >= UNIT_STEP && unit < BYTE_UNITS.length - 1) {
    rounded = Math.round((rounded / UNIT_STEP) * 10) / 10;
    unit += 1;
  }
  return `${rounded} ${BYTE_UNITS[unit]}`;
}
