// Sign-in endpoints: POST /api/auth/agent/request-code and /verify-code (spec "Sign-in"). The sign-in
// limits (core/signin.ts) come on top of the API's own window (http/rate-limit.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requestCode, type SignInDeps, verifyCode } from '../core/signin.js';
import { ErrorBody } from './schemas.js';

const RequestCodeBody = Type.Object({ email: Type.String({ maxLength: 320 }) });
const RequestCodeReply = Type.Object({
  message: Type.String(),
  email: Type.String(),
  expiresInSeconds: Type.Number(),
});
const VerifyCodeBody = Type.Object({
  email: Type.String({ maxLength: 320 }),
  code: Type.String({ maxLength: 32 }),
});
const VerifyCodeReply = Type.Object({
  message: Type.String(),
  apiKey: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  isNewUser: Type.Boolean(),
  warning: Type.String(),
});

export function authRoutes(deps: SignInDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api/auth/agent/request-code',
      {
        schema: {
          tags: ['auth'],
          summary: 'Email a one-time sign-in code (XXXX-XXXX, valid 600 s)',
          body: RequestCodeBody,
          response: { 200: RequestCodeReply, '4xx': ErrorBody, '5xx': ErrorBody },
        },
      },
      async (req) => {
        const { email, expiresInSeconds } = await requestCode(deps, req.body.email, {
          ip: req.clientAddress,
        });
        return { message: `A sign-in code was sent to ${email}.`, email, expiresInSeconds };
      },
    );

    app.post(
      '/api/auth/agent/verify-code',
      {
        schema: {
          tags: ['auth'],
          summary: 'Exchange the code for an API key (201 for a new account, 200 for an existing one)',
          body: VerifyCodeBody,
          response: { 200: VerifyCodeReply, 201: VerifyCodeReply, '4xx': ErrorBody },
        },
      },
      async (req, reply) => {
        const r = await verifyCode(deps, req.body.email, req.body.code, { ip: req.clientAddress });
        reply.code(r.isNewUser ? 201 : 200);
        return {
          message: r.isNewUser ? 'Account created; you are signed in.' : 'Signed in.',
          apiKey: r.apiKey,
          email: r.email,
          plan: r.plan,
          isNewUser: r.isNewUser,
          warning:
            'Store this API key now: it is shown only once. Verifying again issues a new key and the old one stops working.',
        };
      },
    );
  };
}
