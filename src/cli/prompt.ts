// Questions to the user: on a terminal a prompt on stderr (typing hidden for secrets); otherwise the next
// line of stdin, so scripts and tests can drive `login` and friends through a pipe.

import { createInterface, type Interface } from 'node:readline';
import { UserError } from './output.js';

/** True when stdin is a terminal a person types into. */
export const interactive = (): boolean => process.stdin.isTTY === true;

let lines: { rl: Interface; next: AsyncIterator<string> } | undefined;

/** The next line of (non-terminal) stdin; lines that arrive before they are asked for are kept. */
async function nextLine(): Promise<string | undefined> {
  if (!lines) {
    const rl = createInterface({ input: process.stdin, terminal: false });
    lines = { rl, next: rl[Symbol.asyncIterator]() };
  }
  const { value, done } = await lines.next.next();
  return done ? undefined : value;
}

/** Lets the process exit: stdin is no longer read. */
export function closePrompts(): void {
  lines?.rl.close();
  lines = undefined;
  process.stdin.pause();
}

/**
 * Asks for one line. On a terminal: prints `question` on stderr and reads the answer (hidden when
 * `hidden`). Otherwise reads the next line of stdin; `what` names the value when stdin has run out.
 */
export async function ask(question: string, options: { hidden?: boolean; what: string }): Promise<string> {
  if (!interactive()) {
    const line = await nextLine();
    if (line === undefined) {
      throw new UserError(`expected ${options.what} on stdin, but stdin ended`, { code: 'MISSING_INPUT' });
    }
    return line.replace(/\r$/, '');
  }
  return options.hidden ? askHidden(question) : askVisible(question);
}

function askVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve, reject) => {
    rl.once('SIGINT', () => {
      rl.close();
      reject(new UserError('cancelled', { code: 'CANCELLED' }));
    });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

/**
 * Reads a line in raw mode, echoing nothing; backspace edits, Ctrl-C and Ctrl-D cancel. Written here, not
 * taken from a library, for a measured reason: npm's `read` 4.1.0 (the last release for Node 20 before
 * 20.17; 5.x and @inquirer/password 5.x need newer Node) passed test/cli/prompt.test.ts but for Ctrl-D,
 * where its promise never settles and the CLI exits without a word.
 */
function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (text: string) => {
      for (const ch of text) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          finish();
          reject(new UserError('cancelled', { code: 'CANCELLED' }));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** All of stdin (for `--password-stdin` and piped values); one trailing newline is dropped. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** A yes/no question on the terminal (default no). Callers check `interactive()` first. */
export async function confirm(question: string): Promise<boolean> {
  const answer = await askVisible(`${question} [y/N] `);
  return /^y(?:es)?$/i.test(answer.trim());
}

/**
 * A destructive command's consent: `--yes`, else a yes/no question on a terminal; without a terminal and
 * without `--yes` it refuses (CONFIRMATION_REQUIRED), so a script never deletes by accident.
 */
export async function confirmOrRefuse(
  yes: boolean | undefined,
  what: string,
  question: string,
): Promise<void> {
  if (yes) return;
  if (!interactive()) {
    throw new UserError(`refusing to ${what} without confirmation`, {
      code: 'CONFIRMATION_REQUIRED',
      hint: 'Pass --yes to go ahead without a prompt.',
    });
  }
  if (!(await confirm(question))) throw new UserError(`cancelled: did not ${what}`, { code: 'CANCELLED' });
}
