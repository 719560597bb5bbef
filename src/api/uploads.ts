// PUT /api/v1/_upload/<encoded storage key>?token=&ct=&exp=[&size=&hash=] (CONTRACT "Uploads"): one file's bytes.

import { type Static, Type } from 'typebox';
import { UPLOAD_PATH_PREFIX } from '../core/upload-token.js';
import { Bytes, ErrorBody, errorExample, operation } from './common.js';
import { hash } from './examples.js';

export const UploadQuery = Type.Object({
  token: Type.Optional(Type.String()),
  ct: Type.Optional(Type.String()),
  exp: Type.Optional(Type.String()),
  /** The manifest's size and hash, signed with the rest, when the manifest gave the hash. */
  size: Type.Optional(Type.String()),
  hash: Type.Optional(Type.String()),
});

/** `stored` is false when the same bytes were already there (a harmless retry). */
export const UploadResult = Type.Object({
  path: Type.String(),
  size: Type.Number(),
  hash: Type.String(),
  stored: Type.Boolean(),
});
export type UploadResult = Static<typeof UploadResult>;

export const uploadFile = operation({
  method: 'PUT',
  url: `${UPLOAD_PATH_PREFIX}*`,
  schema: {
    tags: ['sites'],
    summary: 'Upload one file to its one-time address (token-gated, no API key)',
    querystring: UploadQuery,
    response: { 200: UploadResult, '4xx': ErrorBody, '5xx': ErrorBody },
  },
  config: {
    deployToken: true,
    api: {
      // Streamed to storage as it arrives, with the media type of its upload entry.
      rawBody: {
        mediaType: 'application/octet-stream',
        schema: Bytes("The file's exact bytes, sent with the Content-Type of its upload entry"),
      },
      examples: () => ({
        responses: { 200: { path: 'index.html', size: 1024, hash, stored: true } },
        error: errorExample(
          'INVALID_REQUEST',
          400,
          'The body has 1000 bytes; the manifest says 1024 for "index.html".',
        ),
      }),
    },
  },
});
