// The OpenAPI document at /api/openapi.json (rendered at /docs), generated from the routes alone: each
// route registers an operation of src/api/, whose schemas @fastify/swagger documents and whose
// `config.api` carries its examples (and the documented shape of a body read as raw bytes). This file
// holds the document's frame and the transform that adds those examples to copies of the schemas.
// test/http/openapi.test.ts checks that every operation has its examples and that they fit the schemas.

import type { SwaggerOptions } from '@fastify/swagger';
import { type ErrorBody, type ExampleContext, errorExample, type OperationDocs } from '../api/common.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operation's examples and raw body, for the OpenAPI document (src/api/common.ts). */
    api?: OperationDocs;
  }
}

/** The 5xx example of every operation that does not name its own: a backing service briefly down. */
const UNAVAILABLE: ErrorBody = errorExample(
  'SERVICE_UNAVAILABLE',
  503,
  'The service is briefly unavailable; try again in a few seconds.',
);

type Schema = Record<string, unknown>;

/** `examples` added to a copy of a schema (route schemas are shared objects: never mutated). */
const withExample = (schema: unknown, example: unknown): Schema => ({
  ...(schema as Schema),
  examples: [example],
});

/** @fastify/swagger's options: the document's frame, and a transform adding each operation's examples. */
export function openApiOptions(c: ExampleContext): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Slipway API',
        version: '1.0.0',
        description:
          'Static-site hosting: publish, manage and serve sites. Errors are {error, code, status} (plus hint and, ' +
          'for SECRET_DETECTED, detectedSecrets and remediation). Every counted /api/ answer carries ' +
          'X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; this document, CORS preflights and ' +
          'upload PUTs are not counted, and the site proxy has its own window per visitor IP and site.',
      },
      servers: [{ url: c.baseUrl }],
      // The reference's order: the publish flow first, operations last.
      tags: [
        { name: 'auth', description: 'Sign in with an emailed code; get an API key' },
        { name: 'sites', description: 'Publish, update, finalize, list, inspect, copy, claim, delete' },
        { name: 'aliases', description: 'Named preview hosts <slug>--<name> pointing at a version' },
        { name: 'account', description: 'Plan, usage and limits' },
        { name: 'variables', description: 'Encrypted site variables for the proxy' },
        { name: 'proxy-hosts', description: 'Hosts the site proxy may call' },
        { name: 'proxy', description: 'The site proxy' },
        { name: 'billing', description: 'The Hobby plan' },
        { name: 'handle', description: 'Your <handle> site address (Hobby)' },
        { name: 'domains', description: 'Custom domains, verified by DNS' },
        { name: 'links', description: 'Sites mounted on your handle or domains' },
        { name: 'tokens', description: 'Deploy tokens: publish one site from CI, nothing else' },
        { name: 'webhooks', description: 'Signed deploy webhooks: endpoints, deliveries, redelivery' },
        { name: 'admin', description: 'Operators only (ADMIN_EMAILS): find, take down, suspend, block' },
        { name: 'analytics', description: 'Visits of a site, counted by the service (no script, no cookie)' },
        { name: 'ops', description: 'Health, readiness, metrics, TLS front end' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'svc_live_ API key, or a svc_site_ deploy token where an operation allows it',
          },
        },
      },
    },
    transform({ schema, url, route }) {
      const docs = route.config?.api;
      if (!schema || (schema as Schema).hide || !docs) return { schema, url };
      const ex = docs.examples(c);
      const out: Schema = { ...(schema as Schema) };
      if (docs.rawBody) {
        const { mediaType, schema: raw } = docs.rawBody;
        out.body = ex.request === undefined ? raw : withExample(raw, ex.request);
        out.consumes = [mediaType];
      } else if (out.body !== undefined && ex.request !== undefined) {
        out.body = withExample(out.body, ex.request);
      }
      const responses: Schema = { ...(out.response as Schema | undefined) };
      for (const [status, value] of Object.entries(ex.responses)) {
        if (responses[status]) responses[status] = withExample(responses[status], value);
      }
      const refusals = { '4xx': ex.error, '5xx': ex.failure ?? UNAVAILABLE };
      for (const [range, sample] of Object.entries(refusals)) {
        if (responses[range] && sample) responses[range] = withExample(responses[range], sample);
      }
      if (Object.keys(responses).length > 0) out.response = responses;
      return { schema: out, url };
    },
  } as SwaggerOptions;
}
