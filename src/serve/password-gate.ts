// Password gate of protected sites: signed session cookies, the form post, and the wrong-guess limit.
//
// Protocol: every path of a protected site answers 401 with the password form until the request carries a
// valid session cookie. The form posts (`application/x-www-form-urlencoded`, field `password`) to the same
// address it was shown at, so no path of the site is reserved; the right password answers 303 back to that
// address with the cookie set. Any POST to a protected site is a password submission.
//
// Cookie `slipway_pw_<slug>` = `<expiry ms base36>.<HMAC-SHA256(siteCookie key, slug | password
// fingerprint | expiry) base64url>`: host-only (no Domain), Path=/, HttpOnly, SameSite=Lax, Secure on
// https. Binding the slug means a cookie of site A never opens site B; binding the fingerprint of the
// stored scrypt hash means changing or removing the password ends every session.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type BodyPace, pacedBody } from '../core/body-pace.js';
import type { RateStore } from '../store/rate/types.js';

export const PASSWORD_COOKIE_PREFIX = 'slipway_pw_';
/** How long a session lasts after the right password. */
export const PASSWORD_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Password submissions allowed per client (its limitKey) and site per window; the next ones answer 429. */
export const PASSWORD_ATTEMPTS_PER_WINDOW = 10;
export const PASSWORD_ATTEMPT_WINDOW_MS = 15 * 60 * 1000;
/** Largest form body read. */
export const PASSWORD_FORM_MAX_BYTES = 4096;

export function passwordCookieName(slug: string): string {
  return PASSWORD_COOKIE_PREFIX + slug;
}

function mac(key: Buffer, slug: string, fingerprint: string, expiresAtMs: number): string {
  return createHmac('sha256', key).update(`${slug}\n${fingerprint}\n${expiresAtMs}`).digest('base64url');
}

/** The cookie value of a new session. */
export function signSession(key: Buffer, slug: string, fingerprint: string, expiresAtMs: number): string {
  return `${expiresAtMs.toString(36)}.${mac(key, slug, fingerprint, expiresAtMs)}`;
}

/**
 * The expiry (epoch ms) a session cookie value was signed with for this site and password, or null when
 * the value is malformed or its signature does not match. The caller compares the expiry with the clock.
 */
export function verifySession(key: Buffer, slug: string, fingerprint: string, value: string): number | null {
  const dot = value.indexOf('.');
  if (dot <= 0 || dot > 12) return null;
  const expiresAtMs = Number.parseInt(value.slice(0, dot), 36);
  if (!Number.isSafeInteger(expiresAtMs) || expiresAtMs.toString(36) !== value.slice(0, dot)) return null;
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(mac(key, slug, fingerprint, expiresAtMs));
  return given.length === expected.length && timingSafeEqual(given, expected) ? expiresAtMs : null;
}

export interface AttemptDecision {
  allowed: boolean;
  /** Seconds until the window ends (Retry-After of a 429). */
  retryAfterS: number;
}

/**
 * Counts one password submission of `client` (core/client-address.ts's limitKey) on `slug` in the current
 * fixed window. Counted before the password is checked, so parallel guesses cannot get past the limit.
 */
export async function countPasswordAttempt(
  rate: RateStore,
  slug: string,
  client: string,
  nowMs: number,
): Promise<AttemptDecision> {
  const windowStart = Math.floor(nowMs / PASSWORD_ATTEMPT_WINDOW_MS) * PASSWORD_ATTEMPT_WINDOW_MS;
  const windowEnd = windowStart + PASSWORD_ATTEMPT_WINDOW_MS;
  const count = await rate.increment(`site-password:${slug}:${client}:${windowStart}`, windowEnd);
  return {
    allowed: count <= PASSWORD_ATTEMPTS_PER_WINDOW,
    retryAfterS: Math.max(1, Math.ceil((windowEnd - nowMs) / 1000)),
  };
}

export type FormResult = { kind: 'form'; password: string } | { kind: 'too-large' } | { kind: 'unsupported' };

/**
 * Reads the posted password form (at most PASSWORD_FORM_MAX_BYTES) under the pace rule: throws
 * BodyTooSlowError for a trickling body. Never logs the body.
 */
export async function readPasswordForm(req: IncomingMessage, pace: BodyPace): Promise<FormResult> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return { kind: 'unsupported' };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > PASSWORD_FORM_MAX_BYTES) return { kind: 'too-large' };
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of pacedBody(req, pace).read()) {
    length += chunk.byteLength;
    if (length > PASSWORD_FORM_MAX_BYTES) return { kind: 'too-large' };
    chunks.push(chunk);
  }
  const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  return { kind: 'form', password: form.get('password') ?? '' };
}

/**
 * Where to send the browser after the right password: the address the form was posted to, when it is a
 * plain origin-form path. Anything that a browser could read as another host (`//evil`, `/\evil`) or
 * that is not printable ASCII becomes `/`.
 */
export function returnLocation(url: string | undefined): string {
  if (url === undefined || url.charCodeAt(0) !== 0x2f) return '/';
  const second = url.charCodeAt(1);
  if (second === 0x2f || second === 0x5c) return '/';
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return '/';
  }
  return url;
}
