// `slipway login | logout | whoami | account`: email-code sign-in and the saved key.

import type { Command } from 'commander';
import { ApiClientError } from '../../client/api.js';
import { credentialsPath, removeKey, saveKey } from '../credentials.js';
import { formatDate, UserError } from '../output.js';
import { ask, interactive } from '../prompt.js';
import { action, type Session } from '../session.js';

/** Tries at a wrong code on a terminal (the server allows 5 per code). */
const CODE_TRIES = 3;

export function registerAuth(program: Command): void {
  program
    .command('login')
    .description('sign in with a code sent by email and save the API key')
    .option('--email <email>', 'the account email (else asked for, or read from the first line of stdin)')
    .addHelpText(
      'after',
      `
The key is saved in $XDG_CONFIG_HOME/slipway/credentials (default ~/.config/slipway/credentials), mode 0600.
Without a terminal the email (unless --email) and then the code are read from stdin, one per line.

Examples:
  slipway login
  slipway login --email me@example.com
  slipway login --email me@example.com --json < code.txt`,
    )
    .action(action<{ email?: string }>(login));

  program
    .command('logout')
    .description('forget the API key saved for this server')
    .action(
      action(async ({ out, server }) => {
        const removed = await removeKey(server);
        out.result({ loggedOut: removed, server }, () =>
          out.line(removed ? `Logged out of ${server}.` : `No key was saved for ${server}.`),
        );
        if (process.env.SLIPWAY_API_KEY) out.note('note: SLIPWAY_API_KEY is still set in the environment.');
      }),
    );

  program
    .command('whoami')
    .description('show the account the key belongs to')
    .action(
      action(async (session) => {
        const { out, server } = session;
        const account = await (await session.authed()).account();
        const doc = { email: account.email, plan: account.plan, handle: account.handle, server };
        out.result(doc, () => out.line(`${account.email} (${account.plan}) on ${server}`));
      }),
    );

  program
    .command('account')
    .description('show the account: plan, usage and limits')
    .action(
      action(async (session) => {
        const { out } = session;
        const a = await (await session.authed()).account();
        out.result(a, () => {
          out.line(`email     ${a.email}`);
          out.line(`plan      ${a.plan}`);
          out.line(`handle    ${a.handle ?? '-'}`);
          out.line(`sites     ${a.usage.sites.used} of ${a.usage.sites.limit}`);
          out.line(`storage   ${a.usage.storage.used} of ${a.usage.storage.limit}`);
          out.line(`max file  ${a.limits.maxFileSize}`);
          out.line(`since     ${formatDate(a.createdAt)}`);
        });
      }),
    );
}

async function login(session: Session, _args: string[], flags: { email?: string }): Promise<void> {
  const { out, server } = session;
  const client = session.client.withKey(undefined);
  const email = (flags.email ?? (await ask('Email: ', { what: 'the email address' }))).trim();
  if (email === '') throw new UserError('an email address is required', { code: 'MISSING_INPUT' });
  const sent = await client.requestCode(email);
  const minutes = typeof sent.expiresInSeconds === 'number' ? Math.round(sent.expiresInSeconds / 60) : 10;
  // The server's message says where the code went (on the local default: its log, not a mailbox).
  const message = typeof sent.message === 'string' ? sent.message : `A sign-in code was sent to ${email}.`;
  out.note(`${message} It is valid for ${minutes} minutes.`);

  let verified: Awaited<ReturnType<typeof client.verifyCode>> | undefined;
  for (let attempt = 1; !verified; attempt++) {
    const code = (await ask('Code (XXXX-XXXX): ', { what: 'the sign-in code' })).trim().toUpperCase();
    try {
      verified = await client.verifyCode(email, code);
    } catch (err) {
      // On a terminal a mistyped code may be typed again; a script gets the error at once.
      const retry =
        interactive() && attempt < CODE_TRIES && err instanceof ApiClientError && err.status === 400;
      if (!retry) throw err;
      out.note(`error ${err.code}: ${err.message}`);
    }
  }
  const path = credentialsPath();
  await saveKey(server, { apiKey: verified.apiKey, email: verified.email });
  const doc = {
    email: verified.email,
    plan: verified.plan,
    isNewUser: verified.isNewUser,
    server,
    credentialsFile: path,
  };
  out.result(doc, () => {
    out.line(`Logged in to ${server} as ${verified.email} (${verified.plan}).`);
    out.line(`The key is saved in ${path}.`);
  });
  if (process.env.SLIPWAY_API_KEY) {
    out.note('note: SLIPWAY_API_KEY is set and takes precedence over the saved key.');
  }
}
