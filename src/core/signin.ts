// Passwordless sign-in: emailed one-time codes that yield an API key (spec "Sign-in", "Authentication";
// CONTRACT "Sign-in mail"). Codes and keys are stored only as hashes. The sign-in limits live here, so
// the API, the web form and the CLI (through the API) share them: codes mailed per address and asked for
// per client IP, code checks per client IP (hour-aligned windows of the rate store), 5 tries per code.

import { randomInt } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { Db } from '../store/db/db.js';
import { isUniqueViolation } from '../store/db/db.js';
import {
  type AccountRow,
  findAccountByEmail,
  findAccountByKeyHash,
  insertAccount,
  setApiKeyHash,
} from '../store/db/tables/account.js';
import { consumeLoginCode, putLoginCode, spendLoginAttempt } from '../store/db/tables/login-code.js';
import { deleteAccountSessions } from '../store/db/tables/session.js';
import type { Mailer } from '../store/mail/types.js';
import type { RateStore } from '../store/rate/types.js';
import { type AuditActor, type AuditEntryInput, keyActor, recordAudit } from './audit.js';
import { limitKey } from './client-address.js';
import { ApiError, invalid } from './errors.js';
import { refuseBlockedEmail, refuseSuspendedEmail } from './operators.js';
import { effectivePlan, withEffectivePlan } from './plans.js';
import { checkRateLimit } from './rate-limit.js';
import { hmacHex, newId, randomHex, sha256Hex } from './secrets.js';

/** No I, O, 0, 1: nothing a person can misread (CONTRACT). */
export const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const CODE_TTL_S = 600;
export const MAX_CODE_ATTEMPTS = 5;
export const API_KEY_PREFIX = 'svc_live_';
const API_KEY_RE = /^svc_live_[0-9a-f]{32}$/;
const CODE_RE = /^[A-Z0-9]{4}-[A-Z0-9]{4}$/;
const MAX_EMAIL_CHARS = 254;
// Pragmatic address check: one @, a dotted domain, no spaces or control characters.
const EMAIL_RE = /^[^\s@"<>()[\]\\,;:]+@(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Per hour-aligned window (config `RATE_LIMIT_SIGNIN_*`). */
export interface SignInLimits {
  /** Codes mailed to one address: nobody can mail-bomb an address, through any door. */
  codesPerEmail: number;
  /** Codes asked for from one client IP, whatever the addresses. */
  codesPerIp: number;
  /** Codes checked from one client IP, whatever the addresses (each code also has its own 5 tries). */
  checksPerIp: number;
}

export interface SignInDeps {
  db: Db;
  mailer: Mailer;
  clock: Clock;
  codeKey: Buffer;
  /** Shown in the mail, e.g. `Slipway`. */
  serviceName: string;
  rate: RateStore;
  limits: SignInLimits;
}

/** Who is asking: the client address the limits count against. */
export interface SignInClient {
  ip: string;
}

/**
 * Counts one sign-in step against `subject`'s window; 429 RATE_LIMITED (with Retry-After) past `limit`.
 * A store that cannot be reached throws its own error, which the HTTP layer answers 503 (fail closed).
 */
async function spendSignInWindow(
  deps: SignInDeps,
  subject: string,
  limit: number,
  refusal: string,
): Promise<void> {
  const now = deps.clock.now();
  const decision = await checkRateLimit(deps.rate, subject, limit, now);
  if (decision.allowed) return;
  const after = new Date(decision.resetAtS * 1000).toISOString();
  throw new ApiError('RATE_LIMITED', `${refusal}; try again later (after ${after}).`, {
    headers: { 'Retry-After': String(decision.retryAfterS) },
  });
}

export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > MAX_EMAIL_CHARS || !EMAIL_RE.test(email)) {
    throw invalid(`"${raw.slice(0, 100)}" is not a valid email address`, {
      hint: 'Send {"email": "you@example.com"}.',
    });
  }
  return email;
}

export function generateCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) {
    if (i === 4) code += '-';
    code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  }
  return code;
}

const codeHash = (key: Buffer, email: string, code: string) => hmacHex(key, `${email}\n${code}`);

export const hashApiKey = (key: string): string => sha256Hex(key);

/**
 * Issues a fresh code for the email (replacing any earlier one) and mails it; 429 when the client or the
 * address has had its codes for this hour.
 */
