// The site proxy (spec "Site proxy"): POST /api/v1/proxy/:slug. The answer is the upstream's own
// status, headers and body, not JSON; refusals have the error body.

import { type Static, Type } from 'typebox';
import { MAX_PROXY_HEADERS, PROXY_MAX_REQUEST_BODY_BYTES, PROXY_METHODS } from '../core/proxy.js';
import { Bytes, ERRORS, errorExample, operation, SlugParams } from './common.js';

export const ProxyCall = Type.Object({
  url: Type.String({ minLength: 1, description: 'https URL on an allowlisted host; may hold {{NAME}}' }),
  method: Type.Optional(Type.String({ description: `${PROXY_METHODS.join(', ')} (any case); default GET` })),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String({ description: 'may hold {{NAME}}' }), {
      maxProperties: MAX_PROXY_HEADERS,
      description: 'header name -> value (cookies and hop-by-hop fields are dropped)',
    }),
  ),
  body: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: `the request body as text (JSON.stringify it first), at most ${PROXY_MAX_REQUEST_BODY_BYTES} bytes; may hold {{NAME}}`,
    }),
  ),
});
export type ProxyCall = Static<typeof ProxyCall>;

export const proxyCall = operation({
  method: 'POST',
  url: '/api/v1/proxy/:slug',
  schema: {
    tags: ['proxy'],
    summary:
      'Call an allowlisted HTTPS API from a page of the site, {{VARIABLE}} placeholders filled server side',
    params: SlugParams,
    body: ProxyCall,
    response: {
      200: {
        description: "The upstream's status, headers and body as they came (any 1xx-5xx status)",
        content: { '*/*': { schema: Bytes("the upstream's body") } },
      },
      ...ERRORS,
    },
  },
  config: {
    api: {
      examples: () => ({
        request: {
          url: 'https://api.openai.com/v1/chat/completions',
          method: 'POST',
          headers: { Authorization: 'Bearer {{OPENAI_API_KEY}}', 'Content-Type': 'application/json' },
          body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}',
        },
        responses: {},
        error: errorExample(
          'FORBIDDEN',
          403,
          'The site proxy is disabled on this deployment (PROXY_ENABLED=false); nothing was forwarded.',
        ),
      }),
    },
  },
});
