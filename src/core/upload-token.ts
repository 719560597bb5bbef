// Upload addresses: `{base_url}/api/v1/_upload/<encoded storage key>?token=&ct=&exp=` where the token
// is an HMAC over (version, path, content type, expiry). Signed, not remembered: they survive restarts.

import { hmacBase64Url, safeEqual } from './secrets.js';

export const UPLOAD_URL_TTL_S = 3600;
export const UPLOAD_PATH_PREFIX = '/api/v1/_upload/';

export interface UploadTarget {
  versionId: string;
  path: string;
  contentType: string;
  /** Unix seconds after which the address is dead. */
  expiresAtS: number;
}

const signature = (key: Buffer, t: UploadTarget) =>
  hmacBase64Url(key, `upload\n${t.versionId}\n${t.path}\n${t.contentType}\n${t.expiresAtS}`);

/** The storage key names the version and the path: `<versionId>/<path>`, percent-encoded as one segment. */
export function uploadUrl(baseUrl: string, key: Buffer, t: UploadTarget): string {
  const storageKey = encodeURIComponent(`${t.versionId}/${t.path}`);
  const query = new URLSearchParams({
    token: signature(key, t),
    ct: t.contentType,
    exp: String(t.expiresAtS),
  });
  return `${baseUrl}${UPLOAD_PATH_PREFIX}${storageKey}?${query.toString()}`;
}

export type UploadCheck =
  | { ok: true; target: UploadTarget }
  | { ok: false; reason: 'malformed' | 'bad-token' | 'expired' };

/** Verifies an upload address (constant-time token comparison) against the clock. */
export function checkUploadAddress(
  key: Buffer,
  encodedStorageKey: string,
  query: { token?: string; ct?: string; exp?: string },
  nowMs: number,
): UploadCheck {
  let storageKey: string;
  try {
    storageKey = decodeURIComponent(encodedStorageKey);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const slash = storageKey.indexOf('/');
  const { token, ct, exp } = query;
  if (slash <= 0 || !token || !ct || !exp || !/^\d{1,12}$/.test(exp))
    return { ok: false, reason: 'malformed' };
  const target: UploadTarget = {
    versionId: storageKey.slice(0, slash),
    path: storageKey.slice(slash + 1),
    contentType: ct,
    expiresAtS: Number(exp),
  };
  if (!safeEqual(signature(key, target), token)) return { ok: false, reason: 'bad-token' };
  if (target.expiresAtS * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, target };
}
