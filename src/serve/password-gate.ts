// Password gate of protected sites: signed session cookies, the form post, and the wrong-guess limit; the
// gate's whole flow (session check, form, submission) is PasswordGate below, which the site server asks.
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
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { type BodyPace, BodyTooSlowError, pacedBody } from '../core/body-pace.js';
import { verifyPassword } from '../core/password.js';
import { checkRateLimit } from '../core/rate-limit.js';
import type { Clock } from '../shared/clock.js';
import { cookieValues, sessionCookie } from '../shared/cookies.js';
import { ownedString } from '../shared/strings.js';
import type { RateStore } from '../store/rate/types.js';
import { MAX_SESSIONS_PER_SITE, type SiteState } from './catalog.js';
import type { SiteRequestHead, SiteResponse } from './exchange.js';
import {
  type BuiltinPage,
  FORM_TOO_LARGE,
  htmlHeaders,
  passwordFormPage,
  REQUEST_TIMEOUT,
  tooManyAttemptsPage,
  UNSUPPORTED_FORM,
} from './pages.js';

export const PASSWORD_COOKIE_PREFIX = 'slipway_pw_';
/** How long a session lasts after the right password. */
export const PASSWORD_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Password submissions allowed per client (its limitKey) and site per window; the next ones answer 429. */
export const PASSWORD_ATTEMPTS_PER_WINDOW = 10;
export const PASSWORD_ATTEMPT_WINDOW_MS = 15 * 60 * 1000;
/** Largest form body read. */
export const PASSWORD_FORM_MAX_BYTES = 4096;
/** RFC 9110 §11.6.1: a 401 carries a challenge; this scheme makes browsers render the form, not a dialog. */
const PASSWORD_CHALLENGE = 'Form realm="site"';

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

/** What the gate uses (a part of the site server's deps, built once by src/compose.ts). */
export interface PasswordGateDeps {
  clock: Clock;
  /** Counts wrong site passwords per client and site. */
  rate: RateStore;
  /** Signs password-gate cookies. */
  siteCookieKey: Buffer;
  /** How slowly a password form's body may arrive. */
  bodyPace: BodyPace;
  /** `baseUrl`: the service's address, for the form's "Report abuse" link (issue 26). */
  config: { scheme: 'http' | 'https'; baseUrl?: string };
}

/** How the gate answers: the site server's own sends, which count responses for /metrics. */
export interface GateResponder {
  send(res: SiteResponse, status: number, headers: OutgoingHttpHeaders, body?: Buffer): void;
  sendPage(req: SiteRequestHead, res: SiteResponse, page: BuiltinPage): void;
}

/** The gate of protected sites, one per site server: asked by it for every request to a protected site. */
export class PasswordGate {
  constructor(
    private readonly deps: PasswordGateDeps,
    private readonly out: GateResponder,
  ) {}

  /**
   * Whether any cookie of the site's name holds a live session. Every one is tried: another host under the
   * parent SITE_DOMAIN can set a cookie of the same name there, which browsers send first when it is
   * older (RFC 6265 §5.4), and must not lock the site's visitors out by shadowing theirs.
   */
  hasSession(req: SiteRequestHead, state: SiteState): boolean {
    const name = passwordCookieName(state.record!.slug);
    for (const value of cookieValues(req.headers.cookie, name)) {
      if (this.sessionExpiry(state, value) > this.deps.clock.now()) return true;
    }
    return false;
  }

  /** The expiry of the session a cookie value was signed for (remembered per site), or 0 if it is not one. */
  private sessionExpiry(state: SiteState, value: string): number {
    const known = state.sessions.get(value);
    if (known !== undefined) return known;
    const record = state.record!;
    const verified = verifySession(this.deps.siteCookieKey, record.slug, record.passwordFingerprint, value);
    if (verified === null) return 0;
    if (state.sessions.size >= MAX_SESSIONS_PER_SITE) state.sessions.clear();
    // A copy: the value is a slice of its request's head, which the cached site state would keep whole.
    state.sessions.set(ownedString(value), verified);
    return verified;
  }

  /** The password form (401 with a challenge), with `message` above it after a wrong password. */
  sendForm(req: SiteRequestHead, res: SiteResponse, status: number, message: string | null): void {
    const body = Buffer.from(passwordFormPage(message, this.deps.config.baseUrl));
    this.out.send(
      res,
      status,
      {
        ...htmlHeaders(body),
        'WWW-Authenticate': PASSWORD_CHALLENGE,
        // The form must not be framed by another site (clickjacking of the password field).
        'Content-Security-Policy': "frame-ancestors 'none'",
      },
      req.method === 'HEAD' ? undefined : body,
    );
  }

  /**
   * A POST to a protected site: counts the attempt of `client` (core/client-address.ts's limitKey, which
   * the site server reads as the transport) before the password is checked, so parallel guesses cannot get
   * past the limit; reads the form under the pace rule, and on the right password sets the session
   * cookie and sends the browser back where the form was shown.
   */
  async submit(req: IncomingMessage, res: SiteResponse, state: SiteState, client: string): Promise<void> {
    const record = state.record!;
    const now = this.deps.clock.now();
    const attempt = await checkRateLimit(
      this.deps.rate,
      `site-password:${record.slug}:${client}`,
      PASSWORD_ATTEMPTS_PER_WINDOW,
      now,
      PASSWORD_ATTEMPT_WINDOW_MS,
    );
    if (!attempt.allowed) {
      const body = Buffer.from(tooManyAttemptsPage(attempt.retryAfterS));
      this.out.send(
        res,
        429,
        { ...htmlHeaders(body), 'Retry-After': String(attempt.retryAfterS), Connection: 'close' },
        body,
      );
      return;
    }
    let form: FormResult;
    try {
      form = await readPasswordForm(req, this.deps.bodyPace);
    } catch (err) {
      if (!(err instanceof BodyTooSlowError)) throw err;
      this.out.sendPage(req, res, REQUEST_TIMEOUT);
      return;
    }
    if (form.kind === 'too-large') {
      this.out.sendPage(req, res, FORM_TOO_LARGE);
      return;
    }
    if (form.kind === 'unsupported') {
      this.out.sendPage(req, res, UNSUPPORTED_FORM);
      return;
    }
    const right = form.password !== '' && (await verifyPassword(form.password, record.passwordHash!));
    if (!right) {
      this.sendForm(req, res, 401, 'Wrong password. Try again.');
      return;
    }
    const expiresAt = now + PASSWORD_SESSION_TTL_MS;
    const value = signSession(this.deps.siteCookieKey, record.slug, record.passwordFingerprint, expiresAt);
    const cookie = sessionCookie(
      passwordCookieName(record.slug),
      value,
      PASSWORD_SESSION_TTL_MS,
      this.deps.config.scheme === 'https',
    );
    // RFC 9110 §15.4.4: 303 turns the POST into a GET of the page the form was shown on.
    this.out.send(res, 303, {
      Location: returnLocation(req.url),
      'Set-Cookie': cookie,
      'Content-Length': '0',
      'Cache-Control': 'no-store',
    });
  }
}
