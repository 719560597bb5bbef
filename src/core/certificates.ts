// Certificates on demand (CONTRACT "HTTPS"): which name may get one (the TLS ask's rule: a live host, or
// the BASE_URL host), where they live (the database, keys sealed with a sub-key of SECRETS_KEY, so every
// node serves them), who asks the CA (the node holding the name's lease; the others wait for its row),
// how failures back off, and renewal 30 days before expiry (the sweeper). The TLS listener
// (serve/tls/listener.ts) asks `certificateForHandshake` for a name no file covers.

import { createCipheriv, createDecipheriv, randomBytes, X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../shared/clock.js';
import type { ChangeBus } from '../shared/events.js';
import type { AcmeCa, PublishedChallenge } from '../store/acme/client.js';
import type { Db } from '../store/db/db.js';
import {
  certificatesDue,
  deleteAcmeChallenge,
  failedIssuesDue,
  findAcmeAccountKey,
  findAcmeChallenge,
  findTlsCertificate,
  insertAcmeAccountKey,
  insertAcmeChallenge,
  markDomainCertified,
  recordDomainTlsError,
  recordTlsFailure,
  storeTlsCertificate,
} from '../store/db/tables/tls-certificate.js';
import type { Lease } from '../store/lease/types.js';
import { type HostConfig, isLiveHost, normalizeHostname, parseHost, resolveHost } from './hosts.js';
import type { WebhookEvents } from './webhooks.js';

/** Renewal starts this long before a certificate ends (Let's Encrypt's certificates last 90 days). */
export const RENEW_BEFORE_MS = 30 * 24 * 3_600_000;
/** A handshake waits at most this long for a certificate being issued, then fails (the order goes on). */
export const HANDSHAKE_WAIT_MS = 20_000;
/** First retry after a failed order; each next waits twice as long, up to BACKOFF_MAX_MS. */
export const BACKOFF_BASE_MS = 60_000;
export const BACKOFF_MAX_MS = 24 * 3_600_000;
/**
 * New orders one node places per rolling hour. Let's Encrypt allows 300 new orders per account per 3 h,
 * 50 certificates per registered domain per week and 5 failed validations per name per hour: with the
 * backoff above a failing name stays under the last, and this cap keeps a node under the first.
 */
export const ORDERS_PER_HOUR = 60;
/** The lease of one name's order: longer than an order takes (each CA request times out at 30 s). */
const ORDER_LEASE_MS = 180_000;
const POLL_MS = 250;
/** HTTP-01 tokens are base64url (RFC 8555 §8.1): anything else is never looked up. */
const TOKEN_RE = /^[A-Za-z0-9_-]{16,128}$/;
/** ACME HTTP-01 path on the plain port (RFC 8555 §8.3). */
export const ACME_CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

export interface CertificateDeps {
  db: Db;
  clock: Clock;
  config: HostConfig & { baseHost: string };
  changes: ChangeBus;
  lease: Lease;
  logger: Logger;
  /** AES-256-GCM key sealing private keys at rest (`tls-keys` sub-key of SECRETS_KEY). */
  sealKey: Buffer;
  ca: AcmeCa;
  directoryUrl: string;
  /** Replaces HANDSHAKE_WAIT_MS (tests). */
  handshakeWaitMs?: number;
  /** Reports `domain.certificate_active` (webhooks). */
  events?: WebhookEvents;
}

/** Marks a domain's certificate served; the first time, its owner's webhooks hear of it. */
async function certified(
  deps: { db: Db; clock: Clock; events?: WebhookEvents | undefined },
  name: string,
  now: number,
): Promise<void> {
  const account = await markDomainCertified(deps.db.kysely, name, now);
  if (account !== undefined) {
    await deps.events?.emit(account, { type: 'domain.certificate_active', data: { domain: name } });
  }
}

/** What a handshake for a name no file covers is answered with. */
export type HandshakeAnswer =
  | { kind: 'certificate'; certPem: string; keyPem: string; notAfter: number }
  /** The CA's TLS-ALPN-01 validation connection for a name being issued. */
  | { kind: 'challenge'; certPem: string; keyPem: string };

/**
 * A name was served from the certificate files: if it is an active custom domain, its sslStatus is
 * `active` (the files cover it). Errors are logged, never thrown (it runs beside a handshake).
 */
export function markServedFromFiles(
  deps: { db: Db; clock: Clock; config: HostConfig; logger: Logger; events?: WebhookEvents },
  name: string,
): void {
  if (parseHost(name, deps.config.siteHost)?.kind !== 'domain') return;
  certified(deps, name, deps.clock.now()).catch((err: unknown) =>
    deps.logger.warn({ err, name }, 'marking a domain served from the certificate files failed'),
  );
}

export class CertificateUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateUnavailable';
  }
}

/** Per node: orders in flight by name (handshakes of one name join one order), and the hourly cap. */
export class CertificateIssuer {
  private readonly inFlight = new Map<string, Promise<HandshakeAnswer>>();
  private readonly orderTimes: number[] = [];
  /** Orders placed with the CA by this node, and challenges published by kind (tests count them). */
  ordersPlaced = 0;
  readonly challengesPublished = { 'http-01': 0, 'tls-alpn-01': 0 };

