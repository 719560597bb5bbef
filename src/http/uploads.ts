// PUT /api/v1/_upload/<encoded storage key>?token=&ct=&exp=[&size=&hash=] : one file's bytes, streamed (not
// rate limited, but each client may have only so many under way, and every body arrives under the pace rule).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as api from '../api/uploads.js';
import { limitKey } from '../core/client-address.js';
import { ApiError } from '../core/errors.js';
import { receiveUpload, type UploadDeps } from '../core/upload.js';
import { UPLOAD_PATH_PREFIX } from '../core/upload-token.js';

/** Retry-After of a refusal for too many uploads at once: one of them is likely done by then. */
const UPLOADS_BUSY_RETRY_AFTER_S = 5;

export function uploadRoutes(deps: UploadDeps & { uploadsPerClient: number }): FastifyPluginAsyncTypebox {
  const { uploadsPerClient } = deps;
  return async (app) => {
    /** Uploads under way on this node, per client (limitKey). */
    const underWay = new Map<string, number>();

    // The body is the file: no parsing, no body limit (the manifest size bounds it), any content type. The
    // payload is the request as the pace rule reads it (src/http/request-body.ts).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    app.route({
      ...api.uploadFile,
      handler: async (req) => {
        const client = limitKey(req.clientAddress);
        const count = underWay.get(client) ?? 0;
        if (count >= uploadsPerClient) {
          throw new ApiError(
            'RATE_LIMITED',
            `Too many uploads at once from this address (at most ${uploadsPerClient}); wait for one to finish.`,
            { headers: { 'Retry-After': String(UPLOADS_BUSY_RETRY_AFTER_S) } },
          );
        }
        underWay.set(client, count + 1);
        try {
          const rawPath = req.url.split('?', 1)[0] ?? '';
          return await receiveUpload(deps, {
            encodedStorageKey: rawPath.slice(UPLOAD_PATH_PREFIX.length),
            query: req.query,
            contentType: req.headers['content-type'],
            contentLength: req.headers['content-length'],
            body: (req.body as NodeJS.ReadableStream | undefined) ?? req.raw,
          });
        } finally {
          const left = (underWay.get(client) ?? 1) - 1;
          if (left === 0) underWay.delete(client);
          else underWay.set(client, left);
        }
      },
    });
  };
}
