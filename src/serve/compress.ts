// Compression of served files into their br/gzip variants (done once per blob, off the event loop).

import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Encoding } from '../shared/rules/encoding.js';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Files up to this size get brotli's best quality (11); larger ones quality 9, which is ~20x faster and
 * within a few percent of the size (measured: 256 KiB of JS takes ~360 ms at 11, ~25 ms at 9).
 */
export const BROTLI_MAX_QUALITY_BYTES = 128 * 1024;
export const GZIP_LEVEL = 9;

/** Compresses `bytes` with `encoding`. Runs on the libuv thread pool, so the event loop keeps serving. */
export function compressBody(bytes: Buffer, encoding: Encoding): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(bytes, { level: GZIP_LEVEL });
  return brotliAsync(bytes, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: bytes.length <= BROTLI_MAX_QUALITY_BYTES ? 11 : 9,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}