  constructor(readonly deps: CertificateDeps) {}

  /**
   * The answer for a handshake naming `servername`: a pending TLS-ALPN-01 challenge, the stored
   * certificate, or a new one if the name may have one (waiting at most HANDSHAKE_WAIT_MS). Null when the
   * name may not have a certificate (nothing is asked of the CA); rejects when none is ready in time.
   */
  async certificateForHandshake(servername: string): Promise<HandshakeAnswer | null> {
    const normalized = normalizeHostname(servername);
    if (!('hostname' in normalized)) return null;
    const name = normalized.hostname;
    const challenge = await findAcmeChallenge(this.deps.db.kysely, `alpn:${name}`);
    if (challenge !== undefined && challenge.key_pem !== null) {
      return { kind: 'challenge', certPem: challenge.value, keyPem: challenge.key_pem };
    }
    // Allowed first, also for a stored certificate: a removed domain or deleted site gets none.
    if (!(await this.allowed(name))) return null;
    const stored = await this.stored(name);
    if (stored !== null) return stored;
    const row = await findTlsCertificate(this.deps.db.kysely, name);
    if (row?.next_attempt_at != null && row.next_attempt_at > this.deps.clock.now()) {
      throw new CertificateUnavailable(`${name}: the last order failed; next attempt after backoff`);
    }
    return withTimeout(this.issue(name), this.deps.handshakeWaitMs ?? HANDSHAKE_WAIT_MS, name);
  }

  /** May `name` have a certificate: the BASE_URL host, or a host the TLS ask answers 200 for. */
  async allowed(name: string): Promise<boolean> {
    if (name === this.deps.config.baseHost) return true;
    return isLiveHost(await resolveHost(this.deps, name));
  }

  /** The stored, unexpired certificate of `name`, or null. */
  async stored(name: string): Promise<Extract<HandshakeAnswer, { kind: 'certificate' }> | null> {
    const row = await findTlsCertificate(this.deps.db.kysely, name);
    if (row?.cert_pem == null || row.key_sealed == null || row.not_after == null) return null;
    if (row.not_after <= this.deps.clock.now()) return null;
    const keyPem = unseal(this.deps.sealKey, name, row.key_sealed);
    if (parseHost(name, this.deps.config.siteHost)?.kind === 'domain') {
      await certified(this.deps, name, this.deps.clock.now());
    }
    return { kind: 'certificate', certPem: row.cert_pem, keyPem, notAfter: row.not_after };
  }

