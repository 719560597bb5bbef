// Upload addresses: `{base_url}/api/v1/_upload/<encoded storage key>?token=&ct=&exp=[&size=&hash=]` where
// the token is an HMAC over (version, path, content type, expiry[, size, hash]). Signed, not remembered:
// they survive restarts. When the manifest gave the file's hash, the address carries it and the size, so
// an upload learns which bytes to accept without reading the file's row (issue 23: one statement per upload).

import { hmacBase64Url, safeEqual } from './secrets.js';

export const UPLOAD_URL_TTL_S = 3600;
export const UPLOAD_PATH_PREFIX = '/api/v1/_upload/';

export interface UploadTarget {
  versionId: string;
  path: string;
  contentType: string;
  /** Unix seconds after which the address is dead. */
  expiresAtS: number;
  /**
   * The manifest's size and SHA-256 of the file, when the manifest gave the hash. Absent otherwise, and on
   * addresses issued before issue 23 (signed without them), which stay valid until they expire.
   */
  expected?: { size: number; hash: string };
}

const signature = (key: Buffer, t: UploadTarget) =>
  hmacBase64Url(
    key,
    `upload\n${t.versionId}\n${t.path}\n${t.contentType}\n${t.expiresAtS}${
      t.expected ? `\n${t.expected.size}\n${t.expected.hash}` : ''
    }`,
  );

/** The storage key names the version and the path: `<versionId>/<path>`, percent-encoded as one segment. */
export function uploadUrl(baseUrl: string, key: Buffer, t: UploadTarget): string {
  const storageKey = encodeURIComponent(`${t.versionId}/${t.path}`);
  const query = new URLSearchParams({
    token: signature(key, t),
    ct: t.contentType,
    exp: String(t.expiresAtS),
    ...(t.expected && { size: String(t.expected.size), hash: t.expected.hash }),
  });
  return `${baseUrl}${UPLOAD_PATH_PREFIX}${storageKey}?${query.toString()}`;
}

export interface UploadQuery {
  token?: string;
  ct?: string;
  exp?: string;
  size?: string;
  hash?: string;
}

export type UploadCheck =
  | { ok: true; target: UploadTarget }
  | { ok: false; reason: 'malformed' | 'bad-token' | 'expired' };

/** Verifies an upload address (constant-time token comparison) against the clock. */
export function checkUploadAddress(
  key: Buffer,
  encodedStorageKey: string,
  query: UploadQuery,
  nowMs: number,
): UploadCheck {
  let storageKey: string;
  try {
    storageKey = decodeURIComponent(encodedStorageKey);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const slash = storageKey.indexOf('/');
  const { token, ct, exp, size, hash } = query;
  if (slash <= 0 || !token || !ct || !exp || !/^\d{1,12}$/.test(exp))
    return { ok: false, reason: 'malformed' };
  // Both or neither; the size as the manifest allows it (a safe integer), the hash as manifests give it.
  if ((size === undefined) !== (hash === undefined)) return { ok: false, reason: 'malformed' };
  if (size !== undefined && (!/^\d{1,15}$/.test(size) || !/^[0-9a-f]{64}$/.test(hash!)))
    return { ok: false, reason: 'malformed' };
  const target: UploadTarget = {
    versionId: storageKey.slice(0, slash),
    path: storageKey.slice(slash + 1),
    contentType: ct,
    expiresAtS: Number(exp),
    ...(size !== undefined && { expected: { size: Number(size), hash: hash! } }),
  };
  if (!safeEqual(signature(key, target), token)) return { ok: false, reason: 'bad-token' };
  if (target.expiresAtS * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, target };
}
