// What the CLI prints and how it exits: one JSON document on stdout with --json, readable text otherwise;
// progress, prompts, warnings and human error messages on stderr; exit codes by kind of failure.

import { ApiClientError, NetworkError } from '../client/api.js';

/** Exit codes (docs/cli.md "Exit codes"). */
export const EXIT = {
  OK: 0,
  /** Bad usage or a user error: unknown option, missing file, not logged in, refused confirmation. */
  USER: 1,
  /** The server refused the request (4xx), e.g. NOT_FOUND, INVALID_REQUEST, VERSION_CONFLICT. */
  REFUSED: 2,
  /** Finalize found exposed secrets (SECRET_DETECTED); nothing was published. */
  SECRET: 3,
  /** The server could not be reached or failed (network error, 5xx). */
  UNAVAILABLE: 4,
} as const;

/** A mistake of the user (exit 1): printed as `error CODE: message` without a stack. */
export class UserError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  constructor(message: string, options: { code?: string; hint?: string } = {}) {
    super(message);
    this.name = 'UserError';
    this.code = options.code ?? 'USER_ERROR';
    this.hint = options.hint;
  }
}

export class Output {
  constructor(readonly json: boolean) {}

  /** The command's result: `doc` as JSON on stdout with --json, else whatever `human` prints. */
  result(doc: unknown, human: () => void): void {
    if (this.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    else human();
  }

  /** A line of the human result (stdout). */
  line(text = ''): void {
    process.stdout.write(`${text}\n`);
  }

  /** A note, warning or progress line (stderr, in both modes). */
  note(text: string): void {
    process.stderr.write(`${text}\n`);
  }

  /** A table with a header row, columns padded (human mode, stdout). */
  table(header: string[], rows: string[][]): void {
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
    const render = (cells: string[]) =>
      cells
        .map((cell, c) => (c === cells.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd();
    this.line(render(header));
    for (const row of rows) this.line(render(row));
  }
}

/** The exit code for a failure. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof ApiClientError) {
    if (err.code === 'SECRET_DETECTED') return EXIT.SECRET;
    return err.status >= 500 ? EXIT.UNAVAILABLE : EXIT.REFUSED;
  }
  if (err instanceof NetworkError) return EXIT.UNAVAILABLE;
  return EXIT.USER;
}

/** The JSON document of a failure: the server's error body, or one of the same shape. */
export function errorDocument(err: unknown): Record<string, unknown> {
  if (err instanceof ApiClientError) {
    const hint = cliHint(err);
    return {
      error: err.message,
      code: err.code,
      status: err.status,
      ...err.body,
      ...(hint !== undefined ? { cliHint: hint } : {}),
    };
  }
  if (err instanceof NetworkError) return { error: err.message, code: 'NETWORK_ERROR' };
  if (err instanceof UserError) {
    return { error: err.message, code: err.code, ...(err.hint ? { hint: err.hint } : {}) };
  }
  return { error: (err as Error).message ?? String(err), code: 'USER_ERROR' };
}

/**
 * Reports a failure (JSON on stdout, or `error CODE: message` and the hint on stderr) and returns its
 * exit code. `details` prints extra human lines (e.g. secret findings) after the first line.
 */
export function reportFailure(out: Output, err: unknown, details?: () => void): number {
  if (out.json) {
    process.stdout.write(`${JSON.stringify(errorDocument(err), null, 2)}\n`);
  } else {
    const doc = errorDocument(err);
    out.note(`error ${String(doc.code)}: ${String(doc.error)}`);
    details?.();
    const hint = typeof doc.cliHint === 'string' ? doc.cliHint : doc.hint;
    if (typeof hint === 'string') out.note(`hint: ${hint}`);
    if (process.env.SLIPWAY_DEBUG && err instanceof Error && !(err instanceof UserError)) {
      out.note(err.stack ?? '');
    }
  }
  return exitCodeOf(err);
}

/**
 * What to run instead, when the server's hint (or message) names an API call: the CLI's users type
 * `slipway ...`, not `POST /api/...`. Undefined keeps the server's hint.
 */
export function cliHint(err: ApiClientError): string | undefined {
  const hint = err.hint ?? '';
  const domain = /^(\S+) is not verified yet/.exec(err.message)?.[1];
  if (domain !== undefined) {
    return `Run \`slipway domains verify ${domain}\` once its DNS record is in place (\`slipway domains list\` shows what it needs).`;
  }
  const expired = /^The site (\S+) has expired: extend/.exec(err.message)?.[1];
  if (expired !== undefined) {
    return `Extend its expiry with \`slipway meta ${expired} --ttl SECONDS\` or remove it with \`slipway meta ${expired} --no-ttl\`, then publish again.`;
  }
  if (hint.includes('/api/billing/checkout')) return 'Upgrade to Hobby with `slipway upgrade`.';
  if (hint.includes('/api/billing/portal')) return 'Manage the subscription with `slipway portal`.';
  if (err.code === 'UNAUTHORIZED') return 'Run `slipway login` (or set SLIPWAY_API_KEY).';
  if (/upgrade to Hobby/i.test(hint)) {
    return `${hint.replace(/\.$/, '')}: \`slipway list\`, \`slipway delete <slug>\`, \`slipway upgrade\`.`;
  }
  if (hint.includes('/api/openapi.json')) return 'See `slipway help <command>` for what each option takes.';
  // The service's hint points at `remediation.steps`, a field of the JSON body a terminal user never sees.
  if (err.code === 'SECRET_DETECTED')
    return 'Follow the steps above, then publish again (`--verbose` adds the API calls).';
  return undefined;
}

let terminalTaken = false;

function restoreOnSignal(signal: NodeJS.Signals): void {
  restoreTerminal();
  process.stderr.write('\n');
  process.exit(signal === 'SIGINT' ? 130 : 143);
}
const onExit = () => restoreTerminal();

/**
 * The progress bar hid the cursor and switched line wrapping off: from now until `restoreTerminal`,
 * every way out (Ctrl-C, SIGTERM, an error, a normal end) turns both back on. Ctrl-C exits 130.
 */
export function takeTerminal(): void {
  if (terminalTaken) return;
  terminalTaken = true;
  process.on('SIGINT', restoreOnSignal);
  process.on('SIGTERM', restoreOnSignal);
  process.on('exit', onExit);
}

/** Shows the cursor and turns line wrapping back on (`write: false` when the bar already did). */
export function restoreTerminal(write = true): void {
  if (!terminalTaken) return;
  terminalTaken = false;
  process.removeListener('SIGINT', restoreOnSignal);
  process.removeListener('SIGTERM', restoreOnSignal);
  process.removeListener('exit', onExit);
  if (!write) return;
  try {
    process.stderr.write('\x1b[?25h\x1b[?7h');
  } catch {
    // stderr is gone: there is no terminal left to restore.
  }
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** `12.3 MB` (powers of 1024, as the service's own figures). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** `2026-01-02 10:20` in local time, or `-` for null. */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
