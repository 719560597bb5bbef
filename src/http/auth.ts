// Sign-in endpoints: POST /api/auth/agent/request-code and /verify-code (spec "Sign-in"). The sign-in
// limits (core/signin.ts) come on top of the API's own window (http/rate-limit.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/auth.js';
import { requestCode, type SignInDeps, verifyCode } from '../core/signin.js';

/**
 * Where the code went. Without SMTP_URL no mail leaves the machine, and a new user waiting for one would
 * wait for ever: the answer says where the code is instead (issue 21).
 */
export function codeSentMessage(email: string, delivery: 'log' | 'smtp'): string {
  return delivery === 'log'
    ? `A sign-in code for ${email} is ready. No mail server is set up on this service (no SMTP_URL), so no mail leaves the machine: the code is in the service's log (its standard output) and in outbox.log in its DATA_DIR.`
    : `A sign-in code was sent to ${email}.`;
}

export function authRoutes(deps: SignInDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.requestCode,
      handler: async (req) => {
        const { email, expiresInSeconds } = await requestCode(deps, req.body.email, {
          ip: req.clientAddress,
        });
        return { message: codeSentMessage(email, deps.mailer.delivery), email, expiresInSeconds };
      },
    });

    app.route({
      ...api.verifyCode,
      handler: async (req, reply) => {
        const r = await verifyCode(deps, req.body.email, req.body.code, { ip: req.clientAddress });
        reply.code(r.isNewUser ? 201 : 200);
        return {
          message: r.isNewUser ? 'Account created; you are signed in.' : 'Signed in.',
          apiKey: r.apiKey,
          email: r.email,
          plan: r.plan,
          isNewUser: r.isNewUser,
          warning: api.API_KEY_WARNING,
        };
      },
    });
  };
}
