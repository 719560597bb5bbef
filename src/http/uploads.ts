// PUT /api/v1/_upload/<encoded storage key>?token=&ct=&exp= : one file's bytes, streamed (not rate limited).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { receiveUpload, type UploadDeps } from '../core/upload.js';
import { UPLOAD_PATH_PREFIX } from '../core/upload-token.js';
import { ErrorBody } from './schemas.js';

export function uploadRoutes(deps: UploadDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The body is the file: no parsing, no body limit (the manifest size bounds it), any content type.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, _payload, done) => done(null));

    app.put(
      `${UPLOAD_PATH_PREFIX}*`,
      {
        schema: {
          tags: ['sites'],
          summary: 'Upload one file to its one-time address (token-gated, no API key)',
          querystring: Type.Object({
            token: Type.Optional(Type.String()),
            ct: Type.Optional(Type.String()),
            exp: Type.Optional(Type.String()),
          }),
          response: {
            200: Type.Object({
              path: Type.String(),
              size: Type.Number(),
              hash: Type.String(),
              stored: Type.Boolean(),
            }),
            '4xx': ErrorBody,
            '5xx': ErrorBody,
          },
        },
      },
      async (req) => {
        const rawPath = req.url.split('?', 1)[0] ?? '';
        return receiveUpload(deps, {
          encodedStorageKey: rawPath.slice(UPLOAD_PATH_PREFIX.length),
          query: req.query,
          contentType: req.headers['content-type'],
          contentLength: req.headers['content-length'],
          body: req.raw,
        });
      },
    );
  };
}
