// Request bodies on the API host arrive under the pace rule (src/core/body-pace.ts): every body parser
// (JSON, forms, the payment callback) and the upload route read the request through it, and an answer
// sent before the body was read to its end drains the rest under the same rule or closes the connection
// (src/serve/exchange.ts settleRequestBody).

import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { type BodyPace, pacedBody } from '../core/body-pace.js';
import { settleRequestBody } from '../serve/exchange.js';

/** A request that carries a body (RFC 9112 §6.3): chunked, or a Content-Length above zero. */
function hasBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function registerRequestBodies(app: FastifyInstance, pace: BodyPace): void {
  app.addHook('preParsing', async (req, _reply, payload) => {
    if (!hasBody(req.headers)) return payload;
    const stream = Readable.from(pacedBody(req.raw, pace).read(), { objectMode: false });
    // A reader that gave up (a body over its limit) leaves the stream without listeners; its later error
    // (too slow, or the client gone) is the drain's business, not an uncaught exception.
    stream.on('error', () => {});
    return stream;
  });
  app.addHook('onSend', (req, reply, payload, done) => {
    settleRequestBody(req.raw, reply.raw, pace);
    done(null, payload);
  });
}
