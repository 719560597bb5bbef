// What every operation of the public API shares: the spec's error body, nullable strings and timestamps,
// the bearer-key requirement, the `:slug` path parameter, and the shape of an operation itself (method,
// path, the schemas Fastify validates and serializes with and @fastify/swagger documents, and the
// operation's examples, written with the server's own addresses).
// This tree (src/api/) is the one place a shape of the API is written: the routes (src/http/) register
// the operations, core returns their `Static<>` types, and the client and the CLI `import type` them.

import type { FastifySchema, HTTPMethods } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { MAX_SLUG_CHARS } from '../core/slug.js';

/** The spec's error body; extra fields (e.g. detectedSecrets) are allowed. */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    code: Type.String(),
    status: Type.Number(),
    hint: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableString = Type.Union([Type.String(), Type.Null()]);
/** Operations that need `Authorization: Bearer <API key>`. */
export const SECURITY = [{ bearerAuth: [] }];
/** Every refusal and failure carries the error body. */
export const ERRORS = { '4xx': ErrorBody, '5xx': ErrorBody };

export const Slug = Type.String({ maxLength: MAX_SLUG_CHARS });
export const SlugParams = Type.Object({ slug: Slug });

/** The server's own addresses, which the examples are written with (the document shows real URLs). */
export interface ExampleContext {
  baseUrl: string;
  siteDomain: string;
  scheme: string;
  cnameTarget: string;
}

/** One operation's examples: the request body, the answer per success status, the typical refusal. */
export interface Examples {
  request?: unknown;
  responses: Record<number, unknown>;
  /** The example of the 4xx answer. */
  error?: ErrorBody;
  /** The example of the 5xx answer; by default the 503 of a backing service that is briefly down. */
  failure?: ErrorBody;
}

/** What the OpenAPI document adds to an operation's schemas (the route's `config.api`). */
export interface OperationDocs {
  examples: (c: ExampleContext) => Examples;
  /**
   * A body the route reads as raw bytes (streamed to storage, or verified over its bytes): documented
   * under its media type, never validated as JSON (Fastify would validate the stream or the Buffer).
   */
  rawBody?: { mediaType: string; schema: TSchema };
}

/** The shape `app.route({...operation, handler})` takes. */
export interface Operation {
  method: HTTPMethods;
  url: string;
  schema: FastifySchema & { tags: string[]; summary: string; security?: typeof SECURITY };
  config: {
    api: OperationDocs;
    /**
     * A deploy token (`svc_site_...`) may call this route (issue 24), on its own site: the path must name the
     * site as `:slug` (only the signed upload addresses are exempt; any other marked route without `:slug` still
     * refuses tokens). Every route without it answers a token 403 FORBIDDEN (src/http/rate-limit.ts).
     */
    deployToken?: true;
  };
}

/**
 * One operation of the API. The schema's literal types are kept, so a route registered with it has its
 * request and reply typed from the same schemas it validates and serializes with.
 */
export const operation = <const O extends Operation>(o: O): O => o;

/** The spec's error body, for examples. */
export const errorExample = (code: string, status: number, error: string, hint?: string): ErrorBody => ({
  error,
  code,
  status,
  ...(hint ? { hint } : {}),
});

/** Bytes that are not JSON (a raw body, the proxy's answer), in OpenAPI's words. */
export const Bytes = (description: string) =>
  Type.Unsafe<Uint8Array>({ type: 'string', format: 'binary', description });
