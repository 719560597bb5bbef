// Receiving one file's bytes at its upload address (CONTRACT "Uploads"): token, expiry, content type,
// exact length and hash are checked while the bytes stream into the content-addressed blob store.

import type { UploadResult } from '../api/uploads.js';
import type { Clock } from '../shared/clock.js';
import { BlobHashMismatchError, BlobSizeMismatchError, type BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { recordUpload, uploadTarget, versionFile } from '../store/db/tables/version.js';
import { ApiError, invalid } from './errors.js';
import { isScannable, ScanSession } from './scan/scanner.js';
import { isScanned, rememberScan } from './scan/site-scan.js';
import { checkUploadAddress } from './upload-token.js';

/**
 * Uploads one client (its limitKey) may have under way at once on a node: twice the CLI's 8 parallel
 * uploads. Each holds a connection and a temp file or multipart upload for as long as its body takes.
 */
export const UPLOADS_PER_CLIENT = 16;

export interface UploadDeps {
  db: Db;
  blobs: BlobStore;
  clock: Clock;
  uploadKey: Buffer;
  config: { baseUrl: string };
}

export interface UploadRequest {
  encodedStorageKey: string;
  query: { token?: string; ct?: string; exp?: string };
  contentType: string | undefined;
  /** Content-Length header, if the body is not chunked. */
  contentLength: string | undefined;
  body: NodeJS.ReadableStream;
}

/** `type/subtype; a=b` compared without case or spacing differences. */
export function sameMediaType(a: string, b: string): boolean {
  const norm = (s: string) =>
    s
      .split(';')
      .map((p) => p.trim().replace(/\s*=\s*/, '='))
      .filter(Boolean)
      .map((p, i) => (i === 0 ? p.toLowerCase() : p))
      .join(';');
  return norm(a) === norm(b);
}

export async function receiveUpload(deps: UploadDeps, req: UploadRequest): Promise<UploadResult> {
  const check = checkUploadAddress(deps.uploadKey, req.encodedStorageKey, req.query, deps.clock.now());
  if (!check.ok) {
    const message = {
      malformed: 'This is not a valid upload address (token, ct and exp are required).',
      'bad-token': 'The upload token is not valid for this address.',
      expired: 'This upload address has expired; publish again to get new addresses.',
    }[check.reason];
    // `reason` is the machine-readable cause (the spec lets errors add fields): a client asks for new
    // addresses on `expired` without reading the message.
    throw new ApiError(check.reason === 'malformed' ? 'INVALID_REQUEST' : 'FORBIDDEN', message, {
      extra: { reason: check.reason },
    });
  }
  const { versionId, path, contentType } = check.target;
  const file = await uploadTarget(deps.db.kysely, versionId, path);
  if (!file) throw invalid('This upload address belongs to a version that was replaced.');
  if (file.status !== 'pending') {
    throw invalid('This upload address belongs to a version that is already finalized or was replaced.');
  }
  if (req.contentType === undefined || !sameMediaType(req.contentType, contentType)) {
    throw invalid(`Content-Type must be "${contentType}" as in the upload entry's headers.`, { status: 415 });
  }
  // Once stored, the same bytes again are a no-op and different bytes (of any length) are refused.
  const alreadyStored = () =>
    invalid(`"${path}" is already stored with other bytes; nothing changed.`, { status: 409 });
  if (req.contentLength !== undefined && Number(req.contentLength) !== file.size) {
    if (file.hash) throw alreadyStored();
    throw invalid(`The body has ${req.contentLength} bytes; the manifest says ${file.size} for "${path}".`);
  }

  const expectedHash = file.hash ?? file.expected_hash ?? undefined;
  // Browser-delivered text is scanned for secrets as it streams in (unless these bytes were scanned
  // before), so finalize only reads the result (core/scan/site-scan.ts).
  const scan =
    isScannable(path, contentType) && !(expectedHash && (await isScanned(deps, expectedHash)))
      ? new ScanSession()
      : null;
  let put: Awaited<ReturnType<BlobStore['put']>>;
  try {
    put = await deps.blobs.put(scan ? scanning(req.body, scan) : req.body, {
      expectedSize: file.size,
      expectedHash,
    });
  } catch (err) {
    if (err instanceof BlobSizeMismatchError) {
      if (file.hash) throw alreadyStored();
      throw invalid(
        `The body does not have the ${file.size} bytes the manifest gives for "${path}"; nothing was kept.`,
      );
    }
    if (err instanceof BlobHashMismatchError) {
      if (file.hash) throw alreadyStored();
      throw new ApiError(
        'INVALID_HASH',
        `The bytes of "${path}" do not hash to the manifest hash; nothing was kept.`,
      );
    }
    throw err;
  }
  const stored = await recordUpload(
    deps.db,
    { versionId, path },
    { hash: put.hash, size: put.size, now: deps.clock.now() },
  );
  if (!file.hash && !stored) {
    // A concurrent upload to this address stored its bytes first: ours are a retry only if they match.
    const row = await versionFile(deps.db.kysely, versionId, path);
    if (!row) throw invalid('This upload address belongs to a version that was replaced.');
    if (row.hash !== put.hash) throw alreadyStored();
  }
  if (scan) await rememberScan(deps, put.hash, await scan.finish());
  return { path, size: put.size, hash: put.hash, stored };
}

/** Passes the body through, feeding each chunk to the scan first (a body error or early stop ends both). */
async function* scanning(body: AsyncIterable<Uint8Array | string>, scan: ScanSession) {
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    await scan.push(bytes);
    yield bytes;
  }
}
