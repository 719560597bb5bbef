// Sign-in endpoints: POST /api/auth/agent/request-code and /verify-code (spec "Sign-in"). The sign-in
// limits (core/signin.ts) come on top of the API's own window (http/rate-limit.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/auth.js';
import { requestCode, type SignInDeps, verifyCode } from '../core/signin.js';

export function authRoutes(deps: SignInDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.requestCode,
      handler: async (req) => {
        const { email, expiresInSeconds } = await requestCode(deps, req.body.email, {
          ip: req.clientAddress,
        });
        return { message: `A sign-in code was sent to ${email}.`, email, expiresInSeconds };
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