export async function requestCode(
  deps: SignInDeps,
  rawEmail: string,
  client: SignInClient,
): Promise<{ email: string; expiresInSeconds: number }> {
  const email = normalizeEmail(rawEmail);
  await spendSignInWindow(
    deps,
    `signin-code:ip:${limitKey(client.ip)}`,
    deps.limits.codesPerIp,
    `At most ${deps.limits.codesPerIp} sign-in codes per hour can be asked for from one IP address`,
  );
  // The address is hashed so the shared counter store holds no email addresses.
  await spendSignInWindow(
    deps,
    `signin-code:email:${sha256Hex(email)}`,
    deps.limits.codesPerEmail,
    `At most ${deps.limits.codesPerEmail} sign-in codes per hour are sent to one email address`,
  );
  await refuseBlockedEmail(deps.db, email);
  const code = generateCode();
  const now = deps.clock.now();
  await putLoginCode(deps.db.kysely, {
    email,
    code_hash: codeHash(deps.codeKey, email, code),
    expires_at: now + CODE_TTL_S * 1000,
    attempts: 0,
    created_at: now,
  });
  try {
    await deps.mailer.send({
      to: email,
      subject: `${deps.serviceName} sign-in code: ${code}`,
      text:
        `Your ${deps.serviceName} sign-in code is ${code}\n\n` +
        `It expires in ${CODE_TTL_S / 60} minutes and works once. ` +
        'If you did not ask for it, ignore this mail.\n',
    });
  } catch (err) {
    throw new ApiError('UPSTREAM_ERROR', 'Could not send the sign-in email; try again in a minute.', {
      cause: err,
    });
  }
  return { email, expiresInSeconds: CODE_TTL_S };
}

export interface VerifiedSignIn {
  apiKey: string;
  email: string;
  plan: AccountRow['plan'];
  isNewUser: boolean;
}

const WRONG_CODE = 'Wrong or expired code; request a new one if it has expired or after 5 wrong tries.';

/**
 * Checks a sign-in code (single use, 5 tries, 600 s) and spends it; 400 when wrong or expired, 429 when
 * the client has had its checks for this hour (a refused check spends none of the code's tries).
 */
async function spendCode(
  deps: SignInDeps,
  rawEmail: string,
  rawCode: string,
  client: SignInClient,
): Promise<{ email: string; now: number }> {
  const email = normalizeEmail(rawEmail);
  const code = rawCode.trim().toUpperCase();
  if (!CODE_RE.test(code)) throw invalid('The code must look like XXXX-XXXX.');
  await spendSignInWindow(
    deps,
    `signin-check:ip:${limitKey(client.ip)}`,
    deps.limits.checksPerIp,
    `At most ${deps.limits.checksPerIp} sign-in codes per hour can be checked from one IP address`,
  );
  // A block made after the code was mailed still applies.
  await refuseBlockedEmail(deps.db, email);
  const now = deps.clock.now();
  const stored = await spendLoginAttempt(deps.db.kysely, email, now, MAX_CODE_ATTEMPTS);
  const given = codeHash(deps.codeKey, email, code);
  // The HMAC comparison is constant-time by construction: both sides are fixed-length digests.
  if (stored === undefined || stored !== given) throw invalid(WRONG_CODE);
  if (!(await consumeLoginCode(deps.db.kysely, email, given))) throw invalid(WRONG_CODE);
  // Told only to whoever holds the mailbox (the code is right): a suspended account gets no new key or session.
  await refuseSuspendedEmail(deps.db, email);
  return { email, now };
}

/**
 * Checks the code (single use, 5 tries, 600 s) and issues a new API key, invalidating the old one and
 * ending the account's browser sessions, as the dashboard's regeneration does.
 */
export async function verifyCode(
  deps: SignInDeps,
  rawEmail: string,
  rawCode: string,
  client: SignInClient,
): Promise<VerifiedSignIn> {
  const { email, now } = await spendCode(deps, rawEmail, rawCode, client);

  const apiKey = `${API_KEY_PREFIX}${randomHex(16)}`;
  const keyHash = hashApiKey(apiKey);
  // The sign-in has no caller yet: its entries name the key it issues (a fingerprint, never the key).
  const issued = keyActor({ api_key_hash: keyHash });
  const found = await findOrCreateAccount(deps, email, keyHash, now, issued);
  if (!found.existing) return { apiKey, email, plan: 'free', isNewUser: true };
  await replaceApiKey(deps.db, found.existing.id, keyHash, now, undefined, {
    action: 'key.issue',
    actor: issued,
  });
  return { apiKey, email, plan: effectivePlan(found.existing, now), isNewUser: false };
}

