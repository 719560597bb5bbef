// Sign-in (spec "Sign-in"): POST /api/auth/agent/request-code and /verify-code.

import { type Static, Type } from 'typebox';
import { CODE_TTL_S } from '../core/signin.js';
import { ErrorBody, errorExample, operation } from './common.js';
import { apiKey } from './examples.js';

export const RequestCodeBody = Type.Object({ email: Type.String({ maxLength: 320 }) });
export const RequestCodeReply = Type.Object({
  message: Type.String(),
  email: Type.String(),
  expiresInSeconds: Type.Number(),
});
export type RequestCodeReply = Static<typeof RequestCodeReply>;

export const VerifyCodeBody = Type.Object({
  email: Type.String({ maxLength: 320 }),
  code: Type.String({ maxLength: 32 }),
});
export const VerifyCodeReply = Type.Object({
  message: Type.String(),
  apiKey: Type.String(),
  email: Type.String(),
  plan: Type.String(),
  isNewUser: Type.Boolean(),
  warning: Type.String(),
});
export type VerifyCodeReply = Static<typeof VerifyCodeReply>;

/** verify-code's `warning`: the key is shown once. */
export const API_KEY_WARNING =
  'Store this API key now: it is shown only once. Verifying again issues a new key and the old one stops working.';

const email = 'ada@example.com';

export const requestCode = operation({
  method: 'POST',
  url: '/api/auth/agent/request-code',
  schema: {
    tags: ['auth'],
    summary: `Email a one-time sign-in code (XXXX-XXXX, valid ${CODE_TTL_S} s)`,
    body: RequestCodeBody,
    response: { 200: RequestCodeReply, '4xx': ErrorBody, '5xx': ErrorBody },
  },
  config: {
    api: {
      examples: () => ({
        request: { email },
        responses: {
          200: { message: `A sign-in code was sent to ${email}.`, email, expiresInSeconds: CODE_TTL_S },
        },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          '"ada@" is not a valid email address',
          'Send {"email": "you@example.com"}.',
        ),
      }),
    },
  },
});

export const verifyCode = operation({
  method: 'POST',
  url: '/api/auth/agent/verify-code',
  schema: {
    tags: ['auth'],
    summary: 'Exchange the code for an API key (201 for a new account, 200 for an existing one)',
    body: VerifyCodeBody,
    response: { 200: VerifyCodeReply, 201: VerifyCodeReply, '4xx': ErrorBody },
  },
  config: {
    api: {
      examples: () => ({
        request: { email, code: 'K7QD-3MXP' },
        responses: {
          200: {
            message: 'Signed in.',
            apiKey,
            email,
            plan: 'hobby',
            isNewUser: false,
            warning: API_KEY_WARNING,
          },
          201: {
            message: 'Account created; you are signed in.',
            apiKey,
            email,
            plan: 'free',
            isNewUser: true,
            warning: API_KEY_WARNING,
          },
        },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'Wrong or expired code; request a new one if it has expired or after 5 wrong tries.',
        ),
      }),
    },
  },
});
