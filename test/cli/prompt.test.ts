// The hidden prompt in a real terminal: `slipway meta <slug> --password-prompt` run under script(1), which
// gives the CLI a pseudo-terminal. What is typed never shows on the screen and reaches the server;
// backspace edits it; Ctrl-C and Ctrl-D cancel without changing anything.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { signIn, startTestApp, type TestApp } from '../helpers/app.js';
import { type CliEnv, cliEnv } from '../helpers/cli.js';
import { assertPublished, publish } from '../helpers/publish.js';
import { siteRequest } from '../serve/site-client.js';

const TSX = import.meta.resolve('tsx');
const PASSWORD = 'tr0ub4dor-and-3';
/** How long after a prompt appears its answer is typed. */
const TYPING_DELAY_MS = 300;

/** Runs `slipway ...args` on a pseudo-terminal; `typed` answers each prompt as it appears. */
function onTerminal(
  cli: CliEnv,
  args: string[],
  typed: Array<[prompt: string, keys: string]>,
): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, '--import', TSX, 'src/cli/main.ts', ...args].join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: process.cwd(),
    env: cli.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let next = 0;
  let seen = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk.toString();
    // Each answer is typed once its prompt appears after the previous one (a prompt may repeat), a moment
    // later as a person would: the prompt is printed just before the terminal is switched to raw mode.
    while (next < typed.length) {
      const [prompt, keys] = typed[next]!;
      const at = screen.indexOf(prompt, seen);
      if (at < 0) break;
      seen = at + prompt.length;
      next++;
      setTimeout(() => child.stdin.write(keys), TYPING_DELAY_MS);
    }
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}

describe('the hidden prompt', () => {
  let t: TestApp;
  let cli: CliEnv;
  let slug: string;

  before(async () => {
    t = await startTestApp();
    const key = await signIn(t, 'prompt@example.com');
    cli = await cliEnv(t.url, { SLIPWAY_API_KEY: key });
    slug = assertPublished(await publish(t, { 'index.html': '<h1>guarded</h1>' }, { key })).slug;
  });
  after(async () => {
    await t.close();
    await cli.dispose();
  });

  test('Ctrl-C at the prompt cancels and changes nothing', async () => {
    const run = await onTerminal(cli, ['meta', slug, '--password-prompt'], [['Password: ', 'abc\u0003']]);
    assert.notEqual(run.code, 0, run.screen);
    assert.match(run.screen, /cancel/i);
    assert.equal((await siteRequest(t, slug, '/')).status, 200);
  });

  test('Ctrl-D at the prompt cancels and changes nothing', async () => {
    const run = await onTerminal(cli, ['meta', slug, '--password-prompt'], [['Password: ', '\u0004']]);
    assert.notEqual(run.code, 0, run.screen);
    assert.match(run.screen, /cancel/i);
    assert.equal((await siteRequest(t, slug, '/')).status, 200);
  });

  test('backspace edits the hidden answer', async () => {
    const run = await onTerminal(
      cli,
      ['meta', slug, '--password-prompt'],
      [
        ['Password: ', 'ab\u007fc\r'],
        ['Repeat it: ', 'ac\r'],
      ],
    );
    assert.equal(run.code, 0, run.screen);
    assert.equal((await siteRequest(t, slug, '/')).status, 401);
    const update = await cli.run(['meta', slug, '--no-password', '--json']);
    assert.equal(update.code, 0, update.stderr);
  });

  test('a password typed at the prompt is not shown and protects the site', async () => {
    const run = await onTerminal(
      cli,
      ['meta', slug, '--password-prompt'],
      [
        ['Password: ', `${PASSWORD}\r`],
        ['Repeat it: ', `${PASSWORD}\r`],
      ],
    );
    assert.equal(run.code, 0, run.screen);
    assert.match(run.screen, /Repeat it: /);
    assert.ok(!run.screen.includes(PASSWORD.slice(0, 4)), `the password was echoed: ${run.screen}`);
    assert.equal((await siteRequest(t, slug, '/')).status, 401);
  });
});
