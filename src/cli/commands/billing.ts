// `slipway upgrade | portal`: the Hobby plan's checkout and the subscription portal. Both print the
// address and, on a desktop, try to open it in the browser (never failing when they cannot).

import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { formatDate } from '../output.js';
import { action } from '../session.js';

/** Opens `url` with xdg-open/open when a person is at a desktop; silent when it cannot. */
function openInBrowser(url: string): void {
  const desktop =
    process.platform === 'darwin' || Boolean(process.env.DISPLAY) || Boolean(process.env.WAYLAND_DISPLAY);
  if (!desktop || !process.stdout.isTTY) return;
  try {
    const child = spawn(process.platform === 'darwin' ? 'open' : 'xdg-open', [url], {
      stdio: 'ignore',
      detached: true,
    });
    child.on('error', () => {});
    child.unref();
  } catch {}
}

export function registerBilling(program: Command): void {
  program
    .command('upgrade')
    .description('start the Hobby plan checkout and print its address')
    .addHelpText('after', '\nExamples:\n  slipway upgrade\n  slipway upgrade --json')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).checkout();
        out.result(res, () => {
          out.line(res.checkoutUrl);
          out.note('Open the address above to pay; the plan changes to Hobby once the payment completes.');
          openInBrowser(res.checkoutUrl);
        });
      }),
    );

  program
    .command('portal')
    .description('print the address of your subscription portal')
    .addHelpText('after', '\nExamples:\n  slipway portal')
    .action(
      action(async (session) => {
        const { out } = session;
        const res = await (await session.authed()).portal();
        out.result(res, () => {
          out.line(res.portalUrl);
          out.note(
            `subscription ${res.status}${res.currentEnd ? `, current period ends ${formatDate(res.currentEnd)}` : ''}`,
          );
          openInBrowser(res.portalUrl);
        });
      }),
    );
}
