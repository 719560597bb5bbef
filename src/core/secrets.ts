// Server secrets: the master key (SECRETS_KEY, or generated once into DATA_DIR with mode 0600) and the
// purpose-bound sub-keys derived from it with HKDF, plus the hashing helpers for stored secrets.

import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../store/data-dir.js';

export const SECRETS_KEY_BYTES = 32;
const SECRETS_KEY_FILE = 'secrets.key';

export interface ServerKeys {
  /** Keys the HMAC of stored sign-in codes (a leaked table gives no offline guessing). */
  loginCode: Buffer;
  /** Signs upload addresses (`token` query parameter). */
  uploadToken: Buffer;
  /** Signs password-gate cookies. */
  siteCookie: Buffer;
  /** AES-256-GCM key of site variables. */
  variables: Buffer;
  /** Signs billing portal links (`/billing/portal?token=`). */
  billingPortal: Buffer;
  /** Keys the CSRF tokens of the web pages' forms. */
  csrf: Buffer;
  /** Derives the test provider's checkout link tokens from the subscription id (only their hash is stored). */
  testCheckout: Buffer;
  /** AES-256-GCM key of the private keys of certificates and the ACME account (core/certificates.ts). */
  tlsKeys: Buffer;
  /** AES-256-GCM key of webhook endpoints' signing secrets (core/webhooks.ts). */
  webhooks: Buffer;
}

/** Reads `DATA_DIR/secrets.key` or creates it (32 random bytes, base64, mode 0600). */
export function loadOrCreateSecretsKey(dataDir: string): Buffer {
  const file = join(dataDir, SECRETS_KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== SECRETS_KEY_BYTES)
      throw new Error(`${file}: expected ${SECRETS_KEY_BYTES} bytes of base64`);
    return key;
  }
  makePrivateDir(dataDir);
  const key = randomBytes(SECRETS_KEY_BYTES);
  // 'wx' fails if another process created it meanwhile; then read theirs.
  try {
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    chmodSync(file, PRIVATE_FILE_MODE);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateSecretsKey(dataDir);
    throw err;
  }
}

export function deriveKeys(master: Buffer): ServerKeys {
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `slipway:${purpose}`, 32));
  return {
    loginCode: derive('login-code'),
    uploadToken: derive('upload-token'),
    siteCookie: derive('site-cookie'),
    variables: derive('variables'),
    billingPortal: derive('billing-portal'),
    csrf: derive('csrf'),
    testCheckout: derive('test-checkout'),
    tlsKeys: derive('tls-keys'),
    webhooks: derive('webhooks'),
  };
}

export const sha256Hex = (value: string | Buffer): string => createHash('sha256').update(value).digest('hex');

export const hmacHex = (key: Buffer, value: string): string =>
  createHmac('sha256', key).update(value).digest('hex');

export const hmacBase64Url = (key: Buffer, value: string): string =>
  createHmac('sha256', key).update(value).digest('base64url');

/** Constant-time comparison of two strings (false for different lengths without leaking where). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** Random identifier for rows (accounts, versions): 128 bits, URL-safe. */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(16).toString('base64url')}`;
