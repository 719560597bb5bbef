// Receiving one file's bytes at its upload address (CONTRACT "Uploads"): token, expiry, content type,
// exact length and hash are checked while the bytes stream into the content-addressed blob store.

import type { UploadResult } from '../api/uploads.js';
import type { Clock } from '../shared/clock.js';
import { BlobHashMismatchError, BlobSizeMismatchError, type BlobStore } from '../store/blob/types.js';
import type { Db } from '../store/db/db.js';
import { recordUpload, uploadTarget, type VersionFileRow } from '../store/db/tables/version.js';
import { ApiError, invalid } from './errors.js';
import { isScannable, ScanSession } from './scan/scanner.js';
import { scanRecord } from './scan/site-scan.js';
import { checkUploadAddress, type UploadQuery, type UploadTarget } from './upload-token.js';

/**
 * Uploads one client (its limitKey) may have under way at once on a node: the CLI's 16 parallel uploads
 * (DEFAULT_UPLOAD_CONCURRENCY in src/client/api.ts). Each holds a connection and a temp file or multipart
 * upload for as long as its body takes.
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
  query: UploadQuery;
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

/**
 * Receives one file's bytes. The happy path of an address that carries the manifest's size and hash costs
 * one database statement (recordUpload, after the bytes are stored) and one object-store request: the
 * bytes are kept only if they hash to the signed hash, so they are the file's whatever its state, and the
 * statement records them only on a pending version's file that has no bytes yet. The file's row is read
 * when that statement changed nothing (a retry, a finalized or replaced version) or the bytes were
 * refused, to give the same answer as a read before the bytes would; and before the bytes when the
 * address has no hash, since then the bytes already stored (if any) decide which are accepted.
 */
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
  const { target } = check;
  const { path, contentType } = target;
  const known = target.expected ? undefined : await pendingFile(deps, target);
  /** The file's row when a refusal's answer depends on it. */
  const fileRow = async () => known ?? (await pendingFile(deps, target));
  const size = known?.size ?? target.expected!.size;
  if (req.contentType === undefined || !sameMediaType(req.contentType, contentType)) {
    await fileRow(); // a version that is gone says so first
    throw invalid(`Content-Type must be "${contentType}" as in the upload entry's headers.`, { status: 415 });
  }
  // Once stored, the same bytes again are a no-op and different bytes (of any length) are refused.
  const alreadyStored = () =>
    invalid(`"${path}" is already stored with other bytes; nothing changed.`, { status: 409 });
  if (req.contentLength !== undefined && Number(req.contentLength) !== size) {
    if ((await fileRow()).hash) throw alreadyStored();
    throw invalid(`The body has ${req.contentLength} bytes; the manifest says ${size} for "${path}".`);
  }

  const expectedHash = known ? (known.hash ?? known.expected_hash ?? undefined) : target.expected!.hash;
  // Browser-delivered text is scanned for secrets as it streams in, so finalize only reads the result
  // (core/scan/site-scan.ts); the result is saved by the statement that records the upload.
  const scan = isScannable(path, contentType) ? new ScanSession() : null;
  let put: Awaited<ReturnType<BlobStore['put']>>;
  try {
    put = await deps.blobs.put(scan ? scanning(req.body, scan) : req.body, {
      expectedSize: size,
      expectedHash,
    });
  } catch (err) {
    if (err instanceof BlobSizeMismatchError) {
      if ((await fileRow()).hash) throw alreadyStored();
      throw invalid(
        `The body does not have the ${size} bytes the manifest gives for "${path}"; nothing was kept.`,
      );
    }
    if (err instanceof BlobHashMismatchError) {
      if ((await fileRow()).hash) throw alreadyStored();
      throw new ApiError(
        'INVALID_HASH',
        `The bytes of "${path}" do not hash to the manifest hash; nothing was kept.`,
      );
    }
    throw err;
  }
  const now = deps.clock.now();
  const stored = await recordUpload(
    deps.db,
    target,
    { hash: put.hash, size: put.size, now },
    scan ? scanRecord(put.hash, await scan.finish(), now) : undefined,
  );
  // Not recorded: a retry of stored bytes, a concurrent upload to this address that stored its bytes
  // first (ours are a retry only if they match), or a version no longer pending. A hash once set stays.
  if (!stored && (known?.hash ?? (await pendingFile(deps, target)).hash) !== put.hash) throw alreadyStored();
  return { path, size: put.size, hash: put.hash, stored };
}

/** The file an upload address names, on a version still pending (400 otherwise). */
async function pendingFile(deps: UploadDeps, target: UploadTarget): Promise<VersionFileRow> {
  const file = await uploadTarget(deps.db.kysely, target.versionId, target.path);
  if (!file) throw invalid('This upload address belongs to a version that was replaced.');
  if (file.status !== 'pending') {
    throw invalid('This upload address belongs to a version that is already finalized or was replaced.');
  }
  return file;
}

/** Passes the body through, feeding each chunk to the scan first (a body error or early stop ends both). */
async function* scanning(body: AsyncIterable<Uint8Array | string>, scan: ScanSession) {
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    await scan.push(bytes);
    yield bytes;
  }
}