  /** One order for `name` at a time on this node; across nodes, the lease decides who orders. */
  issue(name: string): Promise<HandshakeAnswer> {
    let running = this.inFlight.get(name);
    if (running === undefined) {
      running = this.order(name).finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, running);
    }
    return running;
  }

  private async order(name: string): Promise<HandshakeAnswer> {
    const { db, lease, clock, logger } = this.deps;
    const leaseName = `acme:${name}`;
    if (!(await lease.tryAcquire(leaseName, ORDER_LEASE_MS))) return this.awaitOtherNode(name);
    try {
      // Another node may have finished between our look and the lease.
      const before = await findTlsCertificate(db.kysely, name);
      if (before?.issued_at != null && before.issued_at > clock.now() - 60_000) {
        const stored = await this.stored(name);
        if (stored !== null) return stored;
      }
      this.takeOrderSlot(name);
      this.ordersPlaced++;
      logger.info({ name }, 'ordering a certificate');
      const accountKey = await this.accountKey();
      const issued = await this.deps.ca.issue(name, accountKey, {
        publish: (c) => this.publish(c),
        withdraw: (c) => this.withdraw(c),
      });
      const notAfter = Date.parse(new X509Certificate(issued.certPem).validTo);
      const now = clock.now();
      await storeTlsCertificate(db.kysely, {
        name,
        cert_pem: issued.certPem,
        key_sealed: seal(this.deps.sealKey, name, issued.keyPem),
        not_after: notAfter,
        issued_at: now,
      });
      if (parseHost(name, this.deps.config.siteHost)?.kind === 'domain') {
        await certified(this.deps, name, now);
      }
      // Every node drops what it cached for the name (an old certificate after renewal).
      await this.deps.changes.publish({ kind: 'host', host: name });
      logger.info({ name, notAfter: new Date(notAfter).toISOString() }, 'certificate issued');
      return { kind: 'certificate', certPem: issued.certPem, keyPem: issued.keyPem, notAfter };
    } catch (err) {
      await this.recordFailure(name, err);
      throw err instanceof CertificateUnavailable
        ? err
        : new CertificateUnavailable(`${name}: ${errorText(err)}`);
    } finally {
      await lease.release(leaseName).catch(() => {});
    }
  }

  /** Another node holds the name's lease: wait (bounded by the handshake's own wait) for its row. */
  private async awaitOtherNode(name: string): Promise<HandshakeAnswer> {
    const started = Date.now();
    const startedAt = (await findTlsCertificate(this.deps.db.kysely, name))?.updated_at ?? 0;
    while (Date.now() - started < (this.deps.handshakeWaitMs ?? HANDSHAKE_WAIT_MS)) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const row = await findTlsCertificate(this.deps.db.kysely, name);
      if (row !== undefined && row.updated_at > startedAt) {
        const stored = await this.stored(name);
        if (stored !== null) return stored;
        if (row.last_error !== null) throw new CertificateUnavailable(`${name}: ${row.last_error}`);
      }
    }
    throw new CertificateUnavailable(`${name}: another node is still ordering its certificate`);
  }

  private takeOrderSlot(name: string): void {
    const now = Date.now();
    while (this.orderTimes.length > 0 && this.orderTimes[0]! <= now - 3_600_000) this.orderTimes.shift();
    if (this.orderTimes.length >= ORDERS_PER_HOUR) {
      throw new CertificateUnavailable(`${name}: ${ORDERS_PER_HOUR} orders this hour on this node; waiting`);
    }
    this.orderTimes.push(now);
  }

  private async recordFailure(name: string, err: unknown): Promise<void> {
    const { db, clock, logger } = this.deps;
    const row = await findTlsCertificate(db.kysely, name).catch(() => undefined);
    const failures = (row?.failures ?? 0) + 1;
    const waitMs = Math.min(BACKOFF_BASE_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
    const message = errorText(err).slice(0, 500);
    const now = clock.now();
    logger.warn({ name, failures, retryInS: waitMs / 1000, err: message }, 'certificate order failed');
    try {
      await recordTlsFailure(db.kysely, name, message, failures, now + waitMs, now);
      if (parseHost(name, this.deps.config.siteHost)?.kind === 'domain') {
        await recordDomainTlsError(db.kysely, name, message);
      }
    } catch (dbErr) {
      logger.error({ err: dbErr, name }, 'recording a failed certificate order failed');
    }
  }

  private async accountKey(): Promise<string> {
    const { db, clock, directoryUrl, sealKey } = this.deps;
    const found = await findAcmeAccountKey(db.kysely, directoryUrl);
    if (found !== undefined) return unseal(sealKey, directoryUrl, found);
    const created = await this.deps.ca.createAccountKey();
    await insertAcmeAccountKey(db.kysely, directoryUrl, seal(sealKey, directoryUrl, created), clock.now());
    // A node that raced us stored its key first: use the stored one.
    return unseal(sealKey, directoryUrl, (await findAcmeAccountKey(db.kysely, directoryUrl))!);
  }

  private async publish(c: PublishedChallenge): Promise<void> {
    const now = this.deps.clock.now();
    this.challengesPublished[c.kind]++;
    if (c.kind === 'http-01') {
      await insertAcmeChallenge(this.deps.db.kysely, {
        id: c.token,
        name: c.name,
        kind: c.kind,
        value: c.keyAuthorization,
        key_pem: null,
        created_at: now,
      });
    } else {
      await insertAcmeChallenge(this.deps.db.kysely, {
        id: `alpn:${c.name}`,
        name: c.name,
        kind: c.kind,
        value: c.certPem,
        key_pem: c.keyPem,
        created_at: now,
      });
    }
  }

  private async withdraw(c: PublishedChallenge): Promise<void> {
    await deleteAcmeChallenge(this.deps.db.kysely, c.kind === 'http-01' ? c.token : `alpn:${c.name}`);
  }

  /** The key authorization of a pending HTTP-01 challenge (answered on the plain port), or null. */
  async httpChallenge(token: string): Promise<string | null> {
    if (!TOKEN_RE.test(token)) return null;
    const row = await findAcmeChallenge(this.deps.db.kysely, token);
    return row?.kind === 'http-01' ? row.value : null;
  }

  /**
   * The sweeper's share: renews certificates that end within RENEW_BEFORE_MS and retries names whose
   * first order failed (each when its backoff has passed, while the name may still have one).
   */
  async renewDue(limit = 20): Promise<{ renewed: number; failed: number }> {
    const now = this.deps.clock.now();
    const due = [
      ...(await certificatesDue(this.deps.db.kysely, now + RENEW_BEFORE_MS, now, limit)).map((r) => r.name),
      ...(await failedIssuesDue(this.deps.db.kysely, now, limit)).map((r) => r.name),
    ];
    let renewed = 0;
    let failed = 0;
    for (const name of due) {
      if (!(await this.allowed(name))) continue;
      try {
        await this.issue(name);
        renewed++;
      } catch {
        failed++;
      }
    }
    return { renewed, failed };
  }
}

function withTimeout<T>(work: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new CertificateUnavailable(`${name}: no certificate within ${ms / 1000} s`)),
      ms,
    );
  });
  // The order goes on after the handshake gave up; its failure is recorded there, not unhandled here.
  work.catch(() => {});
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** AES-256-GCM, bound to `name` (a sealed key moved to another row does not open). */
export function seal(key: Buffer, name: string, plain: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(`slipway:tls:${name}`));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

export function unseal(key: Buffer, name: string, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(`slipway:tls:${name}`));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}