/**
 * Puts a new key on the account (the old one dead at once) and ends every browser session of the
 * account but `keepSession`: a new key means the account may be taken back from whoever held the old
 * key, and a session opened by them must not outlive it.
 */
async function replaceApiKey(
  db: Db,
  accountId: string,
  keyHash: string,
  now: number,
  keepSession: string | undefined,
  audit: Pick<AuditEntryInput, 'action' | 'actor'>,
): Promise<void> {
  await db.transaction(async (trx) => {
    await setApiKeyHash(trx, accountId, keyHash, now);
    await recordAudit(trx, {
      ...audit,
      accountId,
      target: accountId,
      details: { fingerprint: keyActor({ api_key_hash: keyHash }).id },
      at: now,
    });
    await deleteAccountSessions(
      trx,
      accountId,
      keepSession === undefined ? undefined : sha256Hex(keepSession),
    );
  });
}

/**
 * The account of `email`, or a new free one holding `apiKeyHash` (null: no key yet) when there is none.
 * An account created at the same moment through another code counts as existing.
 */
async function findOrCreateAccount(
  deps: SignInDeps,
  email: string,
  apiKeyHash: string | null,
  now: number,
  actor?: AuditActor,
): Promise<{ existing?: AccountRow }> {
  const existing = await findAccountByEmail(deps.db.kysely, email);
  if (existing) return { existing };
  try {
    await deps.db.transaction(async (trx) => {
      const id = newId('acct');
      await insertAccount(trx, {
        id,
        email,
        plan: 'free',
        handle: null,
        api_key_hash: apiKeyHash,
        created_at: now,
        updated_at: now,
      });
      await recordAudit(trx, {
        accountId: id,
        action: 'account.create',
        target: id,
        details: apiKeyHash ? { fingerprint: keyActor({ api_key_hash: apiKeyHash }).id } : {},
        at: now,
        ...(actor ? { actor } : {}),
      });
    });
    return {};
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const raced = await findAccountByEmail(deps.db.kysely, email);
    if (!raced) throw err;
    return { existing: raced };
  }
}

/**
 * The web sign-in: checks the code exactly as verifyCode does, but issues no API key (the account's key,
 * used by its CLI and scripts, stays valid); a new email gets an account without a key. The caller
 * starts a browser session for the returned account.
 */
export async function verifyCodeForSession(
  deps: SignInDeps,
  rawEmail: string,
  rawCode: string,
  client: SignInClient,
): Promise<AccountRow> {
  const { email, now } = await spendCode(deps, rawEmail, rawCode, client);
  const found = await findOrCreateAccount(deps, email, null, now);
  if (found.existing) return withEffectivePlan(found.existing, now);
  const account = await findAccountByEmail(deps.db.kysely, email);
  if (!account) throw new Error('account vanished after sign-in');
  return account;
}

/**
 * The dashboard's key regeneration: a new API key (shown once by the caller), the old one dead at once,
 * and every other browser session of the account ended (the one asking, `keepSession`, stays).
 */
export async function regenerateApiKey(
  deps: Pick<SignInDeps, 'db' | 'clock'>,
  account: AccountRow,
  keepSession: string,
): Promise<string> {
  const apiKey = `${API_KEY_PREFIX}${randomHex(16)}`;
  await replaceApiKey(deps.db, account.id, hashApiKey(apiKey), deps.clock.now(), keepSession, {
    action: 'key.regenerate',
  });
  return apiKey;
}

/** The account of an `Authorization` header value, or undefined for a missing/malformed/unknown key. */
export async function accountForAuthorization(
  db: Db,
  header: string | undefined,
  now: number,
): Promise<AccountRow | undefined> {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const key = match?.[1];
  if (key === undefined || !API_KEY_RE.test(key)) return undefined;
  const account = await findAccountByKeyHash(db.kysely, hashApiKey(key));
  // A suspended account's key is refused (401), not deleted: lifting the suspension brings it back.
  if (account?.suspended_at != null) return undefined;
  // The plan as of now: a stopped Hobby plan has ended at its paid period's end (core/billing.ts).
  return account && withEffectivePlan(account, now);
}
